"""Run coroutines concurrently, paying for a task only where one can help.

A layer of a workflow is often steps that never wait on real I/O (a scripted
provider, a tool that computes), and often a single step (a chain). A task per
coroutine then costs more than the work. :func:`gather_eager` runs a lone
coroutine in the caller's own task, and on Python 3.12+ starts each task
eagerly (``eager_start``): a coroutine that finishes without suspending never
reaches the event loop. Python 3.11 has no safe way to do that (a coroutine
started outside its task would enter cancel scopes, like those of ``anyio``
and ``httpx``, in the wrong task), so there several coroutines get a task each.
The results come back in the order of the coroutines, like :func:`asyncio.gather`.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

__all__ = ["gather_eager"]

T = TypeVar("T")
_EAGER_TASKS = sys.version_info >= (3, 12)


async def gather_eager(coroutines: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    """The coroutines' results in order; an exception propagates as from :func:`asyncio.gather`."""
    if len(coroutines) == 1:
        return [await coroutines[0]]
    if not _EAGER_TASKS:
        return list(await asyncio.gather(*coroutines))
    loop = asyncio.get_running_loop()
    tasks = [asyncio.Task(coroutine, loop=loop, eager_start=True) for coroutine in coroutines]  # type: ignore[call-arg]
    return list(await asyncio.gather(*tasks))
