"""Layered settings: each layer overrides the one below, every error names file, key and allowed values."""

from __future__ import annotations

import os
import time

import pytest

from paqad import config, workspace
from paqad.errors import ConfigError


def test_defaults(repo):
    cfg = config.load(repo.root, environ={})
    assert cfg["rag_enabled"] is False
    assert cfg["rag_top_n"] == 20
    assert cfg["rag_similarity_threshold"] == 0.75
    assert cfg["rag_relief_floor"] == 0.35
    assert cfg["rag_max_file_size"] == 1048576
    assert cfg["rag_embedding_provider"] == "local"
    assert cfg["rag_base_branch"] == "auto"
    assert cfg.source("rag_top_n") == "default"


def test_layers_in_order(repo):
    repo.write(".paqad/configs/10-team.yaml", "rag_top_n: 11\nrag_max_file_size: 1000\n")
    repo.write(".paqad/configs/20-team.yaml", "rag_top_n: 12\n")
    repo.write_local("rag_max_file_size: 2000\nrag_relief_floor: 0.4\n")
    cfg = config.load(repo.root, environ={"PAQAD_RAG_RELIEF_FLOOR": "0.5"}, cli_overrides={"rag_relief_floor": "0.6"})
    assert (cfg["rag_top_n"], cfg.source("rag_top_n")) == (12, ".paqad/configs/20-team.yaml")
    assert (cfg["rag_max_file_size"], cfg.source("rag_max_file_size")) == (2000, str(workspace.local_config_path(repo.root)))
    assert (cfg["rag_relief_floor"], cfg.source("rag_relief_floor")) == (0.6, "cli")
    env_only = config.load(repo.root, environ={"PAQAD_RAG_RELIEF_FLOOR": "0.5"})
    assert (env_only["rag_relief_floor"], env_only.source("rag_relief_floor")) == (0.5, "env PAQAD_RAG_RELIEF_FLOOR")


def test_unknown_key_names_file_and_key(repo):
    repo.write_local("rag_top_m: 5\n")
    with pytest.raises(ConfigError) as err:
        config.load(repo.root, environ={})
    assert str(workspace.local_config_path(repo.root)) in str(err.value) and "'rag_top_m'" in str(err.value) and "rag_top_n" in str(err.value)


@pytest.mark.parametrize(
    "line, expected",
    [
        ("rag_top_n: many", "an integer from 1 to 500"),
        ("rag_top_n: 0", "an integer from 1 to 500"),
        ("rag_similarity_threshold: 1.5", "a number from 0 to 1"),
        ("rag_enabled: maybe", "true or false"),
        ("rag_embedding_provider: magic", "one of none"),
    ],
)
def test_bad_value_names_allowed_values(repo, line, expected):
    repo.write(".paqad/configs/team.yaml", line + "\n")
    with pytest.raises(ConfigError) as err:
        config.load(repo.root, environ={})
    assert ".paqad/configs/team.yaml" in str(err.value)
    assert line.split(":")[0] in str(err.value) and expected in str(err.value)


def test_broken_yaml_is_an_error_not_defaults(repo):
    repo.write_local("rag_top_n: [1,\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        config.load(repo.root, environ={})


def test_bad_env_value(repo):
    with pytest.raises(ConfigError, match="env PAQAD_RAG_TOP_N"):
        config.load(repo.root, environ={"PAQAD_RAG_TOP_N": "lots"})
    with pytest.raises(ConfigError, match="unknown setting 'rag_nope'"):
        config.load(repo.root, environ={"PAQAD_RAG_NOPE": "1"})


def test_set_value_writes_local_and_validates(repo):
    path = config.set_value(repo.root, "rag_top_n", "33")
    assert path == workspace.local_config_path(repo.root)
    assert config.load(repo.root, environ={})["rag_top_n"] == 33
    with pytest.raises(ConfigError):
        config.set_value(repo.root, "rag_top_n", "-1")
    assert config.load(repo.root, environ={})["rag_top_n"] == 33
    team = config.set_value(repo.root, "rag_top_n", "7", team=True)
    assert team.name == "team.yaml" and "configs" in team.parts
    assert not (repo.root / ".paqad" / ".config").exists()  # the developer's own settings never go into the work tree


@pytest.mark.parametrize(
    "line",
    ["rag_embedding_provider: openai", "rag_embedding_provider: voyageai", "rag_embedding_base_url: https://collector.example",
     "rag_rerank: cohere", "rag_rerank_base_url: https://collector.example"],
)
def test_a_committed_team_config_cannot_send_code_off_the_machine(repo, paqad_cli, line):
    """A cloned repository's own config must not choose a remote provider or endpoint for the user."""
    repo.write(".paqad/configs/10-team.yaml", line + "\n")
    with pytest.raises(ConfigError, match=r"10-team.yaml.*off this machine.*paqad config set"):
        config.load(repo.root, environ={})
    key, value = (part.strip() for part in line.split(":", 1))
    shown = paqad_cli("config", "list", cwd=repo.root)
    assert shown.returncode == 2 and "off this machine" in shown.stderr
    # The user's own layer may choose it.
    repo.write(".paqad/configs/10-team.yaml", "rag_top_n: 7\n")
    repo.write_local(f"{key}: {value}\n")
    assert config.load(repo.root, environ={})[key] == value


def test_a_team_config_may_choose_on_machine_values(repo):
    repo.write(".paqad/configs/10-team.yaml", "rag_embedding_provider: none\nrag_rerank: off\nrag_embedding_base_url: ''\n")
    cfg = config.load(repo.root, environ={})
    assert cfg["rag_embedding_provider"] == "none" and cfg["rag_rerank"] == "off"


@pytest.mark.parametrize(("typed", "meant"), [("rag_top_m", "rag_top_n"), ("rag-top-n", "rag_top_n"), ("rag_embeding_provider", "rag_embedding_provider"), ("top_n", "rag_top_n")])
def test_a_mistyped_setting_says_what_was_meant_instead_of_listing_everything(repo, typed, meant):
    """Issue 34 item 6: a typo names the setting it resembles, in one short line."""
    with pytest.raises(ConfigError) as err:
        config.load(repo.root, cli_overrides={typed: "5"}, environ={})
    message = str(err.value)
    assert f"did you mean {meant}?" in message and "known settings" not in message and len(message) < 160


def test_an_unknown_setting_like_nothing_lists_the_settings(repo):
    with pytest.raises(ConfigError, match="known settings: rag_enabled"):
        config.load(repo.root, cli_overrides={"colour": "5"}, environ={})


def test_kept_settings_follow_every_input_of_load(repo, monkeypatch):
    """``load_kept`` (the service's settings per request, issue 34) answers from memory while
    nothing ``load`` reads moved, and afresh after an edit in place of the same size, a new team
    file, a ``PAQAD_*`` variable, or a file broken (the error, never a kept answer)."""
    monkeypatch.setattr(config, "SETTLE_NS", -(10**12))  # every stat counts as settled...

    def tick() -> None:
        time.sleep(0.03)  # ...so each edit comes a file-system clock tick after the last read

    for var in [v for v in os.environ if v.startswith("PAQAD_RAG_")]:
        monkeypatch.delenv(var)
    repo.write_local("rag_top_n: 11\n")
    first = config.load_kept(repo.root)
    assert first.rag_top_n == 11 and config.load_kept(repo.root) is first  # kept, not read again
    tick()
    repo.write_local("rag_top_n: 12\n")  # same size, rewritten in place
    assert config.load_kept(repo.root).rag_top_n == 12
    tick()
    repo.write(".paqad/configs/10-team.yaml", "rag_relief_floor: 0.4\n")
    assert config.load_kept(repo.root).rag_relief_floor == 0.4
    monkeypatch.setenv("PAQAD_RAG_TOP_N", "13")
    assert config.load_kept(repo.root).rag_top_n == 13
    monkeypatch.delenv("PAQAD_RAG_TOP_N")  # gone again: the file's value (the environment is read through its bytes)
    assert config.load_kept(repo.root).rag_top_n == 12
    tick()
    repo.write(".paqad/configs/10-team.yaml", "rag_top_m: 5\n")
    with pytest.raises(ConfigError, match="rag_top_m"):
        config.load_kept(repo.root)
    with pytest.raises(ConfigError, match="rag_top_m"):
        config.load_kept(repo.root)
