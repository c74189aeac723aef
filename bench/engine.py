"""Engine throughput: a 50-step chain and a 20-wide fan-out, scripted provider, virtual clock.

Run it from the repository root::

    python bench/engine.py            # default sizes
    python bench/engine.py --runs 50  # more runs per repeat

It prints steps per second (the median of several repeats) for each shape. It is
a script, not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_agentloom import Scripted, VirtualClock, Workflow, reply, run_workflow
from pytest_agentloom.engine._format.loader import parse_workflow

CHAIN_LENGTH = 50
FAN_WIDTH = 20


def chain(length: int = CHAIN_LENGTH) -> Workflow:
    """``length`` llm_call steps, each reading the previous step's output."""
    lines = ["name: bench-chain", "config: {model: gpt-4o-mini}", "state: {topic: tides}", "steps:",
             "  - {id: s00, type: llm_call, prompt: 'Start on {state.topic}', output: out.s00}"]
    for index in range(1, length):
        lines.append(
            f"  - {{id: s{index:02d}, type: llm_call, depends_on: [s{index - 1:02d}],"
            f" prompt: 'Go on from {{state.steps.s{index - 1:02d}.output}}', output: out.s{index:02d}}}"
        )
    return parse_workflow("\n".join(lines) + "\n")


def fan_out(width: int = FAN_WIDTH) -> Workflow:
    """One planning call, ``width`` parallel branches (llm_call and tool alternating), one join."""
    lines = ["name: bench-fan-out", "config: {model: gpt-4o-mini}", "state: {topic: tides, items: [1, 2, 3]}",
             "steps:", "  - {id: plan, type: llm_call, prompt: 'Plan {state.topic}', output: plan}"]
    branches = []
    for index in range(width):
        step_id = f"b{index:02d}"
        branches.append(step_id)
        if index % 2:
            lines.append(f"  - {{id: {step_id}, type: tool, tool_name: work, depends_on: [plan],"
                         f" tool_args: {{n: {index}, items: state.items}}, output: 'results.{step_id}'}}")
        else:
            lines.append(f"  - {{id: {step_id}, type: llm_call, depends_on: [plan],"
                         f" prompt: 'Part {index} of {{state.plan}}', output: 'results.{step_id}'}}")
    lines.append(f"  - {{id: join, type: tool, tool_name: join, depends_on: [{', '.join(branches)}],"
                 " tool_args: {results: state.results}, output: summary}")
    return parse_workflow("\n".join(lines) + "\n")


def chain_provider() -> Scripted:
    return Scripted({f"s{index:02d}": reply(f"part {index}", input_tokens=20, output_tokens=5)
                     for index in range(CHAIN_LENGTH)})


def fan_provider() -> Scripted:
    replies = {"plan": reply("the plan", input_tokens=20, output_tokens=5)}
    replies.update({f"b{index:02d}": reply(f"part {index}", input_tokens=20, output_tokens=5)
                    for index in range(0, FAN_WIDTH, 2)})
    return Scripted(replies)


async def work(n: int, items: list[int]) -> int:
    return n + sum(items)


TOOLS = {"work": work, "join": lambda results: len(results)}
# no run records on disk: the benchmark measures the engine, not the file system
OPTIONS = {"runs_dir": False} if "runs_dir" in inspect.signature(run_workflow).parameters else {}


def measure(workflow: Workflow, provider: Callable[[], Scripted], runs: int, repeats: int) -> tuple[float, float]:
    """Median and best steps per second over ``repeats`` batches of ``runs`` runs."""
    steps = len(workflow.steps)
    result = run_workflow(workflow, provider=provider(), tools=TOOLS, clock=VirtualClock(), **OPTIONS)  # warm-up
    assert result.ok, {k: v.error for k, v in result.steps.items() if v.error}
    rates = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(runs):
            run_workflow(workflow, provider=provider(), tools=TOOLS, clock=VirtualClock(), **OPTIONS)
        rates.append(steps * runs / (time.perf_counter() - started))
    return statistics.median(rates), max(rates)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per repeat (default 20)")
    parser.add_argument("--repeats", type=int, default=5, help="repeats; the median is reported (default 5)")
    args = parser.parse_args(argv)
    print(f"python {sys.version.split()[0]}, {args.runs} runs x {args.repeats} repeats")
    for label, workflow, provider in (
        (f"chain of {CHAIN_LENGTH} llm_call steps", chain(), chain_provider),
        (f"fan-out of {FAN_WIDTH} (+ plan + join)", fan_out(), fan_provider),
    ):
        median, best = measure(workflow, provider, args.runs, args.repeats)
        print(f"{label:<36} {median:>9,.0f} steps/s (median)  {best:>9,.0f} steps/s (best)")


if __name__ == "__main__":
    main()
