"""Run coroutines concurrently, paying for a task only where one can help.

A layer of a workflow is often steps that never wait on real I/O (a scripted
provider, a tool that computes), and often a single step (a chain). A task per
coroutine then costs more than the work. :func:`gather_eager` runs a lone
coroutine in the caller's own task, and on Python 3.12+ starts each task
eagerly (``eager_start``): a coroutine that finishes without suspending never
reaches the event loop.

Python 3.11 has no eager tasks, and a coroutine must never be started in one
task and finished in another (it would enter cancel scopes, like those of
``anyio`` and ``httpx``, in the wrong task). There :func:`gather_eager` starts
the coroutines one after another in the caller's task, each in its own copy of
the caller's context (as a task would have), while they finish without
suspending. The first one that suspends is finished in the caller's task, where
it started; the ones after it, not started yet, get a task each, so they still
run concurrently with it. The results come back in the order of the
coroutines, like :func:`asyncio.gather`.

With ``AGENTLOOM_SPEEDUPS=0`` (:mod:`.speedups`) it is :func:`asyncio.gather` itself: a task per coroutine.
Plain ``gather`` costs a 20-step fan-out about a fifth more instructions (``bench/compare.py``).
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import types
from collections.abc import Coroutine, Generator, Sequence
from typing import Any, TypeVar

from .speedups import speedups_on

__all__ = ["gather_eager"]

T = TypeVar("T")
_EAGER_TASKS = sys.version_info >= (3, 12)


async def gather_eager(coroutines: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    """The coroutines' results in order; an exception propagates as from :func:`asyncio.gather`."""
    if not speedups_on():
        return list(await asyncio.gather(*coroutines))
    if len(coroutines) == 1:
        return [await coroutines[0]]
    if _EAGER_TASKS:
        loop = asyncio.get_running_loop()
        eager = asyncio.eager_task_factory  # type: ignore[attr-defined] # 3.12+, documented there
        return list(await asyncio.gather(*[eager(loop, coroutine) for coroutine in coroutines]))
    return await _gather_inline(list(coroutines))


async def _gather_inline(coroutines: list[Coroutine[Any, Any, T]]) -> list[T]:
    """Python 3.11: the coroutines run in this task until one suspends; the rest then get tasks."""
    base = contextvars.copy_context()  # what each coroutine starts from, as a task created here would
    results: list[T] = []
    for index, coroutine in enumerate(coroutines):
        context = base.copy()
        try:
            waits_on = context.run(coroutine.send, None)
        except StopIteration as finished:
            results.append(finished.value)
            continue
        except BaseException:
            _close(coroutines[index + 1:])
            raise
        later = [asyncio.ensure_future(rest) for rest in coroutines[index + 1:]]  # their own tasks, fresh contexts
        try:
            results.append(await _finish(coroutine, context, waits_on))
        except BaseException:
            for task in later:
                task.cancel()
            raise
        results.extend(await asyncio.gather(*later))
        break
    return results


@types.coroutine
def _finish(coroutine: Coroutine[Any, Any, T], context: contextvars.Context,
            waits_on: Any) -> Generator[Any, None, T]:
    """Go on with a coroutine that suspended on ``waits_on``, in this task and in its own context.

    What the task sends in (nothing) and throws in (a cancellation) goes on to the coroutine.
    """
    while True:
        try:
            try:
                yield waits_on
            except GeneratorExit:
                coroutine.close()
                raise
            except BaseException as thrown:  # the task's cancellation: the coroutine decides what it means
                waits_on = context.run(coroutine.throw, thrown)
            else:
                waits_on = context.run(coroutine.send, None)
        except StopIteration as finished:
            return finished.value  # type: ignore[no-any-return]


def _close(coroutines: Sequence[Coroutine[Any, Any, Any]]) -> None:
    """Close coroutines that will never run, so none is reported as never awaited."""
    for coroutine in coroutines:
        coroutine.close()
