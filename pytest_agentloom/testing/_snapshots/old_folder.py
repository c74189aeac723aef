"""Snapshots left in the folder this plugin used before: found, named, and never written over or deleted.

Snapshots lived in ``__snapshots__/`` beside the test file until the default became
``__agentloom_snapshots__/``: ``__snapshots__`` is syrupy's folder, and with syrupy installed every file of
ours there was reported as an unused snapshot of syrupy's (the session failed) and deleted by
``--snapshot-update``. A test whose snapshot is missing from the new folder but present in the old one fails
with the command that moves the module's folder, in every mode: a new file written beside the old one would
leave two goldens that can disagree, and the old one is the user's to move (it is never removed here).
Keeping the old place is one ini line, ``agentloom_snapshot_dir = __snapshots__`` (for projects without
syrupy).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from ...errors import HINT_PREFIX
from .compare import display_path

__all__ = ["OLD_SNAPSHOT_DIR", "SNAPSHOT_DIR", "old_snapshot_message"]

#: the default folder of golden snapshots, relative to each test file's folder
SNAPSHOT_DIR = "__agentloom_snapshots__"
#: the default before it, which is syrupy's
OLD_SNAPSHOT_DIR = "__snapshots__"


def old_snapshot_message(path: Path, label: str) -> str | None:
    """Why the snapshot at ``path`` (in the default folder, missing) cannot be used yet, when the old folder
    holds it: the failure message with the move to make. ``None`` when there is nothing in the old place."""
    module_dir = path.parent
    root = module_dir.parent
    if root.name != SNAPSHOT_DIR:
        return None
    old_module_dir = root.parent / OLD_SNAPSHOT_DIR / module_dir.name
    old = old_module_dir / path.name
    if not old.is_file():
        return None
    source, target = display_path(old_module_dir), display_path(module_dir)
    move = (f"mkdir -p {shlex.quote(display_path(root))} && git mv {shlex.quote(source)} {shlex.quote(target)}"
            if not module_dir.exists() else
            f"git mv {shlex.quote(source)}/* {shlex.quote(target)}/")
    return (
        f"Snapshot '{label}' is in the old snapshot folder: {display_path(old)}\n"
        f"  agentloom now reads and writes {display_path(path)} ({SNAPSHOT_DIR}/: {OLD_SNAPSHOT_DIR}/ is "
        "syrupy's folder, whose --snapshot-update deletes files it does not know)\n"
        f"{HINT_PREFIX} move this module's snapshots once, then commit the move:\n  {move}\n"
        f"or keep the old folder (a project without syrupy): ini agentloom_snapshot_dir = {OLD_SNAPSHOT_DIR}"
    )
