"""Stack packs: the shipped packs, the schema's error text, detection, file rules and the CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from paqad.cli import stackpack_cmd
from paqad.cli.main import cli
from paqad.cli.stackpack_cmd import stackpack
from paqad.eligibility import scaffold, stackpacks
from paqad.eligibility.stackpacks import RepoContext, StackPack
from paqad.errors import ConfigError, UsageError
from paqad.parse import parser_names

REQUIRED_PACKS = {
    "python", "javascript", "typescript", "go", "rust", "java", "kotlin", "c", "cpp", "csharp",
    "ruby", "php", "swift", "scala", "shell", "markdown", "yaml", "json", "docker-make",
}
ALWAYS_PACKS = {"markdown", "rst", "yaml", "json", "docker-make"}

GO_PACK = """\
name: go
files:
  - suffixes: [".go"]
    language: go
    parser: tree-sitter
    grammar: go
"""


@pytest.fixture
def packs() -> dict[str, StackPack]:
    return stackpacks.load_builtin_packs()


def _write(folder: Path, file_name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file_name
    path.write_text(text, encoding="utf-8")
    return path


def _error_text(tmp_path: Path, file_name: str, text: str) -> str:
    path = _write(tmp_path, file_name, text)
    with pytest.raises(ConfigError) as info:
        stackpacks.load_pack_file(path)
    return str(info.value)


def _context(paths: list[str], detected: tuple[str, ...] = ()) -> RepoContext:
    return stackpacks.repo_context(paths, detected)


# ---------------------------------------------------------------- built-in packs


def test_every_builtin_pack_loads_and_is_named_after_its_file(packs):
    assert REQUIRED_PACKS <= set(packs)
    for name, pack in packs.items():
        assert pack.name == name and pack.origin == stackpacks.BUILTIN
        assert pack.files or pack.named_files, name
        assert {r.parser for r in (*pack.files, *pack.named_files)} <= set(parser_names())


def test_builtin_files_revalidate_from_disk():
    for path in sorted(Path(__file__).parents[1].joinpath("stackpacks").glob("*.yaml")):
        assert stackpacks.load_pack_file(path).name == path.stem


def test_always_packs_are_exactly_the_prose_and_data_ones(packs):
    assert {p.name for p in packs.values() if p.always} == ALWAYS_PACKS


def test_no_suffix_is_claimed_by_two_builtin_packs_except_h(packs):
    owners: dict[str, list[str]] = {}
    for pack in packs.values():
        for suffix in pack.suffixes:
            owners.setdefault(suffix, []).append(pack.name)
    assert {s: o for s, o in owners.items() if len(o) > 1} == {".h": ["c", "cpp"]}


def test_python_uses_the_ast_parser(packs):
    rule = stackpacks.rule_for("pkg/mod.py", [packs["python"]], RepoContext())
    assert (rule.language, rule.parser, rule.grammar, rule.pack) == ("python", "python-ast", "python", "python")


def test_to_dict_round_trips_through_the_schema(packs):
    import yaml

    for pack in packs.values():
        text = yaml.safe_dump(pack.to_dict(), sort_keys=False)
        assert stackpacks.parse_pack(text, f"{pack.name}.yaml") == pack


# ---------------------------------------------------------------- schema errors


def test_bad_parser_names_file_pack_key_and_allowed_values(tmp_path):
    text = _error_text(tmp_path, "go.yaml", GO_PACK.replace("tree-sitter", "ast"))
    assert text == (
        "invalid stack pack\n"
        f"==> File {tmp_path / 'go.yaml'}\n"
        "==> At StackPack(name='go')\n"
        "==> At key: files\n"
        "==> At index 0\n"
        "==> At FileRule(language='go')\n"
        "==> At key: parser\n"
        "=====> Expected one of json, markdown, python-ast, rst, text, tree-sitter, yaml but got: 'ast'"
    )


def test_unknown_top_level_key_is_an_error(tmp_path):
    text = _error_text(tmp_path, "go.yaml", GO_PACK + "languages: [go]\n")
    assert f"==> File {tmp_path / 'go.yaml'}" in text
    assert "==> At StackPack(name='go')" in text
    assert "=====> Additional keys found: languages.  Only these keys are allowed: name, description" in text


def test_unknown_rule_key_is_an_error(tmp_path):
    text = _error_text(tmp_path, "go.yaml", GO_PACK + "    extensions: [.go]\n")
    assert "==> At StackPack(name='go')\n==> At key: files\n==> At index 0\n" in text
    assert "Additional keys found: extensions.  Only these keys are allowed: suffixes, language" in text


@pytest.mark.parametrize(
    ("extra", "key", "message"),
    [
        ("module_depth: two\n", "module_depth", "Expected an integer >= 1 but got: 'two'"),
        ("module_depth: true\n", "module_depth", "Expected an integer >= 1 but got: True"),
        ("always: 'yes'\n", "always", "Expected bool got str"),
        ("exclude_dirs: vendor\n", "exclude_dirs", "Expected array but got 'str'"),
        ("markers: [cmd/go.mod]\n", "markers", "Expected a single file or folder name (no '/') but got: 'cmd/go.mod'"),
        ("test_patterns: ['!']\n", "test_patterns", "Invalid gitwildmatch pattern '!'"),
    ],
)
def test_wrong_types_name_the_key(tmp_path, extra, key, message):
    text = _error_text(tmp_path, "go.yaml", GO_PACK + extra)
    assert f"==> File {tmp_path / 'go.yaml'}\n==> At StackPack(name='go')\n==> At key: {key}\n" in text
    assert message in text


def test_suffix_must_be_lower_case_with_a_dot(tmp_path):
    text = _error_text(tmp_path, "go.yaml", GO_PACK.replace('".go"', '"GO"'))
    assert "==> At key: suffixes\n" in text
    assert "Expected a lower-case suffix starting with '.' (like '.py') but got: 'GO'" in text


def test_name_must_equal_the_file_stem(tmp_path):
    text = _error_text(tmp_path, "go.yaml", GO_PACK.replace("name: go", "name: golang"))
    assert f"==> File {tmp_path / 'go.yaml'}\n==> At StackPack(name='golang')\n==> At key: name\n" in text
    assert "Expected 'go' (the file name without .yaml) but got: 'golang'" in text


def test_a_suffix_listed_twice_is_an_error(tmp_path):
    text = _error_text(tmp_path, "go.yaml", GO_PACK + GO_PACK[GO_PACK.index("  - suffixes"):])
    assert "==> At StackPack(name='go')\n==> At key: files\n=====> '.go' is listed twice" in text


def test_missing_name_and_bad_yaml_and_empty_file(tmp_path):
    assert "Missing required key: name" in _error_text(tmp_path, "go.yaml", "files: []\n")
    assert "Invalid YAML" in _error_text(tmp_path, "go.yaml", "name: [go\n")
    assert "Expected a StackPack map but got a NoneType" in _error_text(tmp_path, "go.yaml", "")


# ---------------------------------------------------------------- detection


@pytest.mark.parametrize(
    ("markers", "expected"),
    [
        (["pyproject.toml"], ["python"]),
        (["go.mod"], ["go"]),
        (["package.json", "tsconfig.json"], ["javascript", "typescript"]),
        (["Cargo.toml"], ["rust"]),
        (["App.csproj"], ["csharp"]),
        (["README.md"], []),
    ],
)
def test_detect_from_root_markers(tmp_path, packs, markers, expected):
    for marker in markers:
        (tmp_path / marker).write_text("", encoding="utf-8")
    assert stackpacks.detect(tmp_path, packs, []) == expected


def test_markers_only_count_at_the_root(tmp_path, packs):
    _write(tmp_path / "tools", "go.mod", "")
    assert stackpacks.detect(tmp_path, packs, []) == []


def test_detect_from_candidate_suffixes_and_named_files(tmp_path, packs):
    paths = ["src/main.rs", "scripts/build.sh", "Gemfile", "docs/index.md", "Dockerfile"]
    assert stackpacks.detect(tmp_path, packs, paths) == ["ruby", "rust", "shell"]


def test_lone_headers_detect_c_or_cpp_by_the_h_rule(tmp_path, packs):
    assert stackpacks.detect(tmp_path, packs, ["include/a.h"]) == ["c"]
    assert stackpacks.detect(tmp_path, packs, ["include/a.h", "include/b.hpp"]) == ["cpp"]


def test_active_packs_add_always_packs_and_fall_back_to_everything(packs):
    active = {p.name for p in stackpacks.active_packs(packs, ["go"])}
    assert active == {"go"} | ALWAYS_PACKS
    assert {p.name for p in stackpacks.active_packs(packs, [])} == set(packs)


def test_activate_in_an_unrecognised_tree_uses_every_pack(tmp_path, packs):
    active, context = stackpacks.activate(tmp_path, packs, ["notes.txt"])
    assert len(active) == len(packs) and context.detected == frozenset()


# ---------------------------------------------------------------- file → rule


def test_ts_and_tsx_get_different_grammars(packs):
    active = [packs["typescript"]]
    assert stackpacks.rule_for("src/a.ts", active, RepoContext()).grammar == "typescript"
    assert stackpacks.rule_for("src/a.mts", active, RepoContext()).grammar == "typescript"
    assert stackpacks.rule_for("src/App.tsx", active, RepoContext()).grammar == "tsx"
    assert stackpacks.rule_for("src/App.TSX", active, RepoContext()).grammar == "tsx"
    assert stackpacks.rule_for("src/a.js", active, RepoContext()) is None


def test_h_is_cpp_when_the_repository_has_cpp_sources(packs):
    active = [packs["c"], packs["cpp"]]
    with_cpp = _context(["src/a.cpp", "include/a.h"], ("c", "cpp"))
    assert stackpacks.rule_for("include/a.h", active, with_cpp).grammar == "cpp"


def test_h_is_c_without_cpp_sources(packs):
    active = [packs["c"], packs["cpp"]]
    c_only = _context(["src/a.c", "include/a.h"], ("c",))
    assert stackpacks.rule_for("include/a.h", active, c_only).grammar == "c"
    assert stackpacks.rule_for("include/a.h", active, _context(["a.h"], ("c", "cpp"))).grammar == "c"


def test_h_is_cpp_when_cpp_was_detected_without_c(packs):
    active = [packs["c"], packs["cpp"]]
    assert stackpacks.rule_for("a.h", active, _context(["a.h"], ("cpp",))).grammar == "cpp"


def test_resolve_rule_applies_the_h_rule_directly(packs):
    claimants = [packs["cpp"], packs["c"]]
    assert stackpacks.resolve_rule("x.h", claimants, _context(["y.hh"])).pack == "cpp"
    assert stackpacks.resolve_rule("x.h", claimants, _context([])).pack == "c"


def test_named_files_are_exact_and_win_over_suffixes(packs):
    active = list(packs.values())
    ctx = RepoContext()
    assert stackpacks.rule_for("Dockerfile", active, ctx).language == "dockerfile"
    assert stackpacks.rule_for("svc/Containerfile", active, ctx).language == "dockerfile"
    assert stackpacks.rule_for("GNUmakefile", active, ctx).language == "make"
    assert stackpacks.rule_for("build/rules.mk", active, ctx).language == "make"
    assert stackpacks.rule_for("app.Dockerfile", active, ctx).language == "dockerfile"
    assert stackpacks.rule_for("Gemfile", active, ctx).grammar == "ruby"
    assert stackpacks.rule_for("DOCKERFILE", active, ctx) is None
    assert stackpacks.rule_for(".bashrc", active, ctx) is None


def test_suffixes_of_is_lower_case_longest_first():
    assert stackpacks.suffixes_of("types.d.TS") == [".d.ts", ".ts"]
    assert stackpacks.suffixes_of(".bashrc") == []
    assert stackpacks.suffixes_of("Makefile") == []


def test_exclude_dirs_and_test_paths(packs):
    active = stackpacks.active_packs(packs, ["typescript", "python"])
    assert {"node_modules", "__pycache__", ".venv"} <= stackpacks.all_exclude_dirs(active)
    assert "target" not in stackpacks.all_exclude_dirs(active)
    assert stackpacks.is_test_path("src/app.test.ts", active)
    assert stackpacks.is_test_path("src/__tests__/app.ts", active)
    assert stackpacks.is_test_path("pkg/tests/helpers.py", active)
    assert stackpacks.is_test_path("test_app.py", active)
    assert not stackpacks.is_test_path("src/app.ts", active)
    assert stackpacks.is_test_path("x/y_test.go", [packs["go"]])
    assert not stackpacks.is_test_path("x/y_test.go", [packs["markdown"]])


# ---------------------------------------------------------------- user packs


def test_user_pack_overrides_a_builtin_and_adds_a_new_one(tmp_path):
    user_dir = tmp_path / ".paqad" / "stackpacks"
    _write(user_dir, "go.yaml", GO_PACK.replace('".go"', '".go", ".tmpl"') + "exclude_dirs: [third_party]\n")
    _write(user_dir, "nim.yaml", scaffold.scaffold("nim"))
    packs = stackpacks.load_packs(tmp_path)
    assert packs["go"].suffixes == (".go", ".tmpl") and packs["go"].exclude_dirs == ("third_party",)
    assert packs["go"].origin == str(user_dir / "go.yaml")
    assert packs["nim"].languages == ("nim",) and "python" in packs
    assert list(packs) == sorted(packs)


def test_a_user_pack_wins_a_suffix_tie_with_a_builtin(tmp_path, packs):
    deno = GO_PACK.replace("name: go", "name: deno").replace('".go"', '".ts"').replace("language: go", "language: deno")
    user = stackpacks.load_pack_file(_write(tmp_path, "deno.yaml", deno))
    rule = stackpacks.rule_for("main.ts", [packs["typescript"], user], RepoContext())
    assert rule.pack == "deno"


def test_a_broken_user_pack_is_a_config_error_naming_it(tmp_path):
    _write(tmp_path / ".paqad" / "stackpacks", "go.yaml", GO_PACK + "colour: blue\n")
    with pytest.raises(ConfigError, match=r"File .*\.paqad/stackpacks/go\.yaml\n==> At StackPack\(name='go'\)"):
        stackpacks.load_packs(tmp_path)


def test_scaffold_is_a_valid_pack_with_every_key_explained():
    text = scaffold.scaffold("nim")
    pack = stackpacks.parse_pack(text, "nim.yaml")
    assert pack.name == "nim" and pack.files[0].suffixes == (".nim",)
    for key in pack.to_dict():
        assert f"# {key}:" in text


def test_scaffold_rejects_a_bad_name():
    with pytest.raises(UsageError, match="invalid stack pack name 'Dart!'"):
        scaffold.scaffold("Dart!")


def test_write_user_pack_never_overwrites(tmp_path):
    target = scaffold.write_user_pack(tmp_path, "nim")
    assert target == tmp_path / ".paqad" / "stackpacks" / "nim.yaml"
    with pytest.raises(UsageError, match="already exists"):
        scaffold.write_user_pack(tmp_path, "nim")


# ---------------------------------------------------------------- CLI


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(stackpack_cmd, "_repo_root", lambda: tmp_path)
    return tmp_path


def test_cli_list_json_parses_and_marks_detection(repo):
    (repo / "go.mod").write_text("module x\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["stackpack", "list", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    by_name = {p["name"]: p for p in data["packs"]}
    assert data["detected"] == ["go"] and by_name["go"]["detected"] and by_name["go"]["active"]
    assert by_name["markdown"]["always"] and by_name["markdown"]["active"]
    assert not by_name["rust"]["active"]
    assert by_name["typescript"]["suffixes"] == [".ts", ".mts", ".cts", ".tsx"]


def test_cli_list_table(repo):
    result = CliRunner().invoke(cli, ["stackpack", "list"])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0].split() == ["NAME", "DETECTED", "LANGUAGES", "FILES"]
    assert "(no stack detected: every pack is used)" in result.stdout


def test_cli_show_python(repo):
    result = CliRunner().invoke(cli, ["stackpack", "show", "python"])
    assert result.exit_code == 0
    assert "name: python\n" in result.stdout and "parser: python-ast\n" in result.stdout
    as_json = json.loads(CliRunner().invoke(cli, ["stackpack", "show", "python", "--json"]).stdout)
    assert as_json["files"][0]["grammar"] == "python" and as_json["origin"] == "builtin"


def test_cli_show_unknown_pack_exits_2_with_one_line(repo):
    result = CliRunner().invoke(cli, ["stackpack", "show", "cobol"])
    assert result.exit_code == 2
    assert result.stderr.startswith("paqad: error: no stack pack named 'cobol'; choose from: c, cpp")
    assert result.stderr.count("\n") == 1


def test_cli_new_writes_then_refuses(repo):
    first = CliRunner().invoke(cli, ["stackpack", "new", "nim"])
    assert first.exit_code == 0 and first.stdout == "wrote .paqad/stackpacks/nim.yaml\n"
    assert stackpacks.load_packs(repo)["nim"].origin.endswith("nim.yaml")
    second = CliRunner().invoke(cli, ["stackpack", "new", "nim"])
    assert second.exit_code == 2
    assert second.stderr == "paqad: error: .paqad/stackpacks/nim.yaml already exists; edit it or remove it first\n"


def test_cli_new_stdout_writes_nothing(repo):
    result = CliRunner().invoke(cli, ["stackpack", "new", "nim", "--stdout"])
    assert result.exit_code == 0 and result.stdout == scaffold.scaffold("nim")
    assert not (repo / ".paqad").exists()


def test_cli_broken_user_pack_exits_2_on_one_line(repo):
    _write(repo / ".paqad" / "stackpacks", "go.yaml", GO_PACK + "colour: blue\n")
    result = CliRunner().invoke(cli, ["stackpack", "show", "go"])
    assert result.exit_code == 2
    assert result.stderr.startswith("paqad: error: invalid stack pack ==> File ") and result.stderr.count("\n") == 1
    assert "==> At StackPack(name='go') =====> Additional keys found: colour." in result.stderr


def test_every_command_has_a_summary_and_an_example():
    for command in [stackpack, *stackpack.commands.values()]:
        assert command.help and "Example: paqad stackpack" in command.help, command.name


def test_repo_root_uses_git_then_falls_back_to_cwd(tmp_path, monkeypatch):
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert stackpack_cmd._repo_root() == plain
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo / "sub")
    assert stackpack_cmd._repo_root().resolve() == repo.resolve()
