"""Garbage collection paused while a big tree of new objects is built, then resumed.

CPython's collector runs every few hundred allocations of container objects and,
as they survive, walks the older generations again and again: building the
60,000 nodes and values of a 1,000-interaction cassette spent about half its
time collecting garbage that did not exist (a parser allocates and keeps; it
makes no cycles to free). :func:`paused_gc` switches the collector off around
such a build and back on after it, only if it was on: a program (or test) that
turned it off keeps it off.

The switch is process-wide. Two threads that pause at once may resume it a
little early; a collection then happens later than it might have, never one
less than needed.
"""

from __future__ import annotations

import gc

__all__ = ["paused_gc"]


def paused_gc() -> _Paused:
    """No automatic garbage collection inside the ``with`` block (see the module docs)."""
    return _Paused()


class _Paused:
    """The ``with`` block of :func:`paused_gc`: a class rather than a ``contextlib`` generator, which costs
    several times more to enter and leave, and every run's result is copied inside one."""

    __slots__ = ("was_enabled",)

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self.was_enabled:
            gc.enable()
