"""Clocks and run ids, injected so that runs are repeatable.

The engine never reads the wall clock or sleeps directly: it asks a
:class:`Clock`. :class:`VirtualClock` makes time a number that only moves when
the engine sleeps, so retries with backoff take no real time and every event
in a trace gets the same timestamp on every run.

Steps of one layer run concurrently. To keep their timestamps independent of
which coroutine the event loop happens to resume first, each step gets a
``fork()`` of the run clock; when the layer ends the run clock moves to the
latest fork (``join``).
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import re
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any, Protocol, runtime_checkable

from .arguments import check_real_number

__all__ = [
    "Clock",
    "RunIdPrefix",
    "RunIdSource",
    "SystemClock",
    "VirtualClock",
    "current_clock",
    "derived_run_id",
    "enter_clock",
    "is_valid_run_id",
    "leave_clock",
    "random_run_id",
    "use_clock",
]


@runtime_checkable
class Clock(Protocol):
    """Time as the engine sees it, in seconds."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...

    def fork(self) -> Clock: ...

    def join(self, forks: Iterable[Clock]) -> None: ...

    @property
    def is_virtual(self) -> bool: ...


class VirtualClock:
    """A clock that starts at ``start`` and advances only when something sleeps on it."""

    def __init__(self, start: float = 0.0) -> None:
        check_real_number("VirtualClock()", "start", start)
        self._now = float(start)

    @property
    def is_virtual(self) -> bool:
        return True

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        self._now += max(0.0, float(seconds))
        await asyncio.sleep(0)  # still yield, so concurrent steps interleave as they would for real

    def advance(self, seconds: float) -> None:
        """Move time forward without sleeping (for tests of timeouts)."""
        self._now += max(0.0, float(seconds))

    def fork(self) -> VirtualClock:
        clone = object.__new__(VirtualClock)  # every step of a run gets one: no __init__ to convert _now again
        clone._now = self._now
        return clone

    def join(self, forks: Iterable[Clock]) -> None:
        """Move to the latest of the forks (never backwards)."""
        now = self._now
        for fork in forks:
            reading = fork.now()
            if reading > now:
                now = reading
        self._now = now


class SystemClock:
    """Real time from :func:`time.monotonic`; sleeps really sleep."""

    @property
    def is_virtual(self) -> bool:
        return False

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def fork(self) -> SystemClock:
        return self

    def join(self, forks: Iterable[Clock]) -> None:
        return None


_current: contextvars.ContextVar[Clock | None] = contextvars.ContextVar("agentloom_clock", default=None)


def current_clock() -> Clock:
    """The clock of the step being run, for providers that simulate latency."""
    return _current.get() or SystemClock()


class use_clock:  # lower case: used like a function, as contextlib's managers are
    """Make ``clock`` the current clock (:func:`current_clock`) inside the block: the run sets each step's.

    A class rather than a generator-based manager: the run enters one per step.
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._token: contextvars.Token[Clock | None] | None = None

    def __enter__(self) -> Clock:
        self._token = enter_clock(self._clock)
        return self._clock

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            leave_clock(self._token)
            self._token = None


def enter_clock(clock: Clock) -> contextvars.Token[Clock | None]:
    """Make ``clock`` current, as ``use_clock`` does, for a caller that resets it in its own ``finally``.

    The run does this once per step; a bare token costs less than a context manager object.
    """
    return _current.set(clock)


def leave_clock(token: contextvars.Token[Clock | None]) -> None:
    """Undo :func:`enter_clock`: the clock current before it is current again."""
    _current.reset(token)


RunIdSource = Callable[[], str]


#: A run id names files (``<id>.json`` checkpoints and records): letters, digits, ``.``, ``_`` and ``-``, starting
#: with a letter or digit, at most 128 characters, so no id can name a path outside its folder.
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def is_valid_run_id(value: object) -> bool:
    """Whether ``value`` can be a run id (it becomes a file name: see :data:`_RUN_ID`)."""
    return isinstance(value, str) and _RUN_ID.fullmatch(value) is not None and ".." not in value


def random_run_id() -> str:
    """A fresh, unique run id; the CLI uses it for real runs."""
    return f"run-{uuid.uuid4().hex[:12]}"


#: What joins the parts of a derived run id before they are hashed.
_RUN_ID_SEPARATOR = "\x1f"


def derived_run_id(*parts: str) -> str:
    """A run id that is a pure function of its parts (workflow hash, inputs, test id)."""
    return _run_id_of(hashlib.sha256(_RUN_ID_SEPARATOR.join(parts).encode("utf-8")))


class RunIdPrefix:
    """The first parts of derived run ids, hashed once: ``RunIdPrefix(*first).run_id(last)`` is
    ``derived_run_id(*first, last)``, hashing only ``last``. The engine keeps one per workflow, whose
    definition (the first part) is the same for every run while the state (the last) changes.
    """

    __slots__ = ("_digest",)

    def __init__(self, *parts: str) -> None:
        self._digest = hashlib.sha256("".join(part + _RUN_ID_SEPARATOR for part in parts).encode("utf-8"))

    def run_id(self, last: str) -> str:
        digest = self._digest.copy()
        digest.update(last.encode("utf-8"))
        return _run_id_of(digest)


def _run_id_of(digest: Any) -> str:  # a hashlib digest (its type has no public name)
    return f"run-{digest.hexdigest()[:12]}"
