"""``paqad rag eval``: does retrieval pay in *this* repository, compared with the agent's world without it?

Mode ``feature-off-vs-on`` (the only mode so far) asks one test set of two arms:

- **off**, a grep loop: one case-insensitive search per content word of the question over the
  files paqad indexes, files ranked by distinct words hit (then matching lines, then path), and
  the characters ``grep -n`` would print for the top 10 files counted (``arms.GrepLoop``);
- **on**, what paqad's prompt hook would hand the agent: the same search, depth step-up, delivery
  table and hook rendering (``arms.PaqadArm``), its characters counted.

The test set is generated from the repository (``questions``), so it fits it and cannot be tuned
for: documented units whose docstring, stripped of identifiers, becomes the question, asked of a
scratch copy of the index in which those docstrings are masked (``masked``), so a question is not
answered by copying; plus built-in questions about subjects the repository does not contain; plus
the team's own ``.paqad/eval.yaml`` (``teamfile``). ``report`` scores both arms and decides.

The live index is never written: the scratch copy lives in ``<per-developer folder>/state/eval-<pid>-*`` and is
removed afterwards, also on SIGTERM/SIGHUP/^C, and a copy left by a killed run is swept next time.
"""

from __future__ import annotations

from paqad.errors import PaqadError

MODES = ("feature-off-vs-on",)
EXIT_PAYS = 0
EXIT_DOES_NOT_PAY = 1
EXIT_COULD_NOT_RUN = 3


class EvalCannotRun(PaqadError):
    """The evaluation itself could not run (no index, too few questions, a malformed eval.yaml). Exit 3."""

    exit_code = EXIT_COULD_NOT_RUN
