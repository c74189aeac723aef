"""Hostile shapes against a baseline tree, paired rounds: a long chain whose first step fails, router conditions.

Run it from the repository root::

    python bench/hostile.py --baseline /work/main      # this tree against another checkout
    python bench/hostile.py --quick                    # tiny sizes, this tree only: checks that it runs

Each round runs every case once in a fresh process of this tree and once of the baseline (``PYTHONPATH``
set to each), in alternating order, and the table shows the medians and the median of the per-round
ratios (baseline / this tree): a ratio in one run, not absolute times, which vary with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CONDITIONS = (
    "steps.classify.output.strip().lower() == 'bug'",
    "label in ['bug', 'crash'] or state.urgent",
    "len(tags) > 1 and score >= 50",
)
"""Typical router conditions (the shapes of docs/workflow-format.md and tests/engine/steps/test_router.py)."""


def failed_chain_seconds(length: int) -> float:
    """Seconds of one run of a ``length``-step chain whose first step fails (the rest are skipped)."""
    from pytest_agentloom import VirtualClock, run_workflow
    from pytest_agentloom.engine._format.loader import parse_workflow

    lines = ["name: failed-chain", "steps:", "  - {id: s0, type: tool, tool_name: boom}"]
    lines += [f"  - {{id: s{i}, type: tool, tool_name: ok, depends_on: [s{i - 1}]}}" for i in range(1, length)]
    workflow = parse_workflow("\n".join(lines) + "\n")

    def boom() -> None:
        raise ValueError("the first step fails")

    tools = {"boom": boom, "ok": lambda: 1}
    run_workflow(workflow, tools=tools, clock=VirtualClock(), runs_dir=False)  # the workflow's hash, once
    started = time.perf_counter()
    result = run_workflow(workflow, tools=tools, clock=VirtualClock(), runs_dir=False)
    elapsed = time.perf_counter() - started
    assert result.steps[f"s{length - 1}"].error == "depends on failed step 's0'"
    return elapsed


def condition_microseconds(evaluations: int) -> float:
    """Microseconds per evaluation of the typical conditions, compiled once (what a router does per run)."""
    from pytest_agentloom.engine._evaluate.expressions import compile_expression

    state = {"steps": {"classify": {"output": " Bug "}}, "label": "bug", "urgent": False, "tags": ["a", "b"],
             "score": 72}
    compiled = [compile_expression(text) for text in CONDITIONS]
    started = time.perf_counter()
    for _ in range(evaluations):
        for expression in compiled:
            expression.evaluate(state)
    return (time.perf_counter() - started) / (evaluations * len(compiled)) * 1e6


def cases(quick: bool) -> dict[str, tuple[str, int]]:
    """Label -> (function, argument)."""
    lengths = (50, 200) if quick else (2_500, 10_000)
    chains = {f"chain-{n} whose first step fails (s)": ("failed_chain_seconds", n) for n in lengths}
    return {**chains, "typical router condition (us)": ("condition_microseconds", 200 if quick else 20_000)}


def run_case(tree: Path, function: str, argument: int) -> float:
    """One measurement in a fresh process whose ``pytest_agentloom`` is the one in ``tree``."""
    check = subprocess.run([sys.executable, "-c", "import pytest_agentloom; print(pytest_agentloom.__file__)"],
                           env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tree, capture_output=True, text=True,
                           check=True)
    if not Path(check.stdout.strip()).is_relative_to(tree.resolve()):
        raise SystemExit(f"{tree}: its pytest_agentloom is not the one imported ({check.stdout.strip()})")
    code = f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); import hostile; " \
           f"print(hostile.{function}({argument}))"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=tree, capture_output=True, text=True,
                          check=False, timeout=600)  # cwd: ``-c`` puts the working directory first on sys.path
    if done.returncode:
        raise SystemExit(f"{tree}: {function}({argument}) failed:\n{done.stderr}")
    return float(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with (e.g. /work/main)")
    parser.add_argument("--rounds", type=int, default=5, help="paired rounds (default 5)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round")
    parser.add_argument("--json", action="store_true", help="print the medians as JSON too")
    args = parser.parse_args(argv)
    rounds = 1 if args.quick else args.rounds
    trees = {"this tree": ROOT, **({"baseline": args.baseline} if args.baseline else {})}
    print(f"python {sys.version.split()[0]}, {rounds} paired rounds; baseline: {args.baseline or 'none'}")
    medians: dict[str, dict[str, float]] = {}
    for label, (function, argument) in cases(args.quick).items():
        figures: dict[str, list[float]] = {name: [] for name in trees}
        for round_number in range(rounds):
            order = list(trees) if round_number % 2 == 0 else list(reversed(trees))
            for name in order:
                figures[name].append(run_case(trees[name], function, argument))
        medians[label] = {name: statistics.median(values) for name, values in figures.items()}
        line = f"{label:<42} this tree {medians[label]['this tree']:>10.4f}"
        if "baseline" in figures:
            ratio = statistics.median(b / o for b, o in zip(figures["baseline"], figures["this tree"], strict=True))
            line += f"   baseline {medians[label]['baseline']:>10.4f}   baseline/this {ratio:>7.2f}x"
        print(line)
    if args.json:
        print(json.dumps(medians, indent=2))


if __name__ == "__main__":
    main()
