"""The per-project salt that keys redaction markers.

A redaction marker is an HMAC-SHA256 of the value, keyed with this salt, so a
short secret (a PIN, a four-letter password) cannot be found again by hashing
guesses: without the salt, the marker says nothing about the value.

Where the salt comes from, first match wins:

1. an explicit ``salt=`` given to :class:`~pytest_agentloom._redaction.redactor.Redactor`;
2. the ``AGENTLOOM_REDACTION_SALT`` environment variable;
3. the file ``.agentloom/salt`` in the project root. The root is found by
   walking up from the workflow file's folder (or the current directory): the
   first folder that already has ``.agentloom/salt``, else the first with a
   ``pyproject.toml``, ``setup.cfg`` or ``.git``, else the starting folder. The
   file is created there on first use with 32 random bytes (hex).

A salt file that exists but holds nothing usable (empty, only whitespace) is an
error (:class:`~pytest_agentloom.errors.UsageError` naming the file and how to
regenerate it), never an empty HMAC key: markers keyed with nothing would let a
short secret be found again from a committed snapshot. A blank
``AGENTLOOM_REDACTION_SALT`` counts as unset (the file is used).

Commit ``.agentloom/salt`` so that everyone's markers agree (snapshots and
checkpoints then compare across machines), or keep it out of version control
and rotate it by deleting it; markers written before a rotation no longer
match values redacted after it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from .._core.files import write_text_atomic
from .._core.yaml_io import read_text_capped
from ..errors import ArtifactError, DataReadError, UsageError, render_message

__all__ = ["SALT_ENV", "SALT_FILE", "find_project_root", "load_salt"]

SALT_ENV = "AGENTLOOM_REDACTION_SALT"
SALT_FILE = Path(".agentloom") / "salt"
_ROOT_MARKERS = ("pyproject.toml", "setup.cfg", ".git")
_MAX_SALT_BYTES = 4096


def find_project_root(start: Path | None = None) -> Path:
    """The folder whose ``.agentloom/salt`` keys markers for files under ``start``."""
    origin = (start or Path.cwd()).resolve()
    if origin.is_file():
        origin = origin.parent
    chain = [origin, *origin.parents]
    for folder in chain:
        if (folder / SALT_FILE).is_file():
            return folder
    for folder in chain:
        if any((folder / marker).exists() for marker in _ROOT_MARKERS):
            return folder
    return origin


def load_salt(start: Path | None = None, *, env: Mapping[str, str] | None = None) -> bytes:
    """The salt for a workflow at (or a run started in) ``start``, creating the salt file if needed."""
    environ = os.environ if env is None else env
    if environ.get(SALT_ENV, "").strip():  # set but blank counts as unset: the salt file is used
        return environ[SALT_ENV].strip().encode("utf-8")
    path = find_project_root(start) / SALT_FILE
    try:
        text = read_text_capped(path, max_bytes=_MAX_SALT_BYTES, what="salt file")
    except FileNotFoundError:
        return _create(path)
    except DataReadError as exc:  # not UTF-8, a directory, a FIFO, huge: never replaced behind the user's back
        raise ArtifactError("The redaction salt", exc.problem, file=str(path), hint=(
            f"delete {path} to have a new salt made (markers written with the old one then no longer match), "
            f"or set {SALT_ENV}.")) from None
    return _usable(text, path)


def _usable(text: str, path: Path) -> bytes:
    """The salt in ``text`` (read from ``path``); an empty or blank salt file is an error, never an empty key."""
    value = text.strip()
    if not value:
        raise UsageError(
            render_message(
                f"The redaction salt file {path} is empty (or only whitespace): markers keyed with it could be "
                "reversed by guessing short secrets, so nothing is redacted with it.",
                hint=f"delete {path} to have a fresh salt made on the next run (markers in existing snapshots "
                     "and checkpoints then change: update them), or restore the committed file.")
        )
    return value.encode("utf-8")


def _create(path: Path) -> bytes:
    """Write a fresh salt; if another process created the file first, use its salt."""
    value = secrets.token_hex(32)
    if not write_text_atomic(path, value + "\n", exclusive=True, private=True):  # the key of the markers: owner-only
        return _usable(path.read_text(encoding="utf-8"), path)
    return value.encode("utf-8")
