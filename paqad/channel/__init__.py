"""The way to the resident service: where it listens, the exchange, asking it, and the typed requests.

Stdlib only and light (every thin client imports it before deciding whether to load anything else):

- :mod:`paqad.channel.paths`: where the service's socket, lock and info file live;
- :mod:`paqad.channel.wire`: the JSON-lines exchange and the compatibility rules;
- :mod:`paqad.channel.client`: asking the service, and starting one;
- :mod:`paqad.channel.calls`: the typed requests (search, hook, agent, git event) and their wire dicts;
- :mod:`paqad.channel.gitevents`: the files the git shims leave their events in.

Which door answers where is decided once, in :mod:`paqad.serve.route`; the service itself is
:mod:`paqad.serve`.
"""
