"""A full build's way to full quality, as the user lives it: when lexical search worked, when the
stand-in vectors did, when the model's vectors covered the index, and, while the model embeds,
how fast it goes and how long is left, measured and never assumed (issue 34: a fixed rate
printed "1m27s" for a fill that took 261 s under load).

A full build opens a record (``timeline.json`` in the work tree's per-developer ``state``
folder); the fill after it carries it on, in the same process or in the detached ``rag update``
of ``rag init --background`` (the record names that process), and the fill that leaves no unit
pending closes it. ``rag status`` reads it back (:func:`describe`).

The rate is units per wall-second over the last ``WINDOW_S`` seconds of the fill
(:func:`throughput`, a pure function), refreshed after every batch from the second on (the
first carries the model's load); the time left is the work
still to do at the work rate of that window (:func:`work_seconds_left`), a unit's work being the
length of its text (capped where the model stops reading), so a fill whose short test functions
come last is not taken for one that goes on at the pace of its long documents. Before the first batch there
is no observed figure: the rate the last fill of the model measured (``embed-rate.json``: this work
tree's, else the user cache folder's, from any tree on this machine) stands in, said to be that,
else there is none ("estimating…").
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from paqad import workspace

if TYPE_CHECKING:
    from paqad.jsontypes import JSON, JSONObject

FILE = "timeline.json"
RATE_FILE = "embed-rate.json"
#: Seconds of the fill the rate is measured over: long enough to smooth batches of unequal
#: texts, short enough to follow a machine whose load changes.
WINDOW_S = 30.0
#: Fewer units embedded than this in a fill measure the model's load more than its rate.
MIN_RATE_UNITS = 128
_ACTIVE: dict[str, Record] = {}  # the record this process writes, by work tree


def throughput(samples: Sequence[tuple[float, int]], window: float = WINDOW_S) -> float | None:
    """Units per second over ``samples`` ((seconds, units done so far), oldest first) of the last
    ``window`` seconds before the newest one; at least the last two samples count. None before
    two samples or when nothing moved."""
    if len(samples) < 2:
        return None
    end_t, end_done = samples[-1]
    start_t, start_done = next((s for s in samples if s[0] >= end_t - window), samples[-2])
    if (start_t, start_done) == (end_t, end_done):
        start_t, start_done = samples[-2]
    moved, took = end_done - start_done, end_t - start_t
    return moved / took if moved > 0 and took > 0 else None


def work_seconds_left(samples: Sequence[tuple[float, int]], cum: Sequence[int], window: float = WINDOW_S) -> float | None:
    """Seconds left when the units do not cost the same: ``cum[i]`` is the cost of the first ``i``
    units in fill order (a long text takes the model longer), ``samples`` are (seconds, units done).
    The cost done per second over the window, and the cost still to do. None before a rate."""
    rate = throughput([(t, cum[min(done, len(cum) - 1)]) for t, done in samples], window)
    done = min(samples[-1][1], len(cum) - 1) if samples else 0
    return (cum[-1] - cum[done]) / rate if rate else None


def seconds_left(done: int, total: int, rate: float | None) -> float | None:
    """The time the ``total - done`` units still to go take at ``rate`` (None: no rate yet)."""
    if done >= total:
        return 0.0
    return (total - done) / rate if rate else None


class Stages(TypedDict):
    """Per stage (``lexical``, ``hybrid_interim``, ``full``): a flag, a time or seconds."""

    lexical: float | None
    hybrid_interim: float | None
    full: float | None


class Described(TypedDict):
    """A build's timeline in ``rag status --json``'s words (the ``timeline`` object)."""

    kind: str | None
    started_at: str
    state: str | None
    stage: str
    units: int | None
    embedder: str | None
    done: int | None
    total: int | None
    cached: int
    rate: float | None
    rate_source: str | None
    eta_seconds: float | None
    cpu_seconds: float | None
    stopped: str | None
    ready: dict[str, bool]
    ready_at: dict[str, str | None]
    seconds_to: Stages


@dataclass
class Record:
    """One full build's timeline (times in seconds after ``started_at``, an epoch time)."""

    root: str
    kind: str
    started_at: float
    pid: int | None
    units: int = 0
    embedder: str = ""  # the model that makes the full vectors ("": lexical only)
    state: str = "running"  # running | done | stopped
    lexical_s: float | None = None
    interim_s: float | None = None
    full_s: float | None = None
    done: int = 0
    total: int = 0
    cached: int = 0  # of ``total``, found in the embedding cache (known at the lexical step)
    rate: float | None = None
    rate_source: str | None = None  # observed | last fill
    eta_s: float | None = None
    cpu_s: float = 0.0
    stopped: str | None = None
    updated_at: float = 0.0
    _samples: list[tuple[float, int]] = field(default_factory=list, repr=False)
    _cum: list[int] = field(default_factory=list, repr=False)
    _cpu_base: float = field(default=0.0, repr=False)

    def elapsed(self) -> float:
        return round(time.time() - self.started_at, 3)

    def lexical(self, units: int, embedder: str, pending: int = 0, cached: int = 0, at: float | None = None, prior: float | None = None) -> None:
        """The lexical index is live (since ``at``, else now): ``pending`` units wait for the model,
        ``cached`` of them in the cache; ``prior``: the rate of the last fill (:func:`last_rate`), if any."""
        self.lexical_s, self.units, self.embedder = at if at is not None else self.elapsed(), units, embedder
        self.total, self.cached = pending, cached
        self.rate, self.rate_source = (prior, "last fill") if prior else (None, None)
        self.eta_s = seconds_left(cached, pending, prior)
        if not embedder:
            self.state = "done"
            _ACTIVE.pop(self.root, None)
        self.save()

    def interim(self, made: int) -> None:
        """Stand-in vectors cover the index (when any were made)."""
        if made:
            self.interim_s = self.elapsed()
            self.save()

    def embedding(self, total: int, prior: float | None, work: Sequence[int] = ()) -> None:
        """The model's fill starts with ``total`` units to go; ``prior``: last fill's rate; ``work``:
        each unit's cost in fill order (``vectors.pending_work``; the time left follows it)."""
        self._cum = list(itertools.accumulate(work, initial=0)) if len(work) == total else []
        self._samples = [(time.monotonic(), 0)]
        self.done, self.total = 0, total
        self.rate, self.rate_source = (prior, "last fill") if prior else (None, None)
        self.eta_s = seconds_left(min(self.cached, total), total, prior)
        self.save()

    def progress(self, done: int, total: int) -> None:
        """After each batch of the model's fill: the count, and the rate and time left from it."""
        self._samples.append((time.monotonic(), done))
        if len(self._samples) >= 3 and self._samples[0][1] == 0:
            del self._samples[0]
        del self._samples[:-256]
        # the first batch carries the model's load (1-4 s): a pace from it alone would be its pace
        rate = throughput(self._samples) if self._samples[0][1] > 0 else None
        self.done, self.total = done, total
        if rate is not None:
            self.rate, self.rate_source = round(rate, 2), "observed"
        weighed = work_seconds_left(self._samples, self._cum) if self._cum and total == len(self._cum) - 1 else None
        self.eta_s = weighed if weighed is not None else seconds_left(done, total, self.rate)
        self.save()

    def finish(self, pending: int, stopped: str | None, embedded: int, seconds: float, fingerprint: str) -> None:
        """The fill ended: full when nothing is pending; its model rate kept for the next estimate."""
        if pending == 0 and stopped is None:
            self.state, self.full_s, self.done, self.eta_s = "done", self.elapsed(), self.total, 0.0
        else:
            self.state, self.stopped = "stopped", stopped or f"{pending} units pending"
        if embedded >= MIN_RATE_UNITS and seconds > 0:
            save_rate(Path(self.root), fingerprint, embedded / seconds)
        _ACTIVE.pop(self.root, None)
        self.save()

    def hand_over(self) -> None:
        """``rag init --background``: the next fill of the index, in any process, carries it on."""
        self.pid = None
        _ACTIVE.pop(self.root, None)
        self.save()

    def save(self) -> None:
        self.cpu_s = round(self._cpu_base + time.process_time(), 2)
        self.updated_at = time.time()
        data = {k: v for k, v in asdict(self).items() if not k.startswith("_")}
        try:
            workspace.atomic_write_text(workspace.state_dir(Path(self.root)) / FILE, json.dumps(data), durable=False)
        except OSError:  # a report on the build, never a reason for it to fail (a full disk: the build says so)
            pass

    def describe(self) -> Described:
        return _described({k: v for k, v in asdict(self).items() if not k.startswith("_")})


def begin(root: Path, kind: str, started_at: float | None = None) -> Record:
    """Open this process's record of a full build of ``root`` (``started_at``: when the command began)."""
    rec = Record(str(root), kind, started_at if started_at is not None else time.time(), os.getpid())
    _ACTIVE[rec.root] = rec
    rec.save()
    return rec


def active(root: Path) -> Record | None:
    """The record this process is writing for ``root``, if any (nothing is read or adopted)."""
    return _ACTIVE.get(str(root))


def process_started() -> float:
    """When this process started (epoch seconds; Linux's ``/proc``, else now): a command's times
    count from the moment the user pressed enter, interpreter start and imports included."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as fh:
            up = float(fh.read().split()[0])
        started = time.time() - (up - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return time.time()
    return started if 0 <= time.time() - started < 3600 else time.time()


def current(root: Path) -> Record | None:
    """The record this process writes for ``root``: its own, or a running one handed to it (by pid)
    or whose writer is gone; None when no full build of ``root`` is on its way."""
    key = str(root)
    if key in _ACTIVE:
        return _ACTIVE[key]
    data = _read(root)
    if not data or data.get("state") != "running" or data.get("lexical_s") is None:
        return None
    pid = data.get("pid")
    if pid not in (None, os.getpid()) and _alive(pid):
        return None
    rec = _record(data, key)
    rec._cpu_base = rec.cpu_s
    _ACTIVE[key] = rec
    return rec


def _record(data: JSONObject, root: str) -> Record:
    """The record a file holds, carried on by this process."""
    return Record(
        root, _text(data.get("kind")) or "", _number(data.get("started_at")) or 0.0, os.getpid(),
        units=_count(data.get("units")) or 0, embedder=_text(data.get("embedder")) or "", state=_text(data.get("state")) or "running",
        lexical_s=_number(data.get("lexical_s")), interim_s=_number(data.get("interim_s")), full_s=_number(data.get("full_s")),
        done=_count(data.get("done")) or 0, total=_count(data.get("total")) or 0, cached=_count(data.get("cached")) or 0,
        rate=_number(data.get("rate")), rate_source=_text(data.get("rate_source")), eta_s=_number(data.get("eta_s")),
        cpu_s=_number(data.get("cpu_s")) or 0.0, stopped=_text(data.get("stopped")), updated_at=_number(data.get("updated_at")) or 0.0,
    )


def describe(root: Path, pending: int | None = None) -> Described | None:
    """The last full build's timeline for ``rag status`` (None: none recorded). ``pending``: the
    index's own count of units without a vector, which wins over the record (another process
    may have filled them); a running record whose process is gone reads as stopped."""
    data = _read(root)
    if not data:
        return None
    if data.get("state") == "running" and data.get("pid") is not None and not _alive(data["pid"]):
        data["state"], data["stopped"] = "stopped", "the embedding process is gone; `paqad rag update` resumes"
    total = _number(data.get("total"))
    if pending is not None and data.get("embedder") and total:
        data["done"] = max(0, int(total) - pending)
        if pending == 0 and data.get("full_s") is None and data["state"] != "running":
            data["state"], data["stopped"] = "done", None  # completed by a later fill
    eta = _number(data.get("eta_s"))
    if data["state"] == "running" and eta is not None:
        data["eta_s"] = max(0.0, eta - max(0.0, time.time() - (_number(data.get("updated_at")) or time.time())))
    elif data["state"] == "stopped":
        data["eta_s"] = None
    return _described(data)


def _described(data: Mapping[str, JSON]) -> Described:
    """The record in ``rag status --json``'s words: what works (``ready``), since when, and how long it took."""
    start = _number(data["started_at"]) or 0.0
    took: Stages = {"lexical": _number(data.get("lexical_s")), "hybrid_interim": _number(data.get("interim_s")), "full": _number(data.get("full_s"))}
    if not data.get("embedder") and took["lexical"] is not None:
        took["full"] = took["lexical"]  # lexical only: full quality is the lexical index
    full = took["full"] is not None or (data.get("state") == "done" and bool(data.get("embedder")))
    stage = "full" if full else "hybrid_interim" if took["hybrid_interim"] is not None else "lexical" if took["lexical"] is not None else "building"
    return {
        "kind": _text(data.get("kind")), "started_at": _iso(start), "state": _text(data.get("state")), "stage": stage,
        "units": _count(data.get("units")), "embedder": _text(data.get("embedder")) or None,
        "done": _count(data.get("done")), "total": _count(data.get("total")), "cached": _count(data.get("cached")) or 0,
        "rate": _number(data.get("rate")), "rate_source": _text(data.get("rate_source")), "eta_seconds": _round(_number(data.get("eta_s"))),
        "cpu_seconds": _number(data.get("cpu_s")), "stopped": _text(data.get("stopped")),
        "ready": {k: v is not None for k, v in took.items()} | {"full": full},
        "ready_at": {k: _iso(start + v) if isinstance(v, float | int) else None for k, v in took.items()},
        "seconds_to": took,
    }


def _number(value: JSON) -> float | None:
    """A number the record holds (an int stays an int in the JSON), else None."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _count(value: JSON) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: JSON) -> str | None:
    return value if isinstance(value, str) else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 1)


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def _read(root: Path) -> JSONObject | None:
    try:
        data = json.loads((workspace.state_dir(root) / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("started_at"), (int, float)) else None


def _alive(pid: JSON) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _rate_files(root: Path) -> list[Path]:
    """Where measured rates are kept: this work tree's state, then the user's cache folder (any
    tree's last fill on this machine: a new tree's first estimate)."""
    return [workspace.state_dir(root) / RATE_FILE, workspace.cache_dir() / RATE_FILE]


def last_rate(root: Path, fingerprint: str) -> float | None:
    """Units per second the last fill of this model measured, in this work tree or else on this
    machine (None: none yet)."""
    for path in _rate_files(root):
        try:
            rate = float(json.loads(path.read_text(encoding="utf-8"))[fingerprint]["rate"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if rate > 0:
            return rate
    return None


def save_rate(root: Path, fingerprint: str, rate: float) -> None:
    for path in _rate_files(root):
        try:
            rates = json.loads(path.read_text(encoding="utf-8"))
            rates = rates if isinstance(rates, dict) else {}
        except (OSError, ValueError):
            rates = {}
        rates[fingerprint] = {"rate": round(rate, 2), "at": _iso(time.time())}
        try:
            workspace.atomic_write_text(path, json.dumps(rates), durable=False)
        except OSError:
            pass
