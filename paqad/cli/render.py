"""Text rendering of library results for a terminal; JSON output is the dataclasses as-is.

Every path, name and line read back from the index is untrusted (a committed file name may hold a
newline or an ESC): it goes through :func:`paqad.textsafe.escape`, so one result is one line and
nothing in it drives the terminal.
"""

from __future__ import annotations

import os
import sys
import time
from typing import IO, TYPE_CHECKING

import click

from paqad.textsafe import escape

if TYPE_CHECKING:  # only for annotations: `rag update` must not import the search stack (numpy)
    from paqad.eligibility.collect import Decision
    from paqad.index.writing.build import BuildReport
    from paqad.search.pipeline import Result, SearchResponse

PREVIEW_LINES = 6


def color() -> bool | None:
    """False when ``NO_COLOR`` is set to anything non-empty (no-color.org), else None (click's own
    rule: styles on a terminal, plain text into a pipe)."""
    return False if os.environ.get("NO_COLOR") else None


def search_text(resp: SearchResponse, probe: bool = False, words: dict[str, str] | None = None, shown: int | None = None,
                notes: dict[str, str] | None = None) -> str:
    """``rag search`` / ``rag probe`` for people: at most ``shown`` results; ``matched`` as the
    query's own words (``words``: term -> word, from ``lexical.evidence_words``) without the
    common ones, or every stem with its field when ``words`` is None (``probe``). A stale index
    adds its freshness line (``--json`` always has the ``freshness`` object). ``notes``: a line to
    print under a result, by its id (``rag_last_changed``: the last commit that touched it)."""
    text = _results_text(resp, probe, words, shown, notes or {})
    fresh = resp.freshness
    if fresh and fresh.get("stale"):
        from paqad.delivery import freshness  # lazy: 92 modules, only for a stale search's line

        if freshness.shown(fresh):
            text += "\n" + click.style(freshness.line(fresh), fg="yellow")
    return text


def _results_text(resp: SearchResponse, probe: bool, words: dict[str, str] | None, shown: int | None, notes: dict[str, str]) -> str:
    if not resp.answered and resp.diagnosis:
        return _refusal_text(resp.diagnosis)
    if not resp.results:
        return "No results."
    results = resp.results[:shown] if shown else resp.results
    lines: list[str] = []
    if results[0].low_confidence:
        lines.append("Low confidence: no passage reached the similarity threshold; the closest ones follow.")
    for n, r in enumerate(results, 1):
        where = f"[{escape(r.repository)}] " if r.repository else ""  # a workspace search names the member
        head = click.style(f"{n}. {where}{escape(r.path)}:{r.start_line}-{r.end_line}", bold=True)
        lines.append(f"{head}  {escape(r.qualified_name or r.name)}  ({r.kind}, score {r.score:.2f}{', low confidence' if r.low_confidence else ''})")
        if r.id in notes:
            lines.append(f"   {notes[r.id]}")
        if r.signature and (probe or not r.source):  # else the preview's first line is the signature
            lines.append(f"   {escape(r.signature)}")
        matched = _matched(r, words)
        if matched:
            lines.append(f"   matched: {matched}")
        if probe:
            lines.append(f"   signals: {r.signals}")
        elif r.source:
            lines.extend(click.style("   | ", dim=True) + escape(s, keep_tabs=True) for s in r.source.split("\n")[:PREVIEW_LINES])
    if len(results) < len(resp.results):
        more = len(resp.results) - len(results)
        lines.append(f"({more} more: --show 0 prints them all, --json gives every field)")
    lines.append(_footer(resp))
    return "\n".join(lines)


def _matched(r: Result, words: dict[str, str] | None) -> str:
    if words is None:
        text = ", ".join(f"{t} ({f})" for t, f in list(r.matched_terms.items())[:8])
    else:
        fields: dict[str, str] = {}
        for term, field_name in r.matched_terms.items():
            if term in words:
                fields.setdefault(words[term].lower(), field_name)
        text = ", ".join(f"{w} ({f})" for w, f in list(fields.items())[:8])
        if not text and r.matched_terms:  # only terms the word list leaves out matched: say which, as --json does
            text = "common words only: " + ", ".join(f"{t} ({f})" for t, f in list(r.matched_terms.items())[:8])
    if not text and "cosine" in r.signals:
        text = f"no query word; by meaning (cosine {r.signals['cosine']:.2f})"
    return text


def _refusal_text(d: dict) -> str:
    """A refusal in sentences: what was measured against what it needed (``--json`` has the numbers)."""
    lines = [f"No passage answers this ({d['reason']}).", f"  Words: {_word_bars(d)}."]
    if d.get("vector"):
        v, bars = d["vector"], d["vector"].get("bars") or {}
        lines.append(
            f"  Meaning: the closest passage's cosine is {v['top_cosine']:.2f} (needed {bars.get('top_cosine', 0):g}), "
            f"{v['margin']:.2f} above the median one (needed {bars.get('margin', 0):g})."
        )
    if d.get("best_score") is not None:
        lines.append(f"  Best score {d['best_score']:.2f}.")
    if d["absent_terms"]:
        lines.append(f"  Not in this repository: {', '.join(d['absent_terms'][:12])}.")
    if d.get("ubiquitous_terms"):
        lines.append(f"  Used almost everywhere here: {', '.join(d['ubiquitous_terms'][:12])}.")
    if d.get("prose_terms"):
        lines.append(f"  Only in comments and documentation here: {', '.join(d['prose_terms'][:12])}.")
    lines.append(f"  Hint: {d['hint']}")
    return "\n".join(lines)


def _word_bars(d: dict) -> str:
    bars = d.get("bars") or {}
    if "coverage" in bars:
        return (
            f"{d['coverage']:.0%} of the query's distinctive words occur here (needed {bars['coverage']:.0%}), "
            f"and the best passage holds {d['concentration']:.0%} of them (needed {bars.get('concentration', 0):.0%})"
        )
    return (
        f"coverage {d['coverage']:.2f}, concentration {d['concentration']:.2f} (a long query needs {bars.get('min_matched_terms', '?')} matched words, "
        f"{bars.get('min_terms_in_one_unit', '?')} of them in one passage)"
    )


def _footer(resp: SearchResponse) -> str:
    ev = resp.evidence
    pending = f"; {resp.vectors_pending} units still without vectors" if resp.vectors_pending else ""
    pending += " (stand-in vectors searched meanwhile)" if resp.interim_vectors else ""
    verdict = "passed" if ev.get("passed") else "failed: " + str(ev.get("reason"))
    return click.style(f"({resp.candidates} candidates, {resp.mode}, {resp.elapsed_ms:.1f} ms; evidence {verdict}{pending})", dim=True)


def build_text(report: BuildReport) -> str:
    langs = ", ".join(f"{k} {v}" for k, v in sorted(report.languages.items(), key=lambda kv: -kv[1]))
    if report.mode.startswith("incremental"):
        head = f"Updated: {report.files_changed} changed, {report.files_removed} removed, {report.files_unchanged} unchanged"
    else:
        head = f"Built ({report.mode}): {report.files_indexed} files"
    text = f"{head}; {report.units} units parsed in {report.seconds:.2f}s ({report.files_dropped} files not eligible){'; ' + langs if langs else ''}"
    v = report.vectors
    if v is not None:
        text += f"\nVectors ({v.provider}): {v.embedded} embedded, {v.cached} from cache in {v.seconds:.1f}s; {v.pending} pending"
        if v.stopped:
            text += f" (stopped: {v.stopped}; `paqad rag update` resumes)"
    return text


def decision_text(d: Decision) -> str:
    if d.kept:
        return f"{escape(d.path)}: indexed — {d.reason}"
    names = {"type": "1 file type", "hard": "2 hard exclusion", "ignore": "3 ignore rules", "check": "4 file checks"}
    return f"{escape(d.path)}: not indexed — filter {names.get(d.filter or '', d.filter)}: {d.reason}"


def neighbors_text(unit_id: str, found: list[dict]) -> str:
    """``paqad rag neighbors``: one line per neighbour (score, hops, where), then its edge path."""
    if not found:
        return f"{escape(unit_id)}: no neighbours within these hops."
    lines = [f"Neighbours of {escape(unit_id)}:"]
    lines += _graph_lines(found)
    return "\n".join(lines)


def expansions_text(found: list[dict]) -> str:
    """``search --graph``: the neighbours of the results, after them."""
    if not found:
        return "Graph: no neighbours of these results."
    return "\n".join(["Graph neighbours of these results:", *_graph_lines(found)])


def _graph_lines(found: list[dict]) -> list[str]:
    lines = []
    for n in found:
        where = f"{escape(n['path'])}:{n['start_line']}-{n['end_line']}" if n.get("start_line") else escape(n.get("path") or "not in this repository")
        tag = "unresolved" if n.get("unresolved") else n["kind"]
        lines.append(f"  {n['score']:.3f}  {n['hops']} hop{'s' if n['hops'] > 1 else ''}  {escape(n['id'])}  ({tag}, {where})")
        lines.append(click.style(f"        {escape(str(n['evidence']))}", dim=True))
    return lines


class ProgressBar:
    """``embedding 1,234/5,000 units  25.1/s  ETA 2m30s`` on stderr, only when stderr is a TTY.

    The library reports progress through a plain ``progress(done, total)`` callback
    (``paqad.index.embedding.vectors.Progress``); this is the CLI's drawing of it. Off a terminal it writes
    nothing, so logs and pipes get no carriage returns.
    """

    def __init__(self, label: str = "embedding", stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.label = label
        self.started = time.perf_counter()
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        self.stream.write("\r\033[K" + progress_line(self.label, done, total, time.perf_counter() - self.started))
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


def progress_line(label: str, done: int, total: int, elapsed: float) -> str:
    """One frame of the bar: label, 24-cell bar, count, rate and time left."""
    rate = done / elapsed if elapsed > 0 else 0.0
    eta = (total - done) / rate if rate > 0 else 0.0
    width = 24
    filled = int(width * done / total) if total else width
    bar = "#" * filled + "-" * (width - filled)
    return f"{label} [{bar}] {done:,}/{total:,} units  {rate:.1f}/s  ETA {int(eta) // 60}m{int(eta) % 60:02d}s"
