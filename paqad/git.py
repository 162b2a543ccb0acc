"""All git access: the only module in paqad that starts git. One wrapper, one error type.

Why one module: git is reached from the index (file lists), the hook installer (hooks folder,
config), the prompt path (the working set) and drift (the network). With one wrapper every call
gets the same guarantees, and a test (tests/git_test.py) checks that nothing else starts git:

- a timeout, after which git *and its children* (``git-remote-http``, ``ssh``) are killed: git runs
  in its own session, so the whole process group goes and no grandchild keeps our pipes open;
- ``no_git_env()``: a git started inside a git hook must not inherit ``GIT_DIR``/``GIT_INDEX_FILE``
  (they would point it at the wrong repository), and never prompts (``GIT_TERMINAL_PROMPT=0``, no
  stdin, no controlling terminal);
- ``-z`` for every file list (names are bytes; nothing is unquoted by hand);
- network calls (``ls-remote``, ``fetch``) in batch mode, :func:`batch_env`;
- one error, :class:`GitError`, carrying the command, return code, stdout and stderr.

The error contract: :func:`run` and :func:`run_network` raise ``GitError``. The question
functions below say in their docstring whether they raise or answer "nothing" (None, [], 0):
the working-set ones never raise, because the working set feeds a hook and a hook never fails.

The git CLI, not GitPython: measured, GitPython's import (~150-190 ms of CPU, and two ``git
version`` processes of its own) costs more than the few milliseconds per call it saves on config
and ref reads, in every process paqad runs; its ``ls_remote``/``fetch``/``merge_base``/``diff``
start the same git processes as here, and its file lists are ten times slower (docs/architecture.md, Design decisions).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paqad.errors import PaqadError

if TYPE_CHECKING:
    from paqad.jsontypes import JSONObject

TIMEOUT_S = 30.0
QUICK_TIMEOUT_S = 10.0  # a question git answers from local files
HOT_TIMEOUT_S = 5.0  # the working set, asked on the prompt path
NETWORK_TIMEOUT_S = 15.0
SSH_CONNECT_TIMEOUT_S = 10
KILL_GRACE_S = 5.0  # for the pipes to close once git's process group is killed
MESSAGE_MAX_CHARS = 2000  # of stdout / stderr each, in GitError's message


class GitError(PaqadError):
    """A git command failed or timed out. The message is pre-commit's ``CalledProcessError`` layout:
    the command, the return code, then stdout and stderr indented, so a user sees what git said."""

    def __init__(self, cmd: Sequence[str], returncode: int | None, stdout: bytes = b"", stderr: bytes = b"", reason: str = "") -> None:
        self.cmd = tuple(cmd)
        self.returncode = returncode
        self.stdout = stdout.decode("utf-8", "replace")
        self.stderr = stderr.decode("utf-8", "replace")
        self.reason = reason  # why there is no return code: "timed out after 5s", "git is not installed"
        super().__init__(self._message())

    @property
    def timed_out(self) -> bool:
        return self.reason.startswith("timed out")

    def _message(self) -> str:
        def part(text: str) -> str:
            text = text.strip()[:MESSAGE_MAX_CHARS]
            return "\n    " + text.replace("\n", "\n    ") if text else " (none)"

        code = str(self.returncode) if self.returncode is not None else f"none ({self.reason})"
        return f"command: {self.cmd!r}\nreturn code: {code}\nstdout:{part(self.stdout)}\nstderr:{part(self.stderr)}"


# ---- the environment ---------------------------------------------------------------------------

# Variables git exports into hooks that would point a nested git at another repository or index
# (pre-commit strips the same set: pre-commit/pre-commit issues #300, #1849, #2295).
_REPO_VARS = frozenset(
    {
        "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX", "GIT_NAMESPACE", "GIT_QUARANTINE_PATH",
        "GIT_EDITOR", "GIT_REFLOG_ACTION",
    }
)


def no_git_env() -> dict[str, str]:
    """The environment minus the repository-redirecting variables git sets in hooks; no prompts.

    Also what every child paqad starts inside a hook gets (``paqad hook run`` scrubs its own)."""
    env = {k: v for k, v in os.environ.items() if k not in _REPO_VARS}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def batch_env() -> dict[str, str]:
    """For calls that reach a remote: no prompt of any kind, so an unattended hook cannot hang.

    git's own prompt is off, the askpass helpers answer nothing, ssh runs in batch mode with a
    connect timeout (a user's ``GIT_SSH_COMMAND`` is kept, the options appended), and Git
    Credential Manager may not open a window. Credential helpers stay: a stored credential is
    not a prompt, and it is how a private HTTPS remote answers unattended."""
    env = no_git_env()
    env.update(GIT_ASKPASS="true", SSH_ASKPASS="true", SSH_ASKPASS_REQUIRE="never", GCM_INTERACTIVE="never")
    ssh = env.get("GIT_SSH_COMMAND") or "ssh"
    env["GIT_SSH_COMMAND"] = f"{ssh} -o BatchMode=yes -o ConnectTimeout={SSH_CONNECT_TIMEOUT_S}"
    return env


# ---- the wrapper -------------------------------------------------------------------------------


def run(args: list[str], cwd: Path, timeout: float = TIMEOUT_S, env: dict[str, str] | None = None) -> bytes:
    """Run ``git ARGS`` in ``cwd`` and return stdout; raise GitError on failure or timeout."""
    cmd = ["git", *args]
    try:
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env if env is not None else no_git_env(), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
    except OSError as exc:  # no git, or no such folder: which one, exc.filename says
        missing_git = isinstance(exc, FileNotFoundError) and exc.filename == "git"
        raise GitError(cmd, None, reason="git is not installed or not on PATH" if missing_git else str(exc)) from exc
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:  # a helper that left the group (an ssh ControlMaster) could keep the pipes open
            out, err = proc.communicate(timeout=KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            out, err = b"", b""
        raise GitError(cmd, None, out, err, reason=f"timed out after {timeout:g}s") from None
    except BaseException:  # Ctrl-C: git is in its own session and would not get the SIGINT
        _kill_group(proc)
        proc.wait()
        raise
    if proc.returncode != 0:
        raise GitError(cmd, proc.returncode, out, err)
    return out


def run_network(args: list[str], cwd: Path, timeout: float = NETWORK_TIMEOUT_S) -> bytes:
    """:func:`run` for a call that talks to a remote: batch mode (:func:`batch_env`) and a timeout."""
    return run(args, cwd, timeout=timeout, env=batch_env())


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def zsplit(data: bytes) -> list[str]:
    """A ``-z`` list as names (undecodable bytes kept as surrogates, so they round-trip)."""
    return [part.decode("utf-8", "surrogateescape") for part in data.split(b"\0") if part]


def _text(args: list[str], root: Path, timeout: float = QUICK_TIMEOUT_S) -> str | None:
    """One line of output, or None when git fails or says nothing."""
    try:
        return run(args, cwd=root, timeout=timeout).decode("utf-8", "replace").strip() or None
    except GitError:
        return None


# ---- the repository ----------------------------------------------------------------------------


def toplevel(path: Path) -> Path | None:
    """The work tree root containing ``path``, or None outside a git work tree."""
    out = _text(["rev-parse", "--show-toplevel"], path)
    return Path(out) if out else None


def is_bare(path: Path) -> bool:
    """True when ``path`` is inside a bare repository (a git dir with no work tree to index)."""
    return git_dir_kind(path) == "bare"


def git_dir_kind(path: Path) -> str | None:
    """Outside a work tree, whether ``path`` is inside a git dir: ``"bare"`` (a bare repository),
    ``"git dir"`` (a work tree's ``.git``), or None (not git's at all)."""
    out = _text(["rev-parse", "--is-bare-repository", "--is-inside-git-dir"], path)
    lines = (out or "").split()
    if lines[:1] == ["true"]:
        return "bare"
    return "git dir" if lines[1:2] == ["true"] else None


def hooks_path(root: Path) -> Path:
    """The folder git runs hooks from (``core.hooksPath`` and linked worktrees honoured); raises
    GitError outside a repository."""
    path = Path(run(["rev-parse", "--git-path", "hooks"], cwd=root, timeout=QUICK_TIMEOUT_S).decode().strip())
    return path if path.is_absolute() else root / path


def config_get(root: Path, key: str) -> str | None:
    """A config value as git resolves it (every scope, includes, ``-c``/``GIT_CONFIG_*``), or None."""
    return _text(["config", "--get", key], root)


def remote_url(root: Path, remote: str) -> str | None:
    """The fetch URL of ``remote``, or None when no such remote is configured."""
    return _text(["remote", "get-url", remote], root)


def head_commit(root: Path) -> str | None:
    """The commit HEAD points at, or None in a repository with no commits."""
    return rev_parse(root, "HEAD")


def rev_parse(root: Path, ref: str) -> str | None:
    """The object name ``ref`` resolves to, or None when it does not resolve."""
    return _text(["rev-parse", "--verify", "-q", ref], root)


def recent_commits(root: Path, limit: int) -> list[str]:
    """HEAD and its ancestors, nearest first (``rev-list --topo-order``), at most ``limit``; [] when
    git cannot say (no commits yet). The index artifacts of these commits are the ones a clone can use."""
    out = _text(["rev-list", "--topo-order", f"--max-count={int(limit)}", "HEAD"], root)
    return out.split() if out else []


def count_commits(root: Path, revisions: str) -> int:
    """How many commits ``revisions`` (``A..B``) lists; 0 when git cannot say."""
    out = _text(["rev-list", "--count", revisions], root)
    return int(out) if out and out.isdigit() else 0


def diff_names(root: Path, old: str, new: str, timeout: float = QUICK_TIMEOUT_S) -> list[str]:
    """Files that differ between two commits; [] when git cannot say."""
    try:
        return zsplit(run(["diff", "--name-only", "-z", "--no-renames", old, new], cwd=root, timeout=timeout))
    except GitError:
        return []


# ---- workspace members given by URL (only when the user runs `paqad workspace add|fetch`) ------

CLONE_TIMEOUT_S = 600.0


def clone(url: str, dest: Path, timeout: float = CLONE_TIMEOUT_S) -> None:
    """``git clone`` of ``url`` into ``dest`` (a new folder), in batch mode: the URL after ``--``
    (never read as an option), no submodules, no hooks of ours. Raises GitError."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    run(["clone", "--quiet", "--no-recurse-submodules", "--", url, str(dest)], cwd=dest.parent, timeout=timeout, env=batch_env())


def fetch_and_reset(root: Path, timeout: float = CLONE_TIMEOUT_S) -> tuple[str | None, str | None]:
    """Bring a clone of ours to its remote's tip: fetch ``origin`` and reset the checked-out
    branch to its upstream (the clone is paqad's, never edited by hand). (old, new) HEAD. Raises GitError."""
    old = head_commit(root)
    run(["fetch", "--quiet", "--prune", "origin"], cwd=root, timeout=timeout, env=batch_env())
    run(["reset", "--quiet", "--hard", "@{upstream}"], cwd=root, timeout=QUICK_TIMEOUT_S)
    return old, head_commit(root)


# ---- eligibility: git's own ignore semantics ---------------------------------------------------


def listed_files(root: Path) -> list[str]:
    """Tracked and untracked-but-not-ignored files: exactly git's ignore semantics, nested .gitignore
    included. Raises GitError (the index build reports it)."""
    return zsplit(run(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root))


def ignored_files(root: Path) -> list[str]:
    """Untracked files git ignores (only asked for when ``include`` overrides exist). Raises GitError."""
    return zsplit(run(["ls-files", "-z", "--others", "--ignored", "--exclude-standard"], cwd=root))


def tracked_under(root: Path, folder: str) -> list[str]:
    """Files git tracks under ``folder`` (repository-relative); [] outside git or on any failure."""
    try:
        return zsplit(run(["ls-files", "-z", "--cached", "--", folder], cwd=root, timeout=QUICK_TIMEOUT_S))
    except GitError:
        return []


def check_ignore(root: Path, path: str) -> str | None:
    """Which ignore rule drops ``path`` (``source:line:pattern``), or None if git does not ignore it."""
    line = _text(["check-ignore", "-v", "--no-index", "--", path], root)
    return line.split("\t")[0] if line else None


# ---- the remote (batch mode, timeouts) ---------------------------------------------------------


def ls_remote_head(root: Path, remote: str, branch: str, timeout: float = NETWORK_TIMEOUT_S) -> str | None:
    """The tip of ``branch`` on ``remote`` as the remote says now, or None when it has no such
    branch. Raises GitError when the remote cannot be asked (offline, credentials, timeout)."""
    out = run_network(["ls-remote", "--heads", remote, f"refs/heads/{branch}"], root, timeout).decode("utf-8", "replace")
    return out.split()[0] if out.split() else None


def fetch_branch(root: Path, remote: str, branch: str, tracking: str, timeout: float = NETWORK_TIMEOUT_S) -> None:
    """Fetch ``branch`` from ``remote`` into the ref ``tracking`` (forced, no tags). Raises GitError."""
    run_network(["fetch", "--quiet", "--no-tags", remote, f"+refs/heads/{branch}:{tracking}"], root, timeout)


# ---- the working set: what the developer is changing now (never raises) ------------------------

AUTO_BASES = ("main", "master")
MAX_SUBJECTS = 20


@dataclass
class WorkingSet:
    """Files being changed (staged, unstaged, untracked, committed since the merge-base) and the commits."""

    base: str | None = None
    merge_base: str | None = None
    staged: list[str] = field(default_factory=list)
    unstaged: list[str] = field(default_factory=list)
    untracked: list[str] = field(default_factory=list)
    committed: list[str] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)
    head: str | None = None  # the commit HEAD pointed at (``git status`` says it anyway)

    @property
    def files(self) -> list[str]:
        return sorted(set(self.staged) | set(self.unstaged) | set(self.untracked) | set(self.committed))

    def to_dict(self) -> JSONObject:
        return {**asdict(self), "files": self.files}


def _hot_lines(args: list[str], root: Path) -> list[str]:
    try:
        return zsplit(run(args, cwd=root, timeout=HOT_TIMEOUT_S))
    except GitError:
        return []


def staged_files(root: Path) -> list[str]:
    return _hot_lines(["diff", "--cached", "--name-only", "-z", "--no-renames"], root)


def unstaged_files(root: Path) -> list[str]:
    return _hot_lines(["diff", "--name-only", "-z", "--no-renames"], root)


def untracked_files(root: Path) -> list[str]:
    return _hot_lines(["ls-files", "-z", "--others", "--exclude-standard"], root)


#: One git process for the three file lists and HEAD, where ``diff --cached``, ``diff`` and
#: ``ls-files --others`` took three (benchmarks/prompt_git_calls.py). ``--no-optional-locks``: a
#: plain ``status`` may refresh and rewrite the index, taking ``index.lock``, and a prompt that did
#: so beside the developer's ``git add`` would make theirs fail.
STATUS_ARGS = ["--no-optional-locks", "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--no-renames"]


@dataclass
class Status:
    """What ``git status`` says: HEAD's commit (None before the first commit) and the three lists."""

    head: str | None
    staged: list[str]
    unstaged: list[str]
    untracked: list[str]


def status(root: Path) -> Status | None:
    """Staged, unstaged and untracked files and HEAD in one ``git status`` (None when git cannot say).

    The lists are what ``diff --cached --name-only``, ``diff --name-only`` and ``ls-files --others
    --exclude-standard`` list (tests/git_test.py compares them): a path whose index entry differs
    from HEAD is staged, one whose file differs from the index unstaged, an unmerged one both."""
    try:
        out = run(STATUS_ARGS, cwd=root, timeout=HOT_TIMEOUT_S)
    except GitError:
        return None
    st = Status(None, [], [], [])
    parts = out.split(b"\0")
    i = 0
    while i < len(parts):
        entry = parts[i].decode("utf-8", "surrogateescape")
        i += 1
        kind = entry[:2]
        if kind == "# ":
            if entry.startswith("# branch.oid ") and entry[13:] != "(initial)":
                st.head = entry[13:]
        elif kind == "? ":
            st.untracked.append(entry[2:])
        elif kind in ("1 ", "2 ", "u "):
            fields = entry.split(" ", {"1 ": 8, "2 ": 9, "u ": 10}[kind])
            path, xy = fields[-1], fields[1]
            if kind == "2 ":
                i += 1  # the original path of a rename or copy (none with --no-renames)
            if xy[0] != ".":
                st.staged.append(path)
            if xy[1] != ".":
                st.unstaged.append(path)
    return st


def resolve_base(root: Path, setting: str = "auto") -> str | None:
    """The base branch as a revision git knows: the setting as given, or (auto) main, then master,
    local first, then ``origin/``."""
    candidates = AUTO_BASES if setting in ("", "auto") else (setting,)
    for name in candidates:
        for ref in (name, f"origin/{name}"):
            if _text(["rev-parse", "--verify", "-q", f"{ref}^{{commit}}"], root, HOT_TIMEOUT_S):
                return ref
    return None


def merge_base(root: Path, base: str) -> str | None:
    return _text(["merge-base", "HEAD", base], root, HOT_TIMEOUT_S)


def files_since(root: Path, commit: str) -> list[str]:
    return diff_names(root, commit, "HEAD", timeout=HOT_TIMEOUT_S)


def subjects_since(root: Path, commit: str) -> list[str]:
    out = _text(["log", f"--max-count={MAX_SUBJECTS}", "--format=%s", f"{commit}..HEAD"], root, HOT_TIMEOUT_S)
    return out.splitlines() if out else []


def working_set(root: Path, base_setting: str = "auto") -> WorkingSet:
    """Everything being changed relative to the base branch; empty parts where git cannot say.

    One ``git status`` for the files being changed now; the part relative to the base branch (its
    name, the merge-base, the files and subjects since) is asked for once per HEAD and state of the
    base's refs and remembered (:class:`_BaseCache`), so a resident process asking on every prompt
    starts one git process where it started seven."""
    st = status(root)
    if st is None:  # not a work tree, or git failed: every list empty, as each call would say
        return WorkingSet()
    ws = WorkingSet(staged=st.staged, unstaged=st.unstaged, untracked=st.untracked, head=st.head)
    if st.head is None:
        return ws  # no commit yet: no merge-base to be behind or ahead of
    ws.base, ws.merge_base, ws.committed, ws.subjects = _BASES.get(root, base_setting, st.head)
    return ws


class _BaseCache:
    """The base-branch half of the working set, by work tree, setting, HEAD and the refs' files.

    HEAD is in the key (``git status`` reports it anyway); a moved base branch (a fetch, a commit
    on main in another worktree) changes its ref file or ``packed-refs`` (or reftable's table
    list), whose size, mtime and inode are in the key too: a hit is what the seven git calls
    would have said. Bounded; a one-shot process simply never hits."""

    MAX = 64

    def __init__(self) -> None:
        self._common: dict[str, str | None] = {}
        self._hits: dict[tuple, tuple[str | None, str | None, list[str], list[str]]] = {}

    def get(self, root: Path, setting: str, head: str) -> tuple[str | None, str | None, list[str], list[str]]:
        stamp = self._stamp(root, setting)
        key = (os.path.realpath(root), setting, head, stamp)
        found = self._hits.get(key) if stamp is not None else None
        if found is None:
            found = _base_part(root, setting)
            if stamp is None:  # no git dir to watch: asked every time
                return found[0], found[1], list(found[2]), list(found[3])
            if len(self._hits) >= self.MAX:
                self._hits.pop(next(iter(self._hits)))
            self._hits[key] = found
        base, merge, committed, subjects = found
        return base, merge, list(committed), list(subjects)

    def _stamp(self, root: Path, setting: str) -> tuple | None:
        real = os.path.realpath(root)
        if real not in self._common:
            common = _text(["rev-parse", "--git-common-dir"], root)  # relative to root, or absolute
            self._common[real] = os.path.join(real, common) if common else None
        common = self._common[real]
        if common is None:
            return None
        names = AUTO_BASES if setting in ("", "auto") else (setting,)
        files = ["packed-refs", os.path.join("reftable", "tables.list")]
        files += [prefix + name for name in names for prefix in ("refs/heads/", "refs/remotes/origin/", "refs/remotes/", "refs/tags/", "refs/", "")]
        stamp: list[tuple[int, int, int] | None] = []
        for rel in files:
            try:
                info = os.stat(os.path.join(common, rel))
            except (OSError, ValueError):
                stamp.append(None)
                continue
            stamp.append((info.st_mtime_ns, info.st_size, info.st_ino))
        return tuple(stamp)


_BASES = _BaseCache()


def _base_part(root: Path, setting: str) -> tuple[str | None, str | None, list[str], list[str]]:
    base = resolve_base(root, setting)
    merge = merge_base(root, base) if base else None
    if not merge:
        return base, merge, [], []
    return base, merge, files_since(root, merge), subjects_since(root, merge)
