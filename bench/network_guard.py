"""What the replay's network guard (``_core/offline.py``) costs per call, against another version of it.

The guard is an audit hook (``sys.addaudithook``) that every audited event of the process goes through,
and a seal set around each provider call of a replay. The two versions are compared in one process,
interleaved round by round (so that other work on the machine hits both alike), each cost per call,
median of the rounds:

1. **sealing a call**: what a replayed provider call does to seal itself and unseal after (this tree:
   ``enter_seal``/``leave_seal``, which also count the call's thread; before: ``seal.set``/``reset``);
2. **a network audit event outside a replay** (``socket.getaddrinfo``): the hook's work for each
   connection or name lookup the process makes once the hook is in;
3. **any other audit event** (``open``): what the rest of the process pays;
4. and, for scale, **a whole replayed call** of this tree: a provider that answers at once (no HTTP)
   wrapped by a replay-only :class:`~pytest_agentloom.replay.CassetteSession`, 2,000 calls in one loop.

Run: ``python bench/network_guard.py [--rounds N] [--before DIR]``; ``--before`` is a checkout (a worktree
of ``main``) whose ``pytest_agentloom/_core/offline.py`` is loaded beside this tree's (it imports only the
standard library).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CASSETTE = ROOT / "cassettes" / "examples" / "support_triage" / "test_example_triage_recorded.py" / \
    "test_question_is_answered.yaml"
CALLS = 2_000
LOOPS = 20_000


def _load(tree: Path) -> ModuleType:
    path = tree / "pytest_agentloom" / "_core" / "offline.py"
    spec = importlib.util.spec_from_file_location("offline_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _per_call(work: Callable[[], None]) -> float:
    start = time.perf_counter()
    for _ in range(LOOPS):
        work()
    return (time.perf_counter() - start) / LOOPS


def _cases(module: ModuleType) -> dict[str, Callable[[], None]]:
    value = module.Seal(lambda request, transport: RuntimeError("unused"))
    hook = module._refuse_in_sealed_calls
    if hasattr(module, "enter_seal"):
        def seal_one() -> None:
            module.leave_seal(module.enter_seal(value))
    else:
        def seal_one() -> None:
            module.seal.reset(module.seal.set(value))
    return {"sealing a call": seal_one,
            "network event": lambda: hook("socket.getaddrinfo", ("127.0.0.1", 80, 0, 0, 0, 0)),
            "other event": lambda: hook("open", ("/tmp/x", "r", 0))}


def _whole_call(rounds: int) -> float:
    from pytest_agentloom._core.types import LLMRequest, LLMResponse, Message
    from pytest_agentloom.replay import CassetteConfig, CassetteSession, RecordMode

    class Instant:
        name = "instant"

        async def complete(self, request: LLMRequest) -> LLMResponse:
            return LLMResponse(text="x", model=request.model)

    request = LLMRequest(step_id="s", model="m", messages=(Message(role="user", content="hi"),))
    times = []
    with CassetteSession(CassetteConfig(path=CASSETTE, mode=RecordMode.NONE)) as session:  # read, never written
        wrapped = session.wrap(Instant())

        async def calls() -> None:
            for _ in range(CALLS):
                await wrapped.complete(request)

        for _ in range(rounds):
            start = time.perf_counter()
            asyncio.run(calls())
            times.append((time.perf_counter() - start) / CALLS)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--before", type=Path, help="another checkout to compare with (e.g. a worktree of main)")
    args = parser.parse_args(argv)
    from pytest_agentloom._core import offline

    trees: dict[str, Any] = {"this tree": _cases(offline)}
    if args.before:
        trees["before"] = _cases(_load(args.before.resolve()))
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for name in trees["this tree"]:
            for tree, cases in trees.items():
                times.setdefault((tree, name), []).append(_per_call(cases[name]))
    whole = _whole_call(max(3, args.rounds // 3))
    print(f"{'a whole replayed call':>22}: {whole * 1e6:8.3f} us (this tree)")
    for name in trees["this tree"]:
        after = statistics.median(times[("this tree", name)])
        line = f"{name:>22}: {after * 1e6:8.3f} us"
        if args.before:
            before_times = times[("before", name)]
            before = statistics.median(before_times)
            ratio = statistics.median(a / b for a, b in zip(times[("this tree", name)], before_times, strict=True))
            line += f"   before {before * 1e6:8.3f} us   ratio {ratio:.2f}x   (+{(after - before) * 1e6:.3f} us)"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
