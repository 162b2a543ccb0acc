"""The type of a JSON value, for the dicts paqad writes as JSON (``--json`` output, files, replies).

``JSON`` is what ``json.loads`` returns and ``json.dumps`` accepts; ``JSONObject`` a JSON object.
The containers are read-only in the alias (``Sequence``, ``Mapping``) so that a ``list[str]`` or a
``dict[str, int]`` is a JSON value too. Results cross the code as dataclasses and typed dicts; a
value typed ``JSONObject`` is one at the JSON edge, or data paqad only passes through. Imported for
annotations only (``if TYPE_CHECKING``) by the modules on a hook's path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JSON: TypeAlias = str | int | float | bool | None | Sequence["JSON"] | Mapping[str, "JSON"]
JSONObject: TypeAlias = dict[str, JSON]
