"""benchmarks/ablate.py: a group's pooled change against the shipped constants, with its noise."""

from __future__ import annotations

from benchmarks import ablate


def _row(group: str, ruler: str, i: int, rank: int | None, answered: bool = True) -> dict:
    side = {"unit_rank": rank, "file_rank": rank, "ndcg10": 1.0 / rank if rank else 0.0}
    return {"group": group, "ruler": ruler, "corpus": "c", "id": str(i), "half": "tune", "answerable": True, "level": "unit",
            "answered": answered, "gated": side, "ungated": side}


def test_an_unchanged_group_moves_nothing_and_a_changed_one_moves_beyond_its_noise():
    rows = [_row(g, ru, i, 1 + i % 3) for g in ("shipped", "same") for ru in ("a", "b") for i in range(30)]
    rows += [_row("worse", ru, i, None, answered=False) for ru in ("a", "b") for i in range(30)]
    same = ablate.compare(rows, "same", 50)
    assert not same["moves"] and same["hit1_gated"] == (0.0, 0.0, 0.0)
    worse = ablate.compare(rows, "worse", 50)
    assert worse["moves"] and worse["answered"][0] == -1.0 and worse["answered"][2] < 0


def test_a_ruler_under_min_cases_is_left_out_of_the_pool():
    rows = [_row("shipped", "big", i, 1) for i in range(10)] + [_row("off", "big", i, 1) for i in range(10)]
    rows += [_row("shipped", "tiny", 0, 2), _row("off", "tiny", 0, 1)]  # one case: no variance, yet a whole ruler's weight
    assert ablate.compare(rows, "off", 20)["moves"]
    assert not ablate.compare(rows, "off", 20, min_cases=5)["moves"]


def test_every_group_sets_tuned_constants_and_the_count_reads_the_search_modules():
    from paqad.search.params import KNOBS

    assert all(k in KNOBS for keys in ablate.ALL_GROUPS.values() for k in keys)
    grouped = {k for keys in ablate.ALL_GROUPS.values() for k in keys}
    assert {k for k in KNOBS if k.startswith("fusion.")} <= grouped
    numeric, switches = ablate.count_constants()
    assert "evidence.COVERAGE_BAR" in numeric and "ranking.ENABLED" in switches


def test_a_try_point_is_typed_as_the_shipped_constant_and_an_unknown_one_is_refused():
    import pytest

    assert ablate.try_points(["fusion.TAIL_MIN=5,10", "fusion.BLEND_LEXICAL=0.6"]) == [
        "fusion.TAIL_MIN=5", "fusion.TAIL_MIN=10", "fusion.BLEND_LEXICAL=0.6"]
    assert ablate.params_of("fusion.TAIL_MIN=5").as_dict() == {"fusion.TAIL_MIN": 5}
    assert ablate.params_of("evidence.NAMED_ENABLED=no").as_dict() == {"evidence.NAMED_ENABLED": False}
    with pytest.raises(SystemExit, match="not a tuned search constant"):
        ablate.try_points(["fusion.RRF_K=60"])


def test_the_vector_sides_neutral_values_change_what_fusion_computes():
    """Each vector-side group reaches the code it names when its request is in force."""
    from paqad.search import fusion, params

    before = (fusion.blend_weight(0.1), fusion.blend_weight(1.0, report=True), fusion.default_bars())
    with params.using(ablate.params_of("weak_blend")):
        assert fusion.blend_weight(0.1) == fusion.BLEND_LEXICAL != before[0]
    with params.using(ablate.params_of("report_blend")):
        assert fusion.blend_weight(1.0, report=True) != before[1]
    with params.using(ablate.params_of("vector_evidence")):
        assert not fusion.vector_evidence(0.99, 0.0, coverage=1.0)
    assert fusion.vector_evidence(0.99, 0.0, coverage=1.0)
    with params.using(ablate.params_of("relief_max")):
        assert len(fusion.floor([0.6] * 5, 0.75, 0.5, list(range(5)))[0]) == 1
    assert len(fusion.floor([0.6] * 5, 0.75, 0.5, list(range(5)))[0]) == 5


def test_the_hook_door_delivers_what_the_prompt_hook_delivers(repo):
    """``hook_door.deliver`` is the prompt hook's refresh for a case (the same block), scored; a
    request's neutral calibration reaches it: with no slope behind the best, every candidate is
    confident and the hook sends pointers for the rest."""
    from benchmarks import hook_door
    from benchmarks.all_rulers_cases import Case
    from paqad import config
    from paqad.delivery import refresh
    from paqad.index.writing import build
    from paqad.search.params import SearchParams
    from testing.env import LEXICAL
    from testing.repos import make_shop

    make_shop(repo)
    cfg = config.load(repo.root, cli_overrides={"rag_enabled": "true"}, environ=LEXICAL)
    build.build_full(repo.root, cfg)
    lines = (repo.root / "shop/sessions.py").read_text().splitlines()
    start = next(i for i, line in enumerate(lines, 1) if line.startswith("def sign_cookie"))
    q = "where is the session cookie signed"
    asked = Case("r", "1", "c", "python", "question", q, [{"path": "shop/sessions.py", "lines": [start, start + 3]}])
    got = hook_door.deliver(asked, repo.root, cfg, SearchParams())
    hook = refresh.refresh(repo.root, cfg, prompt=q, sync=False).delivery or {}
    assert got["case"] == hook["case"] == "passages" and got["bodies"] == len(hook["passages"]) and got["pointers"] == 0
    assert got["delivered"] and got["named"] and got["said"] and got["tokens"] > 50
    elsewhere = Case("r", "2", "c", "python", "question", q, [{"path": "shop/payments.py", "lines": [1, 3]}])
    assert not hook_door.deliver(elsewhere, repo.root, cfg, SearchParams())["delivered"]
    probe = Case("r", "3", "c", "python", "question", "kubernetes helm chart", [])
    silent = hook_door.deliver(probe, repo.root, cfg, SearchParams())
    assert silent["case"] == "dark" and not silent["said"] and 0 < silent["tokens"] < got["tokens"]
    flat = hook_door.deliver(asked, repo.root, cfg, ablate.params_of("behind_slope"))
    assert flat["bodies"] + flat["pointers"] > got["bodies"] + got["pointers"]
    m = hook_door.metrics([{"answerable": True, "hook": got}, {"answerable": False, "hook": silent}, {"answerable": True}])
    assert m == {"hook_delivered": 1.0, "hook_named": 1.0, "hook_silence": 1.0, "hook_tokens": (got["tokens"] + silent["tokens"]) / 2}


def test_the_hook_doors_columns_are_pooled_and_bootstrapped_like_the_others():
    def hooked(group: str, ruler: str, i: int, said: bool) -> dict:
        hook = {"delivered": False, "named": False, "said": said, "tokens": 400 if said else 60}
        return {**_row(group, ruler, i, None, answered=said), "answerable": False, "level": None, "hook": hook}

    rows = [hooked("shipped", ru, i, False) for ru in ("a", "b") for i in range(20)]
    rows += [hooked("loud", ru, i, i % 2 == 0) for ru in ("a", "b") for i in range(20)]
    loud = ablate.compare(rows, "loud", 50)
    assert loud["hook_silence"][0] == -0.5 and loud["hook_silence"][2] < 0 and loud["hook_tokens"][0] == 170
    assert loud["hook_delivered"] == (None, None, None) and loud["moves"]
    assert "hook: silence" in ablate.render(rows, 20)
