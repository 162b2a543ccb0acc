"""Named exceptions. The library raises these; the CLI phrases them and picks the exit code.

Every exception paqad defines is a ``PaqadError``, so the CLI's handler (``paqad/cli/errors.py``)
has two tiers only: ours (one line, ``exit_code``) and a bug (crash.log). Subclasses that belong
to one module live there: ``git.GitError``, ``agent.ops.OpError``, ``agent.params.ParamError``
and ``confinement.ConfinementError`` (usage; ``agent.span.SpanError``), ``hooks.mcp_install.MergeError`` (config),
``search.vector.DeadlinePassed``, ``search.rerank.RerankError``, ``embed.remote.RemoteError``,
``evaluation.EvalCannotRun`` (exit 3).
"""


class PaqadError(Exception):
    """Base class: an error the user can act on. Exit code 1."""

    exit_code = 1


class ConfigError(PaqadError):
    """A setting, config file, stack pack or ignore file is invalid. Exit code 2."""

    exit_code = 2


class UsageError(PaqadError):
    """The command was called wrongly. Exit code 2."""

    exit_code = 2


class NotARepositoryError(PaqadError):
    """paqad was run outside a directory it can index."""


class IndexMissingError(PaqadError):
    """No index has been built yet."""


#: What every corrupt-index message ends with: the repair (``rag update`` rebuilds a damaged index).
CORRUPT_HINT = "`paqad rag update` rebuilds it (git hooks and the prompt hook start one in the background), or run `paqad rag rebuild` now"


class IndexCorruptError(PaqadError):
    """The index file cannot be trusted: one message for every kind of damage ("corrupt index:
    <what was found>; <the repair>"), whichever reader found it. ``detail`` is what was found."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(f"corrupt index: {detail}; {CORRUPT_HINT}")


class IndexOutdatedError(PaqadError):
    """The index was written by an older paqad (an older schema): not damage, an upgrade. The next
    ``paqad rag update`` (git hooks and the prompt hook start one) rebuilds it."""


class LockedError(PaqadError):
    """Another paqad process holds the writer lock."""


class RemoteError(PaqadError):
    """A request to a remote service (embeddings, reranking) failed after paqad's retries, or its
    answer was unusable. ``status`` is the HTTP status when there was one; ``detail`` is the
    service's own message, redacted, kept apart so a caller can react to it (the embedding client
    halves a batch when the detail says it was too large) without parsing our sentence."""

    def __init__(self, message: str, status: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.status = status
        #: The server's own message (redacted), "" when there was none.
        self.detail = detail


class StorageError(PaqadError):
    """The index folder cannot be written: the disk holding it is full, or the folder is taken by
    a plain file. Never damage to repair by rebuilding: the user frees space or moves the file."""
