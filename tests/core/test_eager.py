"""gather_eager behaves as asyncio.gather does (results, concurrency, contexts, cancellation), with its speed-up
on and off (``AGENTLOOM_SPEEDUPS=0``: gather itself)."""

from __future__ import annotations

import asyncio
import contextvars

import anyio
import pytest

from pytest_agentloom._core.eager import gather_eager

seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="caller")


@pytest.fixture(autouse=True, params=["on", "off"])
def speedups(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("AGENTLOOM_SPEEDUPS", "1" if request.param == "on" else "0")
    return str(request.param)


async def immediate(value: int) -> int:
    return value


async def suspending(value: int) -> int:
    await asyncio.sleep(0)
    return value


def test_results_come_back_in_the_order_of_the_coroutines() -> None:
    async def main() -> list[int]:
        return await gather_eager([immediate(1), suspending(2), immediate(3), suspending(4), immediate(5)])

    assert asyncio.run(main()) == [1, 2, 3, 4, 5]


def test_a_suspended_coroutine_runs_concurrently_with_the_ones_after_it() -> None:
    """The first waits for what the last one does: run one after the other, they would never finish."""

    async def main() -> list[str]:
        ready = asyncio.Event()

        async def waiter() -> str:
            await ready.wait()
            return "waited"

        async def setter() -> str:
            await asyncio.sleep(0)
            ready.set()
            return "set"

        return await asyncio.wait_for(gather_eager([immediate(0), waiter(), setter()]), 30)

    assert asyncio.run(main()) == [0, "waited", "set"]


def test_each_coroutine_has_its_own_context_as_a_task_would() -> None:
    async def setting(name: str) -> str:
        before = seen.get()
        seen.set(name)
        await asyncio.sleep(0)
        return f"{before}->{seen.get()}"

    async def main() -> tuple[list[str], str]:
        results = await gather_eager([setting("a"), setting("b"), setting("c")])
        return results, seen.get()

    results, after = asyncio.run(main())
    assert results == ["caller->a", "caller->b", "caller->c"]
    assert after == "caller"


def test_an_anyio_cancel_scope_inside_a_suspended_coroutine_works() -> None:
    async def bounded() -> str:
        with anyio.move_on_after(0.01) as scope:
            await asyncio.sleep(30)
        return "moved on" if scope.cancelled_caught else "slept"

    async def main() -> list[str]:
        return await gather_eager([bounded(), suspending("next"), bounded()])  # type: ignore[list-item]

    assert asyncio.run(main()) == ["moved on", "next", "moved on"]


def test_an_exception_propagates_and_later_coroutines_are_cancelled() -> None:
    cancelled = []

    async def failing() -> int:
        await asyncio.sleep(0)
        raise ValueError("boom")

    async def slow() -> int:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append("slow")
            raise
        return 1

    async def main() -> None:
        await gather_eager([immediate(0), failing(), slow()])

    with pytest.raises(ValueError, match="boom"):
        asyncio.run(main())
    assert cancelled == ["slow"]


def test_cancelling_the_caller_cancels_the_suspended_coroutine() -> None:
    cancelled = []

    async def slow(name: str) -> int:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(name)
            raise
        return 1

    async def main() -> None:
        outer = asyncio.ensure_future(gather_eager([slow("first"), slow("second")]))
        await asyncio.sleep(0.01)
        outer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await outer

    asyncio.run(main())
    assert sorted(cancelled) == ["first", "second"]
