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

``--replayed`` adds the same 1,000 rows over the same workflow with ``provider: openai`` and no
scripts, replayed from a cassette per row (recorded once, before the rounds, with
``--agentloom-record`` against ``tests/servers/fake_llm.py`` on 127.0.0.1, which is then
stopped, so a call that missed its cassette would fail the run): each step goes
through the openai SDK, httpx and vcrpy, as in a project's CI. It times serial and
``-n 2`` (with the trivial tests, for scale): rows that do that much work are where
``-n 2`` pays.

``--break-even`` adds suites of tests that each spin the CPU for a fixed time
(0.5 to 4 ms) beyond a trivial test, serial and ``-n 2``: where their ``-n 2``
ratio crosses 1 is the work per test from which ``-n 2`` pays on this machine,
printed beside what the table's rows cost beyond a trivial test and what they
may cost at most while the table stays within 2x of trivial tests (a trivial
test's own cost). When the first is above the second, no table can meet both
targets on this machine: a table cheap enough for the first is too cheap for
``-n 2`` to pay.

Run from the repository root::

    python bench/tables.py                # 3 rounds, 1,000 rows
    python bench/tables.py --rounds 5 --rows 1000 --yaml-only
    python bench/tables.py --quick        # 50 rows, one round: checks that the script runs
    python bench/tables.py --plugins both # with our two plugins alone, then with every installed one
    python bench/tables.py --break-even   # also where -n 2 starts to pay on this machine
    python bench/tables.py --replayed     # also the rows replayed from cassettes, serial and -n 2

``compare_rows(rounds)`` returns the same figures as rows for ``bench/compare.py``.
"""

from __future__ import annotations

import argparse
import itertools
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

SPIN_TEST = """\
import time

import pytest

@pytest.mark.parametrize("number", range({rows}))
def test_spin(number):
    end = time.perf_counter() + {seconds!r}
    while time.perf_counter() < end:
        pass
"""

#: ``--break-even``: the CPU time each test of a spinning suite spends beyond a trivial test, in milliseconds
SPIN_MS = (0.5, 1.0, 2.0, 4.0)


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


def replayed_rows(rows: int) -> str:
    """The table without scripts, for ``--replayed``: each row's calls are answered from its own cassette.

    The fake server answers ``echo: <the prompt>``, so the expected first output names the row's own ticket:
    a row replayed from another row's cassette fails.
    """
    lines = []
    for number in range(1, rows + 1):
        ticket = f"ticket number {number}: where is my invoice?"
        lines += [
            f"- id: row-{number:04d}",
            f"  state: {{ticket: \"{ticket}\"}}",
            "  expect:",
            "    status: success",
            "    sequence: [classify, draft, reply]",
            f"    outputs: {{classify: \"echo: Classify this ticket: {ticket}\"}}",
        ]
    return "\n".join(lines) + "\n"


def _write_replayed(folder: Path, rows: int) -> None:
    """The ``--replayed`` suite: the table's workflow on the openai provider, rows without scripts."""
    (folder / "flow.yaml").write_text(WORKFLOW.replace("config:\n", "config:\n  provider: openai\n"))
    (folder / "cases.yaml").write_text(replayed_rows(rows))
    (folder / "test_table.py").write_text(TABLE_TEST)


def make_suite(root: Path, rows: int, *, yaml_only: bool = False, spin_ms: tuple[float, ...] = (),
               replayed: bool = False) -> dict[str, Path]:
    """Write the suites (each its own folder, so each run collects one); return their folders.

    The ``replayed`` suite has no cassettes yet: :func:`record_cassettes` makes them.
    """
    suites = {"trivial": root / "trivial", "table": root / "table"}
    suites.update({_spin_suite(ms): root / _spin_suite(ms).replace(" ", "_") for ms in spin_ms})
    if replayed:
        suites["replayed"] = root / "replayed"
    for folder in suites.values():
        folder.mkdir()
        (folder / "pytest.ini").write_text("[pytest]\n")
    for ms in spin_ms:
        (suites[_spin_suite(ms)] / "test_spin.py").write_text(SPIN_TEST.format(rows=rows, seconds=ms / 1000))
    (suites["trivial"] / "test_trivial.py").write_text(TRIVIAL_TEST.format(rows=rows))
    (suites["table"] / "flow.yaml").write_text(WORKFLOW)
    (suites["table"] / "cases.yaml").write_text(table_rows(rows))
    (suites["table"] / "test_table.py").write_text(TABLE_TEST)
    if replayed:
        _write_replayed(suites["replayed"], rows)
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


def pytest_run(folder: Path, rows: int, *extra: str, plugins: str = "ours",
               env_extra: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU time (user + system, xdist workers included) of one pytest subprocess in ``folder``;
    fails loudly unless all ``rows`` tests passed. ``env_extra`` is added to its environment."""
    env = {**pytest_env(folder.parent / "pycache", plugins), **(env_extra or {})}
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


#: The API key the ``--replayed`` suite records and replays with (the fake server takes any)
REPLAY_KEY = "sk-bench-not-a-key"


def record_cassettes(folder: Path, rows: int, plugins: str = "ours") -> dict[str, str]:
    """Record the ``replayed`` suite's cassettes (``--agentloom-record``) against the fake LLM server, then stop
    it; return the environment its replays need: the same, now closed, base URL (vcrpy matches on host and
    port), so a call that missed its cassette fails the run instead of reaching anything."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # the fake server lives in the tests' package
    from tests.servers.fake_llm import FakeLLMServer

    with FakeLLMServer() as server:
        env = {"OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": REPLAY_KEY}
        pytest_run(folder, rows, "--agentloom-record", plugins=plugins, env_extra=env)
    return env


def _spin_suite(ms: float) -> str:
    return f"spin {ms:g} ms"


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
REPLAYED_RUNS = (
    ("replayed serial", "replayed", ()),
    ("replayed -n 2", "replayed", ("-n", "2")),
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
REPLAYED_RATIOS = (
    ("{rows}-row table replayed from cassettes vs {rows} trivial tests (serial)", "replayed serial",
     "trivial serial"),
    ("{rows}-row table replayed from cassettes: -n 2 vs serial", "replayed -n 2", "replayed serial"),
)


def spin_runs(spin_ms: tuple[float, ...]) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """The ``--break-even`` runs: each spinning suite serial and ``-n 2``."""
    return tuple((f"{_spin_suite(ms)} {how}", _spin_suite(ms), extra)
                 for ms in spin_ms for how, extra in (("serial", ()), ("-n 2", ("-n", "2"))))


def measure(rounds: int, rows: int = 1000, *, yaml_only: bool = False, plugins: str = "ours",
            spin_ms: tuple[float, ...] = (), replayed: bool = False,
            progress: Callable[[str], None] | None = None) -> dict[str, list[tuple[float, float]]]:
    """Every run's (wall, CPU) times, ``rounds`` of each, the order rotating from round to round."""
    runs = RUNS + (YAML_ONLY_RUNS if yaml_only else ()) + (REPLAYED_RUNS if replayed else ()) + spin_runs(spin_ms)
    times: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in runs}
    with tempfile.TemporaryDirectory(prefix="agentloom-tables-") as folder:
        suites = make_suite(Path(folder), rows, yaml_only=yaml_only, spin_ms=spin_ms, replayed=replayed)
        envs = {"replayed": record_cassettes(suites["replayed"], rows, plugins)} if replayed else {}
        for suite in suites:  # warm-up: bytecode caches, the file system cache
            pytest_run(suites[suite], rows, plugins=plugins, env_extra=envs.get(suite))
        for number in range(rounds):
            shift = number % len(runs)
            for label, suite, extra in runs[shift:] + runs[:shift]:
                times[label].append(pytest_run(suites[suite], rows, *extra, plugins=plugins,
                                               env_extra=envs.get(suite)))
                if progress is not None:
                    wall, cpu = times[label][-1]
                    progress(f"round {number + 1}/{rounds}: {label:20} {wall:7.2f} s wall {cpu:7.2f} s CPU")
    return times


def ratio_rows(times: dict[str, list[tuple[float, float]]], rows: int) -> list[dict[str, Any]]:
    """Each compared pair as a row: median wall times, the median of the per-round wall-time ratios
    (``ratio``), and the same for CPU time (``cpu_ratio``: steadier on a busy machine, blind to parallelism)."""
    pairs = (RATIOS + (YAML_ONLY_RATIOS if "yaml-only serial" in times else ())
             + (REPLAYED_RATIOS if "replayed serial" in times else ()))
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


def break_even(times: dict[str, list[tuple[float, float]]], rows: int, spin_ms: tuple[float, ...]) -> dict[str, Any]:
    """Where ``-n 2`` starts to pay, against what the table's rows cost (see the module's docstring).

    ``points`` are (the milliseconds a suite spins per test, what each of its tests costs serially beyond a
    trivial test in milliseconds, its median ``-n 2`` / serial wall ratio), the trivial tests first (0 ms).
    The cost beyond a trivial test is measured as the table's is, (suite - trivial tests) / rows, so the two
    compare; ``pays_from_ms`` is that cost where the ratio crosses 1 (linear between the points around it),
    ``None`` when it does not cross within the points (``pays_below`` then tells on which side).
    """
    def ratio(parallel: str, serial: str) -> float:
        return statistics.median(p[0] / s[0] for p, s in zip(times[parallel], times[serial], strict=True))

    def extra_ms(serial: str) -> float:
        return (statistics.median(run[0] for run in times[serial]) - trivial) / rows * 1000

    trivial = statistics.median(run[0] for run in times["trivial serial"])
    points = [(0.0, 0.0, ratio("trivial -n 2", "trivial serial"))]
    for ms in spin_ms:
        suite = _spin_suite(ms)
        points.append((ms, extra_ms(f"{suite} serial"), ratio(f"{suite} -n 2", f"{suite} serial")))
    pays_from = None
    for (_, low, low_ratio), (_, high, high_ratio) in itertools.pairwise(points):
        if low_ratio >= 1 > high_ratio:
            pays_from = low + (low_ratio - 1) * (high - low) / (low_ratio - high_ratio)
            break
    return {"points": points, "pays_from_ms": pays_from, "pays_below": points[0][2] < 1,
            "table_extra_ms": extra_ms("table serial"), "table_cap_ms": trivial / rows * 1000}


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
    parser.add_argument("--break-even", action="store_true",
                        help="also time tests spinning 0.5-4 ms serial and -n 2: where -n 2 starts to pay")
    parser.add_argument("--replayed", action="store_true",
                        help="also time the rows replayed from a cassette each (openai SDK), serial and -n 2")
    parser.add_argument("--plugins", choices=[*PLUGIN_SETS, "both"], default="ours",
                        help="ours: pytest-agentloom and pytest-xdist alone (default); installed: every plugin "
                             "this environment autoloads; both: one after the other")
    args = parser.parse_args(argv)
    rows, rounds = (50, 1) if args.quick else (args.rows, args.rounds)
    spin_ms = SPIN_MS if args.break_even else ()
    for plugins in PLUGIN_SETS if args.plugins == "both" else [args.plugins]:
        print(f"== plugins: {plugins}", flush=True)
        times = measure(rounds, rows, yaml_only=args.yaml_only, plugins=plugins, spin_ms=spin_ms,
                        replayed=args.replayed, progress=lambda line: print(line, flush=True))
        report(times, rounds, rows)
        if spin_ms:
            report_break_even(break_even(times, rows, spin_ms))


def report(times: dict[str, list[tuple[float, float]]], rounds: int, rows: int) -> None:
    """The medians of each run, then the ratios."""
    print(f"\nmedians of {rounds} round{'s' if rounds != 1 else ''} (seconds):")
    for label, values in times.items():
        print(f"  {label:20} wall {statistics.median(v[0] for v in values):7.2f}  "
              f"CPU {statistics.median(v[1] for v in values):7.2f}")
    print("\nratios (median of the per-round ratios; below 1 means the first is faster):")
    for row in ratio_rows(times, rows):
        print(f"  {row['case']:68} wall {row['ours_s']:6.2f} / {row['baseline_s']:6.2f} = {row['ratio']:.2f}"
              f"   CPU {row['ours_cpu_s']:6.2f} / {row['baseline_cpu_s']:6.2f} = {row['cpu_ratio']:.2f}")


def report_break_even(found: dict[str, Any]) -> None:
    """The ``-n 2`` ratio at each amount of work per test, where it crosses 1, and the table's rows beside it."""
    print("\n-n 2 vs serial by work per test (wall, median of the per-round ratios):")
    print("  spins   costs beyond a trivial test   -n 2 / serial")
    for ms, extra, ratio in found["points"]:
        print(f"  {ms:3g} ms   {extra:5.2f} ms{'':21}{ratio:.2f}")
    if found["pays_from_ms"] is not None:
        pays = f"for tests costing from about {found['pays_from_ms']:.2f} ms beyond a trivial test"
    else:
        pays = "at every point measured" if found["pays_below"] else "at none of the points measured"
    print(f"  -n 2 pays on this machine {pays};")
    print(f"  the table's rows cost {found['table_extra_ms']:.2f} ms beyond a trivial test (its fixed costs "
          f"included), and may cost at most {found['table_cap_ms']:.2f} ms for the table to stay within 2x of "
          "trivial tests.")


if __name__ == "__main__":
    main()
