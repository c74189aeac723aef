"""Injected time: a virtual clock that moves only when something sleeps, forks per step, and run ids."""

from __future__ import annotations

import asyncio

from pytest_agentloom.core.clock import SystemClock, VirtualClock, current_clock, derived_run_id, use_clock


def test_virtual_time_moves_only_by_sleeping_or_advancing() -> None:
    clock = VirtualClock(start=5)
    asyncio.run(clock.sleep(2.5))
    clock.advance(1)
    clock.advance(-3)  # never backwards
    assert clock.now() == 8.5 and clock.is_virtual


def test_forks_run_apart_and_join_at_the_latest() -> None:
    clock = VirtualClock()
    first, second = clock.fork(), clock.fork()
    asyncio.run(first.sleep(3))
    asyncio.run(second.sleep(1))
    clock.join([first, second])
    assert clock.now() == 3


def test_the_current_clock_is_the_one_in_use_and_real_time_otherwise() -> None:
    clock = VirtualClock(start=42)
    with use_clock(clock):
        assert current_clock() is clock
    assert isinstance(current_clock(), SystemClock)


def test_derived_run_ids_are_a_pure_function_of_their_parts() -> None:
    assert derived_run_id("a", "b") == derived_run_id("a", "b") != derived_run_id("a", "c")
    assert derived_run_id("a", "b") != derived_run_id("ab")  # parts are kept apart
    assert derived_run_id("x").startswith("run-") and len(derived_run_id("x")) == len("run-") + 12
