"""run_sync: one kept asyncio.Runner in the main thread, each call ending as asyncio.run ends one."""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
import time
import warnings

import pytest

from pytest_agentloom._core.speedups import ENV_VAR
from pytest_agentloom.engine._entry.sync import close_runner, run_sync

marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="outside")


def test_calls_return_their_results_and_raise_their_errors() -> None:
    async def answer(value: int) -> int:
        await asyncio.sleep(0)
        return value

    async def failing() -> None:
        raise ValueError("from the coroutine")

    assert [run_sync(answer(n)) for n in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError, match="from the coroutine"):
        run_sync(failing())
    assert run_sync(answer(7)) == 7


def test_tasks_left_behind_are_cancelled_before_the_call_returns() -> None:
    ended: list[str] = []

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            ended.append("cleaned up")

    async def leaves_a_task() -> str:
        asyncio.get_running_loop().create_task(forever())
        await asyncio.sleep(0)
        return "done"

    assert run_sync(leaves_a_task()) == "done"
    assert ended == ["cleaned up"]


def test_open_async_generators_are_closed_at_the_end_of_the_call() -> None:
    closed: list[str] = []

    async def numbers():  # type: ignore[no-untyped-def]
        try:
            yield 1
            yield 2
        finally:
            closed.append("closed")

    kept = []

    async def half_way() -> int:
        generator = numbers()
        kept.append(generator)  # still referenced: only the end of the call can close it
        return await generator.__anext__()

    assert run_sync(half_way()) == 1
    assert closed == ["closed"]


def test_each_call_sees_the_context_variables_of_its_caller() -> None:
    async def read() -> str:
        return marker.get()

    assert run_sync(read()) == "outside"
    token = marker.set("set by the caller")
    try:
        assert run_sync(read()) == "set by the caller"
    finally:
        marker.reset(token)
    assert run_sync(read()) == "outside"


def test_context_variables_set_in_a_call_stay_in_it() -> None:
    async def setting() -> str:
        marker.set("inside")
        return marker.get()

    assert run_sync(setting()) == "inside"
    assert marker.get() == "outside"


def test_no_event_loop_is_left_set_between_calls() -> None:
    """As after asyncio.run: synchronous code asking for the current loop never gets the kept one."""

    async def the_loop() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    kept = run_sync(the_loop())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: no current loop, so one may be made
            current = asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:
        return  # "There is no current event loop"
    try:
        assert current is not kept
    finally:
        current.close()
        asyncio.set_event_loop(None)


def test_a_keyboard_interrupt_propagates_and_the_next_call_works() -> None:
    async def interrupted() -> None:
        raise KeyboardInterrupt

    async def answer() -> str:
        return "fine"

    with pytest.raises(KeyboardInterrupt):
        run_sync(interrupted())
    assert run_sync(answer()) == "fine"


def test_a_loop_closed_by_someone_else_is_replaced() -> None:
    async def the_loop() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    loop = run_sync(the_loop())
    loop.close()
    assert run_sync(the_loop()) is not loop


def test_inside_a_running_loop_and_in_other_threads_it_still_runs() -> None:
    async def answer() -> str:
        return "answer"

    async def from_async_code() -> str:
        return run_sync(answer())

    assert asyncio.run(from_async_code()) == "answer"
    box: list[str] = []
    thread = threading.Thread(target=lambda: box.append(run_sync(answer())))
    thread.start()
    thread.join()
    assert box == ["answer"]


def test_ctrl_c_cancels_the_run_which_ends_in_keyboard_interrupt_and_the_handler_is_put_back() -> None:
    import os
    import signal

    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("Python's own Ctrl-C handler is not in place in this process")
    cleaned: list[str] = []

    async def waits() -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cleaned.append("cancelled")  # the run's own clean-up runs, as under asyncio.run
            raise

    async def answer() -> str:
        return "fine"

    with pytest.raises(KeyboardInterrupt):
        run_sync(waits())
    assert cleaned == ["cancelled"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert run_sync(answer()) == "fine"


def test_a_programs_own_ctrl_c_handler_is_left_in_place() -> None:
    import signal

    seen: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        async def handler_during_the_call() -> object:
            return signal.getsignal(signal.SIGINT)

        during = run_sync(handler_during_the_call())
        assert during is signal.getsignal(signal.SIGINT) and during is not signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


async def _the_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def test_the_runner_closed_by_close_runner_is_replaced_by_the_next_call() -> None:
    loop = run_sync(_the_loop())
    close_runner()
    assert loop.is_closed()
    assert run_sync(_the_loop()) is not loop
    close_runner()
    close_runner()  # closing twice is harmless


def test_with_the_speedups_off_every_call_has_a_loop_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "0")
    first = run_sync(_the_loop())
    assert first.is_closed()
    assert run_sync(_the_loop()) is not first


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
# Python 3.12+ warns at any fork of a process with threads (earlier tests leave the kept loop's executor
# threads); the child here only runs a loop and leaves with os._exit
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_runs_on_a_loop_of_its_own() -> None:
    parent_loop = run_sync(_the_loop())
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, and leave without running the parent's clean-up
        try:
            ok = run_sync(_the_loop()) is not parent_loop
            os.write(write, b"ok" if ok else b"same loop")
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 100)
    os.close(read)
    os.waitpid(pid, 0)
    assert answer == b"ok"
    assert run_sync(_the_loop()) is parent_loop  # the parent's runner is untouched
    # and still woken by other threads (its wake-up pipe stays registered in the epoll instance it shares with
    # the child): a result a thread hands back while the loop waits in select arrives. With the pipe lost the
    # loop slept until the timeout (a thread that answered before the loop reached select hid it, so this one
    # answers late; a DNS lookup in the executor was the hang a webhook test found)
    assert run_sync(_woken_within(5.0))


async def _woken_within(seconds: float) -> bool:
    """Whether a thread's late answer woke the loop well before a 20-second timer would have."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    done, _ = await asyncio.wait({loop.run_in_executor(None, _answer_late)}, timeout=20)
    return bool(done) and loop.time() - started < seconds


def _answer_late() -> str:
    """A thread's answer given when the waiting loop is surely blocked in select (it has nothing else to do)."""
    time.sleep(0.3)
    return "woken"
