"""Injected time: a virtual clock that moves only when something sleeps, forks per step, and run ids."""

from __future__ import annotations

import asyncio

from pytest_agentloom._core.clock import (
    SystemClock,
    VirtualClock,
    current_clock,
    derived_run_id,
    enter_clock,
    leave_clock,
    use_clock,
)


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


def test_a_fork_starts_at_the_time_it_was_made_and_a_join_never_goes_back() -> None:
    clock = VirtualClock(start=2)
    early = clock.fork()
    clock.advance(5)
    late = clock.fork()
    assert isinstance(late, VirtualClock) and (early.now(), late.now()) == (2, 7)
    asyncio.run(late.sleep(0.5))
    assert clock.now() == 7  # a fork's time is its own until the join
    clock.join([early])  # behind the clock: nothing moves
    assert clock.now() == 7
    clock.join([early, late, early])
    assert clock.now() == 7.5
    clock.join([])
    assert clock.now() == 7.5


def test_the_current_clock_is_the_one_in_use_and_real_time_otherwise() -> None:
    clock = VirtualClock(start=42)
    with use_clock(clock):
        assert current_clock() is clock
    assert isinstance(current_clock(), SystemClock)


def test_enter_and_leave_make_a_clock_current_and_restore_the_one_before() -> None:
    outer, inner = VirtualClock(start=1), VirtualClock(start=2)
    with use_clock(outer):
        token = enter_clock(inner)
        assert current_clock() is inner
        leave_clock(token)
        assert current_clock() is outer


def test_derived_run_ids_are_a_pure_function_of_their_parts() -> None:
    assert derived_run_id("a", "b") == derived_run_id("a", "b") != derived_run_id("a", "c")
    assert derived_run_id("a", "b") != derived_run_id("ab")  # parts are kept apart
    assert derived_run_id("x").startswith("run-") and len(derived_run_id("x")) == len("run-") + 12
