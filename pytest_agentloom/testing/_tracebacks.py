"""Keep the plugin's and the engine's frames out of every traceback pytest prints.

A run's frames hold its inputs as arguments and locals (``state = {'api_token': ...}``), and pytest prints
them under ``--tb=long``, ``--showlocals`` and in ``--junitxml``: the secrets the redactor keeps out of every
file would reach the terminal and the XML that way. So before a failed phase is reported, every frame of
this package is cut out of the exception's traceback, and so is every frame of an installed library (or of
the standard library) that one of ours called (vcrpy, httpx, asyncio: they hold the same values). Frames of
the user's own code stay, wherever they are: the test itself, a tool the workflow called, a conftest.

The cut is made on the traceback objects themselves (``tb_next`` is writable, CPython's public API), for
the exception and every exception chained to it (``__cause__``, ``__context__``), since pytest builds a
fresh traceback for each of those; the exception's own traceback is also handed back to pytest through
``ExceptionInfo.traceback`` in case a plugin read it already. ``--full-trace`` shows no frame of ours
either: there is no switch that prints a run's raw state.
"""

from __future__ import annotations

import itertools
import os
import site
import sysconfig
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["hide_our_frames"]

#: this package's folder: a frame whose file is under it is ours
_OURS = str(Path(__file__).resolve().parents[1]) + os.sep
#: a frame whose file is under one of these is the standard library's or an installed library's (not the
#: interpreter's whole prefix: a project may live under /usr or /opt too)
_LIBRARIES = tuple(sorted({str(Path(folder).resolve()) + os.sep for folder in (
    *(sysconfig.get_paths().get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")),
    *site.getsitepackages(), site.getusersitepackages()) if folder}))
#: how many chained exceptions are cut at most (a chain is short; a cycle is stopped by ``seen`` too)
_MAX_CHAIN = 64


def hide_our_frames(excinfo: Any) -> None:
    """Cut our frames, and the library frames they called, from ``excinfo``'s exception and its chain.

    ``excinfo`` is the failed call's ``pytest.ExceptionInfo``. Its traceback starts in pytest, which is
    never ours, so the head of each chain stays and only later links are skipped.
    """
    _hide_chain(excinfo.value)
    excinfo.traceback = excinfo.traceback.filter(_keep_entry())


def _hide_chain(value: BaseException) -> None:
    """Cut the traceback of ``value`` and of every exception chained to it, each once."""
    seen: set[int] = set()
    pending = [value]
    while pending and len(seen) < _MAX_CHAIN:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        current.__traceback__ = _cut(current.__traceback__)
        pending += [c for c in (current.__cause__, current.__context__) if isinstance(c, BaseException)]


def _cut(tb: TracebackType | None) -> TracebackType | None:
    """``tb`` without the hidden links (see :func:`_keep_entry`): the kept ones relinked in order."""
    keep = _keep_entry()
    kept: list[TracebackType] = []
    while tb is not None:
        if keep(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    for first, second in itertools.pairwise(kept):
        first.tb_next = second
    if kept:
        kept[-1].tb_next = None
    return kept[0] if kept else None


def _keep_entry() -> Callable[[Any], bool]:
    """A filter over the frames of one traceback, outermost first: ours are dropped, and so is a library
    frame while the nearest frame above it that is not a library's is ours (what one of ours called)."""
    inside_ours = False

    def keep(entry: Any) -> bool:
        nonlocal inside_ours
        filename = entry if isinstance(entry, str) else str(entry.path)
        if _is_ours(filename):
            inside_ours = True
            return False
        if _is_library(filename):
            return not inside_ours
        inside_ours = False
        return True

    return keep


def _is_ours(filename: str) -> bool:
    return filename.startswith(_OURS)


def _is_library(filename: str) -> bool:
    return filename.startswith("<") or filename.startswith(_LIBRARIES)
