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
Ctrl-C cancels the run as under ``asyncio.run``: the first one cancels the run's
task, which then ends in ``KeyboardInterrupt``; a second one raises it at once.
A call that ends in an interruption (``KeyboardInterrupt``, ``SystemExit``)
closes the kept loop; the next call makes a new one, as does a forked child.
Other threads use ``asyncio.run``.

The loop is driven here rather than through :class:`asyncio.Runner`, whose ``run``
installs its Ctrl-C handler through ``signal.signal`` and reads it back through
``signal.getsignal``: both turn the handler into an enum member when they can,
and trying costs the ``repr`` of a handler that holds the task, on every call.
The handler is installed through ``_signal``, the C module ``signal`` wraps.
"""

from __future__ import annotations

import _signal
import asyncio
import atexit
import contextvars
import os
import signal
import threading
import weakref
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
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        loop = self._current()
        task = loop.create_task(coroutine, context=contextvars.copy_context())  # the caller's, as asyncio.run
        interrupt = _CtrlC(loop, task)
        try:
            with interrupt:
                try:
                    return loop.run_until_complete(task)
                except asyncio.CancelledError:
                    if interrupt.count and task.uncancel() == 0:  # cancelled by Ctrl-C, not by the run itself
                        raise KeyboardInterrupt from None
                    raise
        except (KeyboardInterrupt, SystemExit):
            self.close()
            raise
        finally:
            if self._loop is loop:
                _tidy(loop)

    def _current(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is None or self._pid != os.getpid() or loop.is_closed():
            # a forked child never shares its parent's loop; a loop someone closed is replaced
            loop = self._loop = asyncio.new_event_loop()  # like asyncio.run, no current loop set between calls
            self._pid = os.getpid()
        return loop

    def close(self) -> None:
        """What ``asyncio.Runner.close`` does: cancel what is left, close generators and the executor, close."""
        loop, self._loop = self._loop, None
        if loop is None or self._pid != os.getpid() or loop.is_closed():
            return
        try:
            _tidy(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()


class _CtrlC:
    """While a call runs: Ctrl-C cancels its task (a second one raises ``KeyboardInterrupt``), as in
    ``asyncio.run``; only when Python's own handler is in place (a program's own handler is left alone)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
        self.loop, self.task = loop, task
        self.count = 0
        self._installed = False

    def __enter__(self) -> _CtrlC:
        if _signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            try:
                _signal.signal(signal.SIGINT, self._on_sigint)
            except ValueError:  # an interpreter whose main thread takes no signals (embedded)
                return self
            self._installed = True
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._installed and _signal.getsignal(signal.SIGINT) == self._on_sigint:
            _signal.signal(signal.SIGINT, signal.default_int_handler)

    def _on_sigint(self, signum: int, frame: object) -> None:
        self.count += 1
        if self.count == 1 and not self.task.done():
            self.task.cancel()
            self.loop.call_soon_threadsafe(lambda: None)  # wake the loop if it waits in select()
            return
        raise KeyboardInterrupt


def _tidy(loop: asyncio.AbstractEventLoop) -> None:
    """What ``asyncio.run`` does after the main task, short of closing the loop.

    Open async generators are closed as ``loop.shutdown_asyncgens()`` would close them, but
    without calling it: after that call a loop warns about every async generator started on it.
    The loop's set of live generators has no public name (``_asyncgens``, in every 3.11+ loop).
    """
    left = asyncio.all_tasks(loop) if _other_tasks_may_live() else ()
    if left:
        for task in left:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
    live = getattr(loop, "_asyncgens", None)
    if live:
        generators = list(live)
        live.clear()
        loop.run_until_complete(_close_all(generators))


def _other_tasks_may_live() -> bool:
    """Whether a task besides the call's own (done, and still held by it) may be alive, in any loop.

    ``asyncio.all_tasks`` copies the set of live tasks of every loop and filters it, on every call;
    most runs make no task of their own, and the set then holds only the call's. Python 3.11 keeps
    that set as ``asyncio.tasks._all_tasks``, a ``WeakSet`` (later versions keep tasks otherwise:
    there the answer is always yes, and ``all_tasks`` looks).
    """
    live = getattr(asyncio.tasks, "_all_tasks", None)
    return not isinstance(live, weakref.WeakSet) or len(live) > 1


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
