"""paqad as a hook of the ``pre-commit`` framework: the first run switches retrieval on.

pre-commit installs paqad into an environment of its own, so a user who added ``paqad-update``
to ``.pre-commit-config.yaml`` may have no ``paqad`` on PATH to run ``paqad rag init`` with;
before, the hook then logged "retrieval is off" on every commit and did nothing while pre-commit
printed "Passed". Adding the hook is the opt-in: when no settings layer says anything about
``rag_enabled`` (never initialised here), the first run sets it in the developer's local settings
and the background ``rag-update`` builds the index. A repository where someone ran
``paqad rag clear`` (``rag_enabled: false`` written down) stays off.
"""

from __future__ import annotations

from pathlib import Path

from paqad import audit, workspace
from paqad import config as config_mod


def switch_on_first_use(root: Path) -> bool:
    """Turn retrieval on in ``root`` when nothing has decided it yet; True when it did."""
    cfg = config_mod.load(root)
    if cfg.rag_enabled or cfg.source("rag_enabled") != "default":
        return False
    workspace.ensure(root)
    config_mod.set_value(root, "rag_enabled", "true")
    audit.log(root, "INFO", "retrieval-on-from-pre-commit", note="first pre-commit run here; the index builds in the background")
    return True
