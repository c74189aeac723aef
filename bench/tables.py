"""A 1,000-row scenario table against 1,000 trivial parametrised tests, in one run, paired rounds.

Issue 10's target for tables is a ratio, not a time: the table over a 3-step
workflow may cost at most twice what pytest itself takes for 1,000 trivial
parametrised tests, and ``-n 2`` must beat serial. Both sides are pytest
subprocesses on the same generated folder (a temporary directory), with the
plugin loaded from this checkout, so what pytest and xdist cost per test is in
both and the ratio shows what the table adds.

A round runs: the trivial tests serial and ``-n 2``, the table serial and ``-n 2``
(the order rotates each round), and ``--collect-only`` of each, which is timed
separately because collection is where the table is read (by each xdist worker:
the controller collects nothing). Each ratio is the median of the rounds' ratios:
on a machine others share, the absolute times are noise, the ratios much less so.

The subprocesses write bytecode (pytest's assertion-rewritten modules too) under a
``PYTHONPYCACHEPREFIX`` in the temporary directory, filled by a warm-up run: a
user's pytest reads cached bytecode, and with ``PYTHONDONTWRITEBYTECODE`` set
every process (each xdist worker too) would compile the whole package again,
which measures the compiler, not the table. Nothing is written into the checkout.

The table is the ``@pytest.mark.agentloom_scenarios`` form; ``--yaml-only`` adds
the same rows as a ``test_*.agentloom.yaml`` file (collected without Python).

Which pytest plugins load decides much of both ratios, so ``--plugins`` chooses:
``ours`` (the default) loads pytest-agentloom and pytest-xdist alone
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 ... -p pytest_agentloom.plugin -p xdist.plugin``:
what a project that installs the two has); ``installed`` loads every plugin this
environment has (ours has hypothesis, pytest-benchmark and anyio for its own tests,
which add about half a second to the start of every process and a little to every
fixture); ``both`` measures each. Each plugin's start-up is paid once serially and
three times under ``-n 2`` (controller and two workers), so the more plugins load,
the harder ``-n 2`` finds it to win and the easier the table's ratio to trivial
tests gets: a table's figures are only comparable within one plugin set.

Run from the repository root::

    python bench/tables.py                # 3 rounds, 1,000 rows
    python bench/tables.py --rounds 5 --rows 1000 --yaml-only
    python bench/tables.py --quick        # 50 rows, one round: checks that the script runs
    python bench/tables.py --plugins both # with our two plugins alone, then with every installed one

``compare_rows(rounds)`` returns the same figures as rows for ``bench/compare.py``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

WORKFLOW = """\
name: table-bench
description: Three model calls in a chain, the shape of a small triage flow.
config:
  model: gpt-4o-mini
state:
  ticket: ""
steps:
  - id: classify
    type: llm_call
    prompt: "Classify this ticket: {state.ticket}"
    output: category
  - id: draft
    type: llm_call
    depends_on: [classify]
    prompt: "Draft a reply to a {state.category} ticket: {state.ticket}"
    output: draft
  - id: reply
    type: llm_call
    depends_on: [draft]
    prompt: "Polish this draft: {state.draft}"
    output: reply
"""

TABLE_TEST = """\
import pytest

@pytest.mark.agentloom(workflow="flow.yaml")
@pytest.mark.agentloom_scenarios("cases.yaml")
def test_rows(agentloom, scenario):
    scenario.check(scenario.run(agentloom), agentloom)
"""

TRIVIAL_TEST = """\
import pytest

@pytest.mark.parametrize("number", range({rows}))
def test_trivial(number):
    assert number >= 0
"""


def table_rows(rows: int, *, with_workflow: bool = False) -> str:
    """The table as YAML: each row its own ticket, script and expectations (all met)."""
    lines = []
    for number in range(1, rows + 1):
        category = ("billing", "bug", "question")[number % 3]
        lines += [
            f"- id: row-{number:04d}",
            *(["  workflow: flow.yaml"] if with_workflow else []),
            f"  state: {{ticket: \"ticket number {number}: where is my invoice?\"}}",
            f"  script: {{classify: {category}, draft: \"draft {number}\", reply: \"reply {number}\"}}",
            "  expect:",
            "    status: success",
            "    sequence: [classify, draft, reply]",
            f"    outputs: {{classify: {category}}}",
            f"    state: {{reply: \"reply {number}\"}}",
        ]
    return "\n".join(lines) + "\n"


def make_suite(root: Path, rows: int, *, yaml_only: bool = False) -> dict[str, Path]:
    """Write the three suites (each its own folder, so each run collects one); return their folders."""
    suites = {"trivial": root / "trivial", "table": root / "table"}
    for folder in suites.values():
        folder.mkdir()
        (folder / "pytest.ini").write_text("[pytest]\n")
    (suites["trivial"] / "test_trivial.py").write_text(TRIVIAL_TEST.format(rows=rows))
    (suites["table"] / "flow.yaml").write_text(WORKFLOW)
    (suites["table"] / "cases.yaml").write_text(table_rows(rows))
    (suites["table"] / "test_table.py").write_text(TABLE_TEST)
    if yaml_only:
        suites["yaml-only"] = root / "yaml_only"
        suites["yaml-only"].mkdir()
        (suites["yaml-only"] / "pytest.ini").write_text("[pytest]\n")
        (suites["yaml-only"] / "flow.yaml").write_text(WORKFLOW)
        (suites["yaml-only"] / "test_cases.agentloom.yaml").write_text(table_rows(rows, with_workflow=True))
    return suites


#: ``--plugins``: the pytest arguments that load each plugin set (see the module's docstring)
PLUGIN_SETS = {"ours": ("-p", "pytest_agentloom.plugin", "-p", "xdist.plugin"), "installed": ()}


def pytest_env(cache: Path, plugins: str = "ours") -> dict[str, str]:
    """The subprocesses' environment: this checkout first on the path, bytecode cached under ``cache``,
    plugin autoloading off for the ``ours`` plugin set."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONDONTWRITEBYTECODE", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    if plugins == "ours":
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pytest_run(folder: Path, rows: int, *extra: str, plugins: str = "ours") -> tuple[float, float]:
    """Wall and CPU time (user + system, xdist workers included) of one pytest subprocess in ``folder``;
    fails loudly unless all ``rows`` tests passed."""
    env = pytest_env(folder.parent / "pycache", plugins)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PLUGIN_SETS[plugins], *extra]
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    cpu = _children_cpu() - cpu_before
    expected = f"{rows} tests collected" if "--collect-only" in extra else f"{rows} passed"
    if done.returncode != 0 or expected not in done.stdout:
        raise SystemExit(f"pytest {' '.join(extra)} in {folder.name} failed:\n{done.stdout[-3000:]}\n{done.stderr}")
    return elapsed, cpu


#: What one round times: a label, the suite's folder, and pytest's extra arguments.
RUNS = (
    ("trivial serial", "trivial", ()),
    ("table serial", "table", ()),
    ("table -n 2", "table", ("-n", "2")),
    ("trivial -n 2", "trivial", ("-n", "2")),
    ("trivial collect", "trivial", ("--collect-only",)),
    ("table collect", "table", ("--collect-only",)),
)
YAML_ONLY_RUNS = (
    ("yaml-only serial", "yaml-only", ()),
    ("yaml-only -n 2", "yaml-only", ("-n", "2")),
)

#: The ratios printed and returned: case label, the run measured, the run it is measured against.
RATIOS = (
    ("{rows}-row scenario table vs {rows} trivial tests (serial)", "table serial", "trivial serial"),
    ("{rows}-row scenario table: -n 2 vs serial", "table -n 2", "table serial"),
    ("{rows}-row scenario table vs {rows} trivial tests (--collect-only)", "table collect", "trivial collect"),
    ("{rows} trivial tests: -n 2 vs serial (xdist's own cost, for scale)", "trivial -n 2", "trivial serial"),
)
YAML_ONLY_RATIOS = (
    ("{rows}-row YAML-only table vs {rows} trivial tests (serial)", "yaml-only serial", "trivial serial"),
    ("{rows}-row YAML-only table: -n 2 vs serial", "yaml-only -n 2", "yaml-only serial"),
)


def measure(rounds: int, rows: int = 1000, *, yaml_only: bool = False, plugins: str = "ours",
            progress: Callable[[str], None] | None = None) -> dict[str, list[tuple[float, float]]]:
    """Every run's (wall, CPU) times, ``rounds`` of each, the order rotating from round to round."""
    runs = RUNS + (YAML_ONLY_RUNS if yaml_only else ())
    times: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in runs}
    with tempfile.TemporaryDirectory(prefix="agentloom-tables-") as folder:
        suites = make_suite(Path(folder), rows, yaml_only=yaml_only)
        for suite in suites:  # warm-up: bytecode caches, the file system cache
            pytest_run(suites[suite], rows, plugins=plugins)
        for number in range(rounds):
            shift = number % len(runs)
            for label, suite, extra in runs[shift:] + runs[:shift]:
                times[label].append(pytest_run(suites[suite], rows, *extra, plugins=plugins))
                if progress is not None:
                    wall, cpu = times[label][-1]
                    progress(f"round {number + 1}/{rounds}: {label:18} {wall:7.2f} s wall {cpu:7.2f} s CPU")
    return times


def ratio_rows(times: dict[str, list[tuple[float, float]]], rows: int) -> list[dict[str, Any]]:
    """Each compared pair as a row: median wall times, the median of the per-round wall-time ratios
    (``ratio``), and the same for CPU time (``cpu_ratio``: steadier on a busy machine, blind to parallelism)."""
    pairs = RATIOS + (YAML_ONLY_RATIOS if "yaml-only serial" in times else ())
    rows_out = []
    for label, ours, base in pairs:
        row: dict[str, Any] = {"case": label.format(rows=f"{rows:,}")}
        for index, suffix in ((0, ""), (1, "cpu_")):
            mine, theirs = [run[index] for run in times[ours]], [run[index] for run in times[base]]
            row[f"ours_{suffix}s"] = statistics.median(mine)
            row[f"baseline_{suffix}s"] = statistics.median(theirs)
            row[f"{suffix}ratio"] = statistics.median(o / b for o, b in zip(mine, theirs, strict=True))
        rows_out.append(row)
    return rows_out


def compare_rows(rounds: int) -> list[dict[str, Any]]:
    """The 1,000-row table's ratios with each plugin set, for ``bench/compare.py``: ``ratio`` is ours /
    baseline (below 1 is faster)."""
    rows = []
    for plugins in PLUGIN_SETS:
        for row in ratio_rows(measure(rounds, plugins=plugins), 1000):
            rows.append({**row, "case": f"{row['case']} [plugins: {plugins}]"})
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="paired rounds (default 3)")
    parser.add_argument("--rows", type=int, default=1000, help="rows of the table and trivial tests (default 1000)")
    parser.add_argument("--yaml-only", action="store_true", help="also time the table as a YAML-only test file")
    parser.add_argument("--quick", action="store_true", help="50 rows, one round: checks that the script runs")
    parser.add_argument("--plugins", choices=[*PLUGIN_SETS, "both"], default="ours",
                        help="ours: pytest-agentloom and pytest-xdist alone (default); installed: every plugin "
                             "this environment autoloads; both: one after the other")
    args = parser.parse_args(argv)
    rows, rounds = (50, 1) if args.quick else (args.rows, args.rounds)
    for plugins in PLUGIN_SETS if args.plugins == "both" else [args.plugins]:
        print(f"== plugins: {plugins}", flush=True)
        report(measure(rounds, rows, yaml_only=args.yaml_only, plugins=plugins,
                       progress=lambda line: print(line, flush=True)), rounds, rows)


def report(times: dict[str, list[tuple[float, float]]], rounds: int, rows: int) -> None:
    """The medians of each run, then the ratios."""
    print(f"\nmedians of {rounds} round{'s' if rounds != 1 else ''} (seconds):")
    for label, values in times.items():
        print(f"  {label:18} wall {statistics.median(v[0] for v in values):7.2f}  "
              f"CPU {statistics.median(v[1] for v in values):7.2f}")
    print("\nratios (median of the per-round ratios; below 1 means the first is faster):")
    for row in ratio_rows(times, rows):
        print(f"  {row['case']:68} wall {row['ours_s']:6.2f} / {row['baseline_s']:6.2f} = {row['ratio']:.2f}"
              f"   CPU {row['ours_cpu_s']:6.2f} / {row['baseline_cpu_s']:6.2f} = {row['cpu_ratio']:.2f}")


if __name__ == "__main__":
    main()
