"""Tuned constants overridden per request (``paqad.search.params``): no module global changes."""

from __future__ import annotations

import pytest

from paqad import config
from paqad.index.writing import build
from paqad.search import pipeline, query
from paqad.search.params import KNOBS, SearchParams
from paqad.search.request import SearchRequest
from testing.env import LEXICAL
from testing.repos import Repo

CODE = '''\
def serialize_params(params: dict) -> str:
    """Serialize the parameters of a URL query, sorted by key."""
    return "&".join(f"{key}={params[key]}" for key in sorted(params))


def pad_width(text: str, width: int) -> str:
    return text.ljust(width)
'''


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Repo:
    r = Repo.init(tmp_path_factory.mktemp("params") / "repo")
    r.write("client/params.py", CODE)
    r.commit("code")
    build.build_full(r.root, config.load(r.root, environ=LEXICAL))
    return r


def test_an_override_changes_this_request_only(repo):
    q = "query parameter serialization"  # answered through the derived form "serializ"
    off = SearchParams.of({"query.DERIVE": False})
    assert pipeline.search(repo.root, q).answered
    assert not pipeline.search(repo.root, q, params=off).answered
    assert query.DERIVE is True and query.P.DERIVE is True  # the module's constant and, outside a request, its reading
    assert pipeline.search(repo.root, q).answered  # nothing left behind


def test_only_tuned_constants_are_accepted_and_neutral_turns_them_off():
    with pytest.raises(ValueError, match="not a tuned search constant"):
        SearchParams.of({"query.NOT_A_KNOB": 1})
    assert SearchParams.neutral(["ranking.DIVERSITY", "evidence.COVERAGE_BAR"]).as_dict() == {"ranking.DIVERSITY": 1.0, "evidence.COVERAGE_BAR": 0.0}
    for key in KNOBS:  # every knob names a constant its module defines
        module, name = key.split(".")
        assert hasattr(__import__(f"paqad.search.{module}", fromlist=[name]), name), key


def test_the_service_wire_carries_the_overrides():
    req = SearchRequest("q", params=SearchParams.of({"ranking.PATH_BOOST": 0.0}))
    assert SearchRequest.from_wire(req.to_wire()).params == req.params
    assert SearchRequest.from_wire(SearchRequest("q").to_wire()).params == SearchParams()
