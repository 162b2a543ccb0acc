"""Layered settings: defaults < ``.paqad/configs/*`` (team, name order) < ``config.yaml`` in the per-developer folder (local)
< ``PAQAD_*`` environment < CLI flags. Every value remembers where it came from.

Config files are YAML mappings of setting names to values. An unknown key or a bad value is a
``ConfigError`` naming the file (or variable), the key and the allowed values: a typo must never
silently fall back to a default.
"""

from __future__ import annotations

import difflib
import math
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from paqad import localstate, workspace, yamlio
from paqad.errors import ConfigError
from paqad.settings import SETTINGS, Setting, Settings, SettingValue

ENV_PREFIX = "PAQAD_"


@dataclass(frozen=True)
class Value:
    """A resolved setting value and the layer it came from (``default``, a file path, ``env NAME``, ``cli``)."""

    value: SettingValue
    source: str


@dataclass(frozen=True)
class Config(Settings):
    """The resolved settings of one repository: typed attributes (``cfg.rag_top_n``) and, for each
    one, the layer it came from. ``cfg["rag_top_n"]`` reads a setting named at run time."""

    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __getitem__(self, key: str) -> SettingValue:
        if key not in SETTINGS:
            raise KeyError(key)
        return getattr(self, key)

    def source(self, key: str) -> str:
        return self.sources.get(key, "default")

    def items(self) -> list[tuple[str, Value]]:
        return sorted((name, Value(getattr(self, name), self.source(name))) for name in SETTINGS)


def load(root: Path, cli_overrides: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Resolve every setting for the repository at ``root``."""
    return _resolve(root, cli_overrides, environ)


#: A file's stat vouches for its content once the file is this much older than the stat (git's
#: "racy" rule: two writes in one clock tick can leave every field alike).
SETTLE_NS = 2_000_000_000
_KEPT: dict[Path, tuple[tuple[object, ...], Config]] = {}
_KEPT_LOCK = threading.Lock()


def load_kept(root: Path) -> Config:
    """:func:`load` for a long-lived process (the service reads the settings on every request):
    the last answer for ``root`` while every input is unchanged, namely the ``PAQAD_*``
    environment, where the personal file lives, and the stat of each file and folder ``load``
    reads (``.paqad/``, ``.paqad/configs/`` and its entries, the personal ``config.yaml``). An
    answer is kept only when all of them had settled (``SETTLE_NS``) and did not move while it
    was computed; anything else loads afresh. Errors are never kept (``load`` raises them)."""
    before = _inputs(root)
    with _KEPT_LOCK:
        hit = _KEPT.get(root)
    if before is not None and hit is not None and hit[0] == before:
        return hit[1]
    cfg = load(root)
    if before is not None and _settled(before) and _inputs(root) == before:
        with _KEPT_LOCK:
            _KEPT[root] = (before, cfg)
    return cfg


_ENV_PREFIX_B = os.fsencode(ENV_PREFIX)


def _prefixed_environ() -> tuple[tuple[str, str], ...]:
    """The ``PAQAD_*`` variables, sorted. On POSIX read through ``os.environ``'s bytes, decoding
    only those (``os.environ.items()`` decodes every variable: half of a kept load's 40 µs)."""
    data = getattr(os.environ, "_data", None) if os.name == "posix" else None
    if isinstance(data, dict):
        size = len(_ENV_PREFIX_B)
        return tuple(sorted((os.fsdecode(k), os.fsdecode(v)) for k, v in data.items() if k[:size] == _ENV_PREFIX_B))
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIX)))


def _inputs(root: Path) -> tuple[object, ...] | None:
    """What :func:`load` (no overrides, this process's environment) depends on, as stats; None
    when a stat fails in a way ``load`` would have to judge (it is then simply not kept)."""
    env = _prefixed_environ()
    # plain strings: the paths of workspace.team_config_dir and local_config_path, without pathlib's cost per request
    team = os.path.join(root, workspace.DIRNAME, "configs")
    local = os.path.join(localstate.tree_dir(root), "config.yaml")
    places = [os.path.dirname(team), team, local]
    try:
        places += sorted(os.path.join(team, name) for name in os.listdir(team))
    except FileNotFoundError:
        pass
    except OSError:
        return None
    stats: list[object] = [env, local]
    for place in places:
        try:
            st = os.lstat(place)
        except FileNotFoundError:
            stats.append((place, None))
            continue
        except OSError:
            return None
        stats.append((place, st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(stats)


def _settled(inputs: tuple[object, ...]) -> bool:
    now = time.time_ns()
    return all(now - max(s[5], s[6]) > SETTLE_NS for s in inputs[2:] if isinstance(s, tuple) and s[1] is not None)


def _resolve(
    root: Path, cli_overrides: Mapping[str, str] | None, environ: Mapping[str, str] | None, replaced: tuple[Path, dict[str, object]] | None = None
) -> Config:
    """:func:`load`, with ``replaced`` = (a config file, the mapping it would hold): what every
    later command would resolve once ``config set`` wrote it (the file need not exist yet)."""

    def data_of(path: Path) -> dict[str, object]:
        return replaced[1] if replaced is not None and path == replaced[0] else read_file(path)

    values = {name: Value(s.default, "default") for name, s in SETTINGS.items()}
    teams = team_files(root)
    if replaced is not None and replaced[0].parent == workspace.team_config_dir(root) and replaced[0] not in teams:
        teams = sorted([*teams, replaced[0]])
    for path in teams:
        _apply(values, data_of(path), _display(root, path), team=True)
    local = workspace.local_config_path(root)
    if local.exists() or (replaced is not None and replaced[0] == local):
        _apply(values, data_of(local), _display(root, local))
    _apply_env(values, os.environ if environ is None else environ)
    for key, raw in (cli_overrides or {}).items():
        setting = _setting(key, "command line (-c)")
        values[key] = Value(coerce(setting, raw, "command line (-c)"), "cli")
    resolved: dict[str, Any] = {name: v.value for name, v in values.items()}  # each checked by coerce against its field's type
    return Config(**resolved, sources={name: v.source for name, v in values.items()})


def team_files(root: Path) -> list[Path]:
    """Committed team config files, merged in name order (a symlinked one is never read)."""
    folder = workspace.team_config_dir(root)
    if workspace.linked_part(root, folder) is not None or not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and workspace.team_file(root, p) is not None)


def read_file(path: Path) -> dict[str, object]:
    """Parse one config file into a mapping (values as YAML read them, checked by :func:`coerce`); broken YAML or a non-mapping is a ConfigError."""
    try:
        data = yamlio.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}:{where} is not valid YAML ({getattr(exc, 'problem', exc)}); fix or delete the file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config file ({exc})") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config file must be a mapping of setting: value, got {type(data).__name__}")
    return data


def _apply(values: dict[str, Value], data: dict[str, object], origin: str, team: bool = False) -> None:
    for key, raw in data.items():
        setting = _setting(str(key), origin)
        value = coerce(setting, raw, origin)
        if team and setting.sends_off_machine(value):
            raise ConfigError(
                f"{origin}: {setting.name} = {raw!r} would send this repository's code off this machine, which a committed "
                f"team config cannot choose for you; to accept it, set it yourself: `paqad config set {setting.name} {raw}` "
                f"(writes your config.yaml), or {ENV_PREFIX}{setting.name.upper()}, or -c {setting.name}={raw}"
            )
        if team and setting.local_only and value != setting.default:
            raise ConfigError(
                f"{origin}: {setting.name} = {raw!r} {setting.local_only}, which a committed team "
                f"config cannot choose for you; to accept it, set it yourself: `paqad config set {setting.name} {raw}`"
            )
        values[setting.name] = Value(value, origin)


def _apply_env(values: dict[str, Value], environ: Mapping[str, str]) -> None:
    for var, raw in environ.items():
        if not var.startswith(ENV_PREFIX) or not var[len(ENV_PREFIX) :].lower().startswith("rag_"):
            continue
        key = var[len(ENV_PREFIX) :].lower()
        origin = f"env {var}"
        setting = _setting(key, origin)
        values[key] = Value(coerce(setting, raw, origin), origin)


def _setting(key: str, origin: str) -> Setting:
    if key not in SETTINGS:
        wanted = key.replace("-", "_").lower()
        close = [k for k in SETTINGS if wanted == k or (len(wanted) > 3 and wanted in k)] or difflib.get_close_matches(wanted, SETTINGS, n=1, cutoff=0.75)
        if close:
            raise ConfigError(f"{origin}: unknown setting {key!r}; did you mean {close[0]}? (`paqad config list` shows every setting)")
        raise ConfigError(f"{origin}: unknown setting {key!r}; known settings: {', '.join(SETTINGS)}")
    return SETTINGS[key]


def coerce(setting: Setting, raw: object, origin: str) -> SettingValue:
    """Convert ``raw`` (from YAML, environment or CLI) to the setting's type, or raise ConfigError."""
    try:
        value = _convert(setting, raw)
    except (TypeError, ValueError):
        value = None
    if value is None or not _in_range(setting, value):
        raise ConfigError(f"{origin}: {setting.name} = {raw!r} is not allowed; expected {setting.allowed()}")
    return value


def _convert(setting: Setting, raw: object) -> SettingValue | None:
    if setting.type is bool:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        return {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}.get(text)
    if setting.type is int:
        if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
            return None
        return int(str(raw).strip())
    if setting.type is float:
        if isinstance(raw, bool):
            return None
        number = float(str(raw).strip())
        return number if math.isfinite(number) else None  # nan and inf pass every bound check
    if isinstance(raw, bool) and raw is False and "off" in setting.choices:
        return "off"  # YAML 1.1 reads an unquoted `off` (or `no`) as false
    if not isinstance(raw, (str, int, float)) or isinstance(raw, bool):
        return None
    return str(raw)


def _in_range(setting: Setting, value: SettingValue) -> bool:
    if setting.choices and value not in setting.choices:
        return False
    if isinstance(value, str):  # strings are bounded by their choices only
        return True
    if setting.low is not None and value < setting.low:
        return False
    if setting.high is not None and value > setting.high:
        return False
    return True


def set_value(root: Path, key: str, raw: str, team: bool = False) -> Path:
    """Validate and write one setting into the local ``config.yaml`` (or the team file). Returns the file.

    Validated as every later command reads it: the settings are resolved with the file as it
    would be written (a remote provider in a team file is refused here, not by the next command)."""
    setting = _setting(key, "config set")
    value = coerce(setting, raw, "config set")
    path = workspace.team_config_dir(root) / "team.yaml" if team else workspace.local_config_path(root)
    data = read_file(path) if path.exists() else {}
    data[key] = value
    _resolve(root, None, {}, replaced=(path, data))  # refuse what every later command would refuse
    workspace.ensure(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    workspace.atomic_write_text(path, yaml.safe_dump(data, sort_keys=True))
    return path


def _display(root: Path, path: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
