"""Where per-developer state lives: the Python and the shell lookups agree (the git shim and the
host commands use the shell one), and a host that substitutes environment variables into a hook
command before its shell runs it (Gemini CLI does, for ``$NAME`` and ``${NAME:-default}``) still
gets a command that runs."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from paqad import localstate
from paqad.hooks.hosts import launcher


def _sh_tree(cwd: Path, env: dict[str, str]) -> str:
    script = localstate.SH_TREE_DIR + 'printf %s "$paqad_tree"'
    return subprocess.run(["sh", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize(
    "extra",
    [{}, {"XDG_DATA_HOME": "/srv/data"}, {"XDG_DATA_HOME": "relative/ignored"}, {"PAQAD_DATA_DIR": "/opt/paqad-data"}, {"PAQAD_DATA_DIR": "rel", "XDG_DATA_HOME": "/x y/data"}],
)
def test_the_shell_and_python_find_the_same_folder(tmp_path: Path, extra: dict[str, str]) -> None:
    work = tmp_path / "my work" / "tree"
    work.mkdir(parents=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), **extra}
    assert _sh_tree(work, env) == localstate.tree_dir(work, env)
    assert localstate.tree_dir(work, env).endswith(str(work.resolve()) + ".paqad")


def test_a_nested_work_tree_gets_a_folder_of_its_own(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    outer, inner = tmp_path / "shop", tmp_path / "shop" / "vendor" / "lib"
    inner.mkdir(parents=True)
    assert not localstate.tree_dir(inner, env).startswith(localstate.tree_dir(outer, env) + os.sep)


def _gemini_substitution(command: str, env: dict[str, str]) -> str:
    """Gemini CLI 0.61's ``resolveEnvVarsInString``, which it applies to settings.json strings."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2) or ""
        if name in env:
            return env[name]
        return match.group(3) if match.group(3) is not None else match.group(0)

    return re.sub(r"\$(?:(\w+)|{([^}]+?)(?::-([^}]*))?})", replace, command)


@pytest.mark.parametrize("extra", [{}, {"XDG_DATA_HOME": "xdg"}, {"PAQAD_DATA_DIR": "p d"}])
def test_a_host_that_substitutes_variables_first_still_runs_the_launcher(tmp_path: Path, extra: dict[str, str]) -> None:
    home = tmp_path / "home dir"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), **{name: str(tmp_path / value) for name, value in extra.items()}}
    data = Path(localstate.data_home(env))
    (data / "bin").mkdir(parents=True)
    (data / "bin" / "paqad").write_text("#!/bin/sh\necho \"launcher $*\"\n")
    (data / "bin" / "paqad").chmod(0o755)
    command = _gemini_substitution(launcher.command("prompt-submit", "gemini"), env)
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, input="{}", capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "launcher hook run prompt-submit --host gemini", "")


def test_a_kept_real_path_follows_a_repointed_link_and_a_moved_folder(tmp_path: Path) -> None:
    """``real_path`` keeps a work tree's real path between calls, never past a change of where the
    path leads: a symlink pointed elsewhere, or the folder moved and the link pointed after it."""
    a, b, link = tmp_path / "a", tmp_path / "b", tmp_path / "link"
    a.mkdir()
    b.mkdir()
    link.symlink_to(a)
    assert localstate.real_path(link) == localstate.real_path(str(link)) == os.path.realpath(a)
    link.unlink()
    link.symlink_to(b)
    assert localstate.real_path(link) == os.path.realpath(b)
    moved = tmp_path / "moved"
    b.rename(moved)  # the same folder (device and inode) under a new real path
    link.unlink()
    link.symlink_to(moved)
    assert localstate.real_path(link) == os.path.realpath(moved)
    assert localstate.tree_dir(link).endswith(os.path.realpath(moved) + localstate.SUFFIX)
    assert localstate.real_path("relative/x") == os.path.realpath("relative/x")
