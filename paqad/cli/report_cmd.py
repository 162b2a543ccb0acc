"""``paqad report``: what the agent did with paqad's context, per host, over the last turns."""

from __future__ import annotations

import click

from paqad.cli.common import AppContext, emit_json
from paqad.hooks import usage


@click.command("report")
@click.option("--last", "last", type=click.IntRange(min=1), default=usage.DEFAULT_LAST, show_default=True, help="Deliveries (and prompt-hook lines) counted.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def report(app: AppContext, last: int, as_json: bool) -> None:
    """What the agent did with paqad's context, per host, over the last N deliveries.

    How the prompts were answered (live, stale, nothing, failed), the passages delivered and the
    share the agent then used (opened, searched for or edited within the turn, read from the
    session transcript the host names), candidate misses (files the agent found and opened that
    paqad ranked but did not deliver, and files it opened that paqad did not rank), and the tokens
    delivered.

    Counts and paths only, from the per-developer uptake record; nothing is sent anywhere. With
    rag_uptake_prior on, it also learns the file prior searches then use from these turns.
    Example: paqad report --last 20 --json
    """
    root = app.root()
    data = usage.report(root, last)
    if app.config().rag_uptake_prior:  # the file prior is learned here, from the same turns
        from paqad.search import uptake_prior  # lazy: only with the prior on

        factors = uptake_prior.learn(usage.file_uptake(root, last))
        uptake_prior.save(root, factors)
        data["file_prior"] = {"files": len(factors), "lifted": sum(1 for _, f in factors if f > 1), "lowered": sum(1 for _, f in factors if f < 1)}
    if as_json:
        emit_json(data)
        return
    hosts = data["hosts"]
    assert isinstance(hosts, dict)
    click.echo(f"paqad report: last {last} deliveries ({data['deliveries']} recorded in {data['record']})")
    if not hosts:
        click.echo("  nothing recorded yet: the report fills as agent hosts' prompt hooks deliver context")
    for name, host in hosts.items():
        click.echo(_host_lines(name, host))
    if data["note"]:
        click.echo(f"  note: {data['note']}")
    prior = data.get("file_prior")
    if isinstance(prior, dict):
        click.echo(f"file prior (rag_uptake_prior): {prior['lifted']} files lifted, {prior['lowered']} lowered, from these turns")


def _host_lines(name: str, host: dict) -> str:
    prompts = host["prompts"]
    said = [f"{name}: {host['deliveries']} deliveries, {host['tokens']:,} tokens delivered"]
    if prompts:
        said.append(f"  prompts: {prompts['live']} live, {prompts['weak']} weak, {prompts['stale']} stale, {prompts['nothing']} nothing, {prompts['failed']} failed")
    if host["measured"]:
        share = f"{host['share_used']:.0%}" if host["share_used"] is not None else "-"
        said.append(
            f"  used: {host['used']} of {host['passages_measured']} passages ({share}): {host['opened']} opened, "
            f"{host['searched']} searched for, {host['edited']} edited; {host['measured']} of {host['deliveries']} turns measured",
        )
        said.append(f"  candidate misses: {host['missed_ranked']} ranked but not delivered, {host['missed_unranked']} not ranked")
    elif host["deliveries"]:
        said.append("  used: not measured (no transcript read)")
    said.extend(f"  note: {note}" for note in host["notes"])
    return "\n".join(said)
