"""Running a coroutine to the end from synchronous code, whether or not an event loop is already running.

``run_workflow`` and ``resume_workflow`` are the synchronous faces of their async
twins. Called from inside a running event loop (a Jupyter cell, an async test
calling a sync helper) they run the coroutine on a fresh loop in a worker thread
and wait for it, since a loop cannot be re-entered.

Called from plain code in the main thread they run it on one event loop kept for
the process (an :class:`asyncio.Runner`), instead of ``asyncio.run``'s new loop
per call: making and closing a loop (its selector, its wake-up socket pair)
costs about as much as a twenty-step scripted run, and a test suite calls
``run_workflow`` thousands of times. Each call still ends as ``asyncio.run``
ends one: tasks the run left behind are cancelled and waited for, and async
generators it left open are closed, so nothing of one run reaches the next.
Ctrl-C cancels the run as under ``asyncio.run``. A call that ends in an
interruption (``KeyboardInterrupt``, ``SystemExit``) closes the kept loop; the
next call makes a new one, as does a forked child. Other threads use
``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """The coroutine's result (or its exception, raised here)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        if threading.current_thread() is threading.main_thread():
            return _KEPT.run(coroutine)
        return asyncio.run(coroutine)
    return _in_thread(coroutine)


class _KeptLoop:
    """The main thread's event loop, kept from one call to the next (see the module's docstring)."""

    def __init__(self) -> None:
        self._runner: asyncio.Runner | None = None
        self._pid = 0

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        runner = self._current()
        try:
            return runner.run(coroutine, context=contextvars.copy_context())  # the caller's, as asyncio.run
        except (KeyboardInterrupt, SystemExit):
            self.close()
            raise
        finally:
            if self._runner is runner:
                _tidy(runner.get_loop())

    def _current(self) -> asyncio.Runner:
        runner = self._runner
        if runner is None or self._pid != os.getpid() or runner.get_loop().is_closed():
            # a forked child never shares its parent's loop; a loop someone closed is replaced
            runner = self._runner = asyncio.Runner()
            self._pid = os.getpid()
            runner.get_loop()  # made now; like asyncio.run, leave no current loop set between calls
            asyncio.set_event_loop(None)
        return runner

    def close(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None and self._pid == os.getpid():
            runner.close()


def _tidy(loop: asyncio.AbstractEventLoop) -> None:
    """What ``asyncio.run`` does after the main task, short of closing the loop.

    Open async generators are closed as ``loop.shutdown_asyncgens()`` would close them, but
    without calling it: after that call a loop warns about every async generator started on it.
    The loop's set of live generators has no public name (``_asyncgens``, in every 3.11+ loop).
    """
    left = asyncio.all_tasks(loop)
    if left:
        for task in left:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
    live = getattr(loop, "_asyncgens", None)
    if live:
        generators = list(live)
        live.clear()
        loop.run_until_complete(_close_all(generators))


async def _close_all(generators: list[Any]) -> None:
    await asyncio.gather(*(generator.aclose() for generator in generators), return_exceptions=True)


_KEPT = _KeptLoop()
atexit.register(_KEPT.close)


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
