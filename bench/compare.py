"""Our engine against upstream ``agentloom`` 0.4.0, in one process, paired rounds.

Each case is one workflow, given to both engines as the same plain data:

* ``chain-N``: N ``llm_call`` steps, each reading the previous step's output;
* ``fan-N``: one planning call, N parallel calls reading the plan, one join;
* ``chain-50 + X MB``: the 50-step chain with a state of X MB of small records
  (about 100 bytes each) that no step reads.

Ours runs with a ``Scripted`` provider on a ``VirtualClock`` with no run record
(``runs_dir=False``); upstream's with its ``MockProvider`` registered on a
gateway **without its 60-requests-per-minute limiter** (otherwise every call
past the 60th waits about a second and the comparison measures the limiter).
Both engines build their run from a parsed workflow each round, as a caller
holding a loaded workflow does; parsing is not timed for either.

A round runs ours and upstream's once each, alternating which goes first, and
the case's ratio is the median of the rounds' ratios (upstream time / ours:
above 1 means ours is faster). The scaling table runs ours alone on chains of
growing length and a growing fan-out, and prints each one's time per step
against the smallest's. Peak memory (``tracemalloc``) of the longest chain is
measured in an untimed run.

Rows of the other benches of issue 10 are printed after the comparison, in
the same columns: ``compare_rows(rounds)`` of ``bench/replay.py`` (a replayed
cassette against ``Scripted`` and against bare vcrpy) and of ``bench/tables.py``
(a 1,000-row scenario table against trivial parametrised tests, with and without
``-n 2``), each where the function exists. Their ratio is theirs: ours / baseline,
below 1 means ours is faster.

Getting upstream: it is not a dependency, and its wheel installs a console script
named ``agentloom`` that would replace ours on ``PATH``. So it is installed apart,
without its dependencies (our environment has the ones its engine imports: anyio,
httpx, pydantic, PyYAML) and without touching ``PATH``::

    pip install -e '.[bench]'                  # what the benches need besides upstream (pytest-xdist, anyio)
    python bench/compare.py --install-upstream # pip install --no-deps --target bench/.upstream agentloom==0.4.0

``bench/.upstream`` (git-ignored) is then found by itself. Upstream can also be
found on ``sys.path`` (``import agentloom``) or in the site-packages folder named
by ``--upstream-site`` or ``AGENTLOOM_UPSTREAM_SITE`` (e.g. a virtualenv of its
own). The folder is appended *after* ours on ``sys.path``, so the libraries both
use are ours. Without upstream the upstream column is left out. Run from the
repository root::

    python bench/compare.py                # everything (about ten minutes on a quiet machine)
    python bench/compare.py --only chain-50,fan-20 --rounds 15
    python bench/compare.py --quick        # tiny sizes: checks the script runs
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import logging
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_agentloom import Scripted, VirtualClock, Workflow, run_workflow
from pytest_agentloom.engine._format.loader import parse_workflow

BENCH = Path(__file__).resolve().parent
UPSTREAM_DIR = BENCH / ".upstream"  # where --install-upstream puts agentloom 0.4.0
UPSTREAM_REQUIREMENT = "agentloom==0.4.0"
MODEL = "gpt-4o-mini"
RECORD = {"title": "a record of the corpus", "tags": ["alpha", "beta"], "score": 0.5}


# -- the workflows, as plain data both engines read ------------------------------------------------------------

def chain_data(length: int, state_mb: float = 0.0) -> dict[str, Any]:
    steps = [{"id": "s0", "type": "llm_call", "prompt": "Start on {state.topic}", "output": "r0"}]
    steps += [{"id": f"s{i}", "type": "llm_call", "depends_on": [f"s{i - 1}"],
               "prompt": f"Go on from {{state.r{i - 1}}}", "output": f"r{i}"} for i in range(1, length)]
    return _workflow("chain", steps, state_mb)


def fan_data(width: int) -> dict[str, Any]:
    branches = [f"b{i}" for i in range(width)]
    steps = [{"id": "plan", "type": "llm_call", "prompt": "Plan {state.topic}", "output": "plan"}]
    steps += [{"id": sid, "type": "llm_call", "depends_on": ["plan"], "prompt": f"Part {sid} of {{state.plan}}",
               "output": f"part_{sid}"} for sid in branches]
    steps.append({"id": "join", "type": "llm_call", "depends_on": branches,
                  "prompt": "Join the parts of {state.plan}", "output": "summary"})
    return _workflow("fan", steps, 0.0)


def _workflow(name: str, steps: list[dict[str, Any]], state_mb: float) -> dict[str, Any]:
    state: dict[str, Any] = {"topic": "tides"}
    if state_mb:
        size = len(json.dumps(dict(RECORD, id=0)))
        state["corpus"] = [dict(RECORD, id=i) for i in range(int(state_mb * 1_000_000 / size))]
    return {"name": f"bench-{name}", "config": {"model": MODEL, "provider": "mock"}, "state": state, "steps": steps}


def llm_step_ids(data: dict[str, Any]) -> list[str]:
    return [step["id"] for step in data["steps"] if step["type"] == "llm_call"]


# -- the two engines ----------------------------------------------------------------------------------------------

class Ours:
    """Our engine: the workflow parsed once, a fresh Scripted provider per run (built before the clock starts)."""

    name = "ours"

    def __init__(self, data: dict[str, Any]) -> None:
        self.workflow: Workflow = parse_workflow(json.dumps(data))
        self.replies = {sid: f"answer of {sid}" for sid in llm_step_ids(data)}

    def prepare(self) -> Callable[[], None]:
        provider = Scripted(self.replies)

        def run() -> None:
            result = run_workflow(self.workflow, provider=provider, clock=VirtualClock(), runs_dir=False)
            if not result.ok:
                raise SystemExit(f"our run failed: {result.failed_step} {result.steps[result.failed_step].error}")
        return run


class Upstream:
    """agentloom 0.4.0 as its CLI runs a mock workflow, minus the gateway's rate limiter."""

    name = "upstream"

    def __init__(self, data: dict[str, Any]) -> None:
        from agentloom.core.parser import WorkflowParser

        # upstream's cycle check recurses along the chain, from a step its set order picks (it varies with
        # PYTHONHASHSEED): room for the 2,000-step chain, whatever the order
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 2 * len(data["steps"]) + 1000))
        self.workflow = WorkflowParser.from_dict(data)

    def prepare(self) -> Callable[[], None]:
        import anyio
        from agentloom.core.engine import WorkflowEngine
        from agentloom.core.state import StateManager
        from agentloom.providers.gateway import ProviderGateway
        from agentloom.providers.mock import MockProvider
        from agentloom.tools.registry import ToolRegistry

        workflow = self.workflow

        def run() -> None:
            gateway = ProviderGateway()
            gateway.register(MockProvider(workflow_name=workflow.name), priority=0, max_rpm=10**9, max_tpm=10**12)
            engine = WorkflowEngine(workflow=workflow, state_manager=StateManager(initial_state=dict(workflow.state)),
                                    provider_gateway=gateway, tool_registry=ToolRegistry())
            result = anyio.run(engine.run)
            if result.status.value != "success":
                raise SystemExit(f"upstream run failed: {result.error}")
        return run


def install_upstream() -> None:
    """agentloom 0.4.0 into ``bench/.upstream``: no dependencies, no console script on ``PATH``."""
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--upgrade", "--target", str(UPSTREAM_DIR),
               UPSTREAM_REQUIREMENT]
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def find_upstream(site: str | None) -> bool:
    """Make ``agentloom`` importable if it can be; True when it is."""
    if site:
        sys.path.append(site)
    elif UPSTREAM_DIR.is_dir():
        sys.path.append(str(UPSTREAM_DIR))
    try:
        import agentloom  # noqa: F401
    except ImportError:
        return False
    logging.getLogger("agentloom").setLevel(logging.WARNING)
    return True


# -- timing ---------------------------------------------------------------------------------------------------------

def timed(engine: Ours | Upstream) -> float:
    run = engine.prepare()
    gc.collect()
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


@dataclass
class Case:
    label: str
    data: dict[str, Any]
    rounds: int

    @property
    def steps(self) -> int:
        return len(self.data["steps"])


def compare(case: Case, with_upstream: bool) -> dict[str, Any]:
    """Paired rounds of one case; the median time of each engine and the median of the per-round ratios."""
    engines: list[Ours | Upstream] = [Ours(case.data)]
    if with_upstream:
        engines.append(Upstream(case.data))
    for engine in engines:
        timed(engine)  # warm-up: imports, caches, first-call costs
    times: dict[str, list[float]] = {engine.name: [] for engine in engines}
    for round_number in range(case.rounds):
        order = engines if round_number % 2 == 0 else engines[::-1]
        for engine in order:
            times[engine.name].append(timed(engine))
    row: dict[str, Any] = {"case": case.label, "steps": case.steps,
                           **{name: statistics.median(values) for name, values in times.items()}}
    if with_upstream:
        row["ratio"] = statistics.median(u / o for u, o in zip(times["upstream"], times["ours"], strict=True))
    return row


def peak_memory(data: dict[str, Any]) -> float:
    """Peak traced allocation (MB) of one run of ours; tracemalloc slows the run, so it is never timed."""
    run = Ours(data).prepare()
    gc.collect()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1] / 1_000_000
    finally:
        tracemalloc.stop()


# -- the report -----------------------------------------------------------------------------------------------------

def _ms(seconds: float) -> str:
    return f"{seconds * 1000:10.1f} ms"


def _per_step(seconds: float, steps: int) -> str:
    return f"{seconds / steps * 1_000_000:8.1f} us"


def comparison_header(with_upstream: bool) -> str:
    head = f"{'case':<22}{'steps':>6}{'ours':>14}{'per step':>12}"
    if with_upstream:
        head += f"{'upstream':>14}{'per step':>12}{'upstream/ours':>15}"
    return head


def comparison_line(row: dict[str, Any], with_upstream: bool) -> str:
    line = f"{row['case']:<22}{row['steps']:>6}{_ms(row['ours']):>14}{_per_step(row['ours'], row['steps']):>12}"
    if with_upstream:
        line += f"{_ms(row['upstream']):>14}{_per_step(row['upstream'], row['steps']):>12}{row['ratio']:>14.2f}x"
    return line


def other_rows(rounds: int) -> list[dict[str, Any]]:
    """The rows of ``bench/replay.py`` and ``bench/tables.py`` (their ``compare_rows``), where those exist."""
    rows: list[dict[str, Any]] = []
    for name in ("replay", "tables"):
        try:
            module = importlib.import_module(name)  # bench/ is on sys.path: it holds this script
        except ImportError as exc:
            print(f"bench/{name}.py: not importable ({exc}); its rows are left out", flush=True)
            continue
        compare_rows = getattr(module, "compare_rows", None)
        if compare_rows is None:
            print(f"bench/{name}.py has no compare_rows(rounds); its rows are left out", flush=True)
            continue
        rows.extend(compare_rows(rounds))
    return rows


def other_line(row: dict[str, Any]) -> str:
    """A row of another bench: its baseline in the upstream column, its own ratio (ours / baseline)."""
    return (f"{row['case']:<22}{'':>6}{_ms(row['ours_s']):>14}{'':>12}{_ms(row['baseline_s']):>14}{'':>12}"
            f"{row['ratio']:>14.2f}x  (ours/baseline)")


def print_scaling(title: str, cases: list[Case]) -> None:
    """Ours alone on each case, printed as it is measured, time per step against the first case's."""
    print(f"\n{title}: ours alone, time per step against the first row", flush=True)
    base = None
    for case in cases:
        row = compare(case, False)
        per_step = row["ours"] / row["steps"]
        base = base or per_step
        print(f"{row['case']:<22}{row['steps']:>6}{_ms(row['ours']):>14}{_per_step(row['ours'], row['steps']):>12}"
              f"{per_step / base:>10.2f}x", flush=True)


def cases(quick: bool, rounds: int, lengths: list[int]) -> tuple[list[Case], list[Case], list[Case], dict[str, Any]]:
    """The compared cases, the chain scaling cases, the fan-out scaling cases, the memory case."""
    if quick:
        compared = [Case("chain-5", chain_data(5), 1), Case("fan-3", fan_data(3), 1),
                    Case("chain-5 + 0.01 MB", chain_data(5, 0.01), 1)]
        return compared, [Case("chain-3", chain_data(3), 1), Case("chain-6", chain_data(6), 1)], \
            [Case("fan-2", fan_data(2), 1), Case("fan-4", fan_data(4), 1)], chain_data(10)
    heavy = max(1, rounds // 3)
    compared = [
        Case("chain-50", chain_data(50), rounds), Case("chain-500", chain_data(500), rounds),
        Case("chain-2000", chain_data(2000), heavy),
        Case("fan-20", fan_data(20), rounds), Case("fan-200", fan_data(200), rounds),
        Case("fan-1000", fan_data(1000), heavy),
        Case("chain-50 + 1 MB", chain_data(50, 1), rounds), Case("chain-50 + 10 MB", chain_data(50, 10), heavy),
    ]
    chains = [Case(f"chain-{n}", chain_data(n), rounds if n <= 500 else heavy) for n in lengths]
    fans = [Case(f"fan-{n}", fan_data(n), rounds if n <= 200 else heavy) for n in (20, 200, 1000)]
    return compared, chains, fans, chain_data(2000)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="paired rounds per case (default 7; big cases a third)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round: checks that the script runs")
    parser.add_argument("--upstream-site", default=os.environ.get("AGENTLOOM_UPSTREAM_SITE"),
                        help="site-packages holding agentloom 0.4.0 (default: $AGENTLOOM_UPSTREAM_SITE)")
    parser.add_argument("--lengths", default="50,500,2000,5000", help="chain lengths of the scaling table")
    parser.add_argument("--no-upstream", action="store_true", help="ours only")
    parser.add_argument("--only", default="", help="only these compared cases (labels, comma-separated); no scaling")
    parser.add_argument("--no-others", action="store_true",
                        help="leave out the rows of bench/replay.py and bench/tables.py")
    parser.add_argument("--install-upstream", action="store_true",
                        help=f"first pip install {UPSTREAM_REQUIREMENT} into bench/.upstream (no deps, no script)")
    args = parser.parse_args(argv)
    if args.install_upstream:
        install_upstream()
    with_upstream = not args.no_upstream and find_upstream(args.upstream_site)
    lengths = [int(length) for length in args.lengths.split(",")]
    compared, chains, fans, memory_case = cases(args.quick, args.rounds, lengths)
    print(f"python {sys.version.split()[0]}; upstream agentloom: "
          f"{'0.4.0, mock provider, rate limiter off' if with_upstream else 'not found, ours only'}; "
          f"{args.rounds} paired rounds (big cases fewer)\n", flush=True)
    only = {label.strip() for label in args.only.split(",") if label.strip()}
    print(comparison_header(with_upstream), flush=True)
    for case in compared:
        if not only or case.label in only:
            print(comparison_line(compare(case, with_upstream), with_upstream), flush=True)
    if only:
        return
    if not args.quick and not args.no_others:  # their own scripts have their own quick checks
        print(f"\n{'other benches':<22}{'':>6}{'ours':>14}{'':>12}{'baseline':>14}{'':>12}{'ratio':>15}", flush=True)
        for row in other_rows(args.rounds):
            print(other_line(row), flush=True)
    print_scaling("Scaling with the chain's length", chains)
    print_scaling("Scaling with the fan-out's width", fans)
    print(f"\npeak memory of one run of ours, chain of {len(memory_case['steps'])}: "
          f"{peak_memory(memory_case):.1f} MB (tracemalloc)")


if __name__ == "__main__":
    main()
