"""Each test's folder for what its runs write (run records, checkpoints), made cheaply when pytest's is not needed.

pytest's ``tmp_path`` finds each new folder's number by listing every entry of the
session's base folder, and links a ``<name>current`` symlink next to it: two
entries per test, so the listing grows with the session and a 1,000-row scenario
table read about a million directory entries, as long as running its rows took.

So the ``agentloom`` fixture takes the test's ``tmp_path`` when the test (or one of
its fixtures) asks for ``tmp_path`` too, and ``agentloom.tmp_path == tmp_path``
holds. Otherwise its folder is ``<base temp>/agentloom/<test name>-<n>``, a fresh
name in the same session base folder as ``tmp_path``, kept and removed with it
(``tmp_path_retention_count``, and the whole base folder after a passing session
under ``tmp_path_retention_policy = failed``). That folder is not made here: it is
made when something is written into it or the test reads ``agentloom.tmp_path``
(see the harness), and most tests of a scenario table do neither. Unlike
``tmp_path``, the folder of a test that passed is not removed while the session
goes on; nothing in it is a file the user keeps.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

__all__ = ["folder_for_test"]

#: Numbers the folders this process makes: unique within a session's base folder (an xdist worker has its own).
_NUMBERS = itertools.count()
_NAME_LENGTH = 30  # as pytest's tmp_path: the start of the test's name, odd characters as '_'
_ODD = re.compile(r"\W")
#: ``<base temp>/agentloom``: where the folders of a session's tests go
_BASE_KEY = pytest.StashKey[Path]()


def folder_for_test(request: pytest.FixtureRequest, fixturenames: list[str] | None = None) -> tuple[Path, bool]:
    """The folder for this test's runs, and whether it exists yet: the test's ``tmp_path`` if it takes one,
    else a name of its own, made when first needed. ``fixturenames``: ``request.fixturenames``, when the
    caller has it already."""
    if "tmp_path" in (request.fixturenames if fixturenames is None else fixturenames):
        path: Path = request.getfixturevalue("tmp_path")
        return path, True
    base = request.config.stash.get(_BASE_KEY, None)
    if base is None:  # the session's base folder is the same for every test: found once (a fixture lookup)
        factory: pytest.TempPathFactory = request.getfixturevalue("tmp_path_factory")
        base = request.config.stash[_BASE_KEY] = factory.getbasetemp() / "agentloom"
        base.mkdir(mode=0o700, exist_ok=True)  # owner-only, as pytest's own base folder
    name = _ODD.sub("_", request.node.name)[:_NAME_LENGTH]
    return base / f"{name}-{next(_NUMBERS)}", False
