"""Running a coroutine to the end from synchronous code, whether or not an event loop is already running.

``run_workflow`` and ``resume_workflow`` are the synchronous faces of their async
twins. Called from plain code they use ``asyncio.run``; called from inside a
running event loop (a Jupyter cell, an async test calling a sync helper) they
run the coroutine on a fresh loop in a worker thread and wait for it, since a
loop cannot be re-entered.
"""

from __future__ import annotations

import asyncio
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
        return asyncio.run(coroutine)
    return _in_thread(coroutine)


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
