"""Running a coroutine to the end from synchronous code, whether or not an event loop is already running.

``run_workflow`` and ``resume_workflow`` are the synchronous faces of their async
twins. Called from inside a running event loop (a Jupyter cell, an async test
calling a sync helper) they run the coroutine with ``asyncio.run`` in a worker
thread and wait for it, since a loop cannot be re-entered. Other threads than
the main one use ``asyncio.run`` too.

Called from plain code in the main thread they run it on one :class:`asyncio.Runner`
kept for the process instead of ``asyncio.run``'s new loop per call: making and
closing a loop costs about as much as a twenty-step scripted run, and a test
suite calls ``run_workflow`` thousands of times (``asyncio.run`` per call made
short runs 10-16% slower). Each call still ends as ``asyncio.run`` ends one, so
nothing of one run reaches the next: it runs in a copy of the caller's context
variables; tasks it left behind are cancelled and waited for; async generators
it left open are closed. The runner gives Ctrl-C its usual meaning (the first
cancels the run, which ends in ``KeyboardInterrupt``; a second raises it at
once). A call that ends in ``KeyboardInterrupt`` or ``SystemExit`` closes the
runner; the next call makes a new one, as does a forked child, or a call after
someone closed the loop.

The runner is closed by :func:`close_runner`: the pytest plugin calls it when
the session ends (``pytest_unconfigure``). For other programs an ``atexit`` hook
closes what is left without starting a thread, which Python 3.12+ no longer
allows at that point (``Runner.close`` starts one to shut the default executor
down; by then the interpreter has already joined the executor's threads).

With ``AGENTLOOM_SPEEDUPS=0`` (:mod:`pytest_agentloom._core.speedups`) every call
uses ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import os
import sys
import threading
import weakref
from collections.abc import AsyncGenerator, Coroutine
from typing import Any, TypeVar

from ..._core.speedups import speedups_on

__all__ = ["close_runner", "run_sync"]

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """The coroutine's result (or its exception, raised here).

    The run is started outside the ``except`` that found no running loop: an exception of the run raised
    inside it would carry that ``RuntimeError: no running event loop`` as its context, printed above the
    real failure in every traceback.
    """
    if _loop_running():
        return _in_thread(coroutine)
    if threading.current_thread() is threading.main_thread() and speedups_on():
        return _KEPT.run(coroutine)
    return asyncio.run(coroutine)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def close_runner() -> None:
    """Close the main thread's kept runner (a later call makes a new one). Call it while threads may still
    start (the pytest plugin does, at the end of the session); at exit, an ``atexit`` hook does what is left."""
    _KEPT.close()


class _KeptRunner:
    """The main thread's :class:`asyncio.Runner`, kept from one call to the next (see the module's docs)."""

    def __init__(self) -> None:
        self._runner: asyncio.Runner | None = None
        self._pid = 0

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        runner = self._current()
        loop = runner.get_loop()
        loop.call_soon(_track_async_generators)  # runs first: before the task's first step
        try:
            # the caller's context variables, as asyncio.run (a runner's default is its own, kept context)
            return runner.run(coroutine, context=contextvars.copy_context())
        except (KeyboardInterrupt, SystemExit):
            self.close()
            raise
        finally:
            if not loop.is_closed():
                _end_of_call(loop)

    def _current(self) -> asyncio.Runner:
        runner = self._runner
        if runner is not None and self._pid == os.getpid() and not runner.get_loop().is_closed():
            return runner
        if runner is not None and self._pid != os.getpid():
            # A forked child's copy of its parent's loop: never run, and never closed here. Its epoll
            # instance is the parent's own (fork shares it), so closing the copy would unregister the
            # parent's wake-up pipe from it and the parent's loop would sleep through every thread's
            # call_soon_threadsafe (a DNS lookup in the executor, then no wake-up: a hang). Kept referenced
            # so that no finalizer closes it either; one per fork, in the child.
            _FORKED_COPIES.append(runner)
        # a loop factory: the runner then sets no current event loop, so code between calls gets none
        self._runner, self._pid = asyncio.Runner(loop_factory=asyncio.new_event_loop), os.getpid()
        return self._runner

    def close(self) -> None:
        """``Runner.close``: cancel what is left, close async generators, shut the default executor down."""
        runner, self._runner = self._runner, None
        if runner is not None and self._pid == os.getpid():
            runner.close()

    def close_at_exit(self) -> None:
        """What ``close`` does, but without starting a thread: the loop's own ``close`` lets the default
        executor go without waiting (the interpreter joined its threads before ``atexit`` hooks ran)."""
        runner, self._runner = self._runner, None
        if runner is None or self._pid != os.getpid():
            return
        loop = runner.get_loop()
        if loop.is_closed():
            return
        try:
            _end_of_call(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


#: A forked child's copies of its parent's runner, never closed (see :meth:`_KeptRunner._current`).
_FORKED_COPIES: list[asyncio.Runner] = []

#: Async generators first iterated during the current call (see :func:`_track_async_generators`).
_OPENED: weakref.WeakSet[AsyncGenerator[Any, Any]] = weakref.WeakSet()


def _track_async_generators() -> None:
    """Note every async generator the call starts, beside the loop's own hook (Python's public hooks: the loop
    installs its own when it starts running and puts back what was there before when it stops)."""
    firstiter, finalizer = sys.get_asyncgen_hooks()

    def first_iteration(generator: AsyncGenerator[Any, Any]) -> None:
        _OPENED.add(generator)
        if firstiter is not None:
            firstiter(generator)

    sys.set_asyncgen_hooks(firstiter=first_iteration, finalizer=finalizer)


def _end_of_call(loop: asyncio.AbstractEventLoop) -> None:
    """What ``asyncio.run`` does after the main task, short of closing the loop: cancel the tasks left behind
    and close the async generators left open. (``loop.shutdown_asyncgens()`` is no way: after it the loop
    warns about every async generator started on it.)"""
    left = asyncio.all_tasks(loop)
    if left:
        for task in left:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
    if _OPENED:
        generators = list(_OPENED)
        _OPENED.clear()
        loop.run_until_complete(_close_all(generators))


async def _close_all(generators: list[AsyncGenerator[Any, Any]]) -> None:
    await asyncio.gather(*(generator.aclose() for generator in generators), return_exceptions=True)


_KEPT = _KeptRunner()
atexit.register(_KEPT.close_at_exit)


def _in_thread(coroutine: Coroutine[Any, Any, T]) -> T:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = asyncio.run(coroutine)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="agentloom-run")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["result"]  # type: ignore[no-any-return]
