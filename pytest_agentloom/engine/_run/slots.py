"""``config.max_concurrent_steps``: at most N steps of a layer run at once.

Only *when* steps run changes: the layer still settles its steps in file order,
so results, state writes and the trace are the same as without a limit. Steps
take free slots in file order. Under a virtual clock a step that waited starts
at the moment the slot it takes was freed (the earliest one), so virtual time
shows the queueing a real run would have.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Awaitable
from typing import TypeVar

from ..._core.clock import Clock, VirtualClock

__all__ = ["StepSlots"]

T = TypeVar("T")


class StepSlots:
    """The slots of one layer; ``limit=None`` means no limit."""

    def __init__(self, limit: int | None, start: float) -> None:
        self._limit = limit
        self._semaphore = asyncio.Semaphore(limit) if limit is not None else None
        self._free_at = [start] * limit if limit is not None else []

    async def run(self, clock: Clock, step: Awaitable[T]) -> T:
        """Await ``step`` once a slot is free; ``clock`` is the step's own (forked) clock."""
        if self._semaphore is None:
            return await step
        async with self._semaphore:
            free_at = heapq.heappop(self._free_at)
            if isinstance(clock, VirtualClock) and free_at > clock.now():
                clock.advance(free_at - clock.now())
            try:
                return await step
            finally:
                heapq.heappush(self._free_at, clock.now())
