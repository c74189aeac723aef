"""What workflow coverage (and the review report) adds to the example suite's run time. Target: under 5%.

Runs ``python -m pytest examples -q -p no:randomly`` in a subprocess plain, with
``--agentloom-cov``, and with ``--agentloom-cov --agentloom-report=<tmp>.html``,
taking turns, several times each, and prints the medians of wall and CPU time
(user + system of the pytest process, the steadier number on a shared machine)
and each one's ratio to the plain run of the same session.
Run from the repository root: ``python bench/coverage_overhead.py [repeats]``.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def suite(*extra: str) -> tuple[float, float]:
    """Wall and CPU time of one run of the example suite with ``extra`` options."""
    command = [sys.executable, "-m", "pytest", "examples", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
               *extra]
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"the example suite failed ({' '.join(extra) or 'plain'}):\n{done.stdout}\n{done.stderr}")
    return elapsed, _children_cpu() - cpu_before


def main(repeats: int = 5) -> None:
    with tempfile.TemporaryDirectory(prefix="agentloom-cov-bench-") as folder:
        report = str(Path(folder) / "report.html")
        variants = {"plain": (), "--agentloom-cov": ("--agentloom-cov",),
                    "cov + HTML report": ("--agentloom-cov", f"--agentloom-report={report}")}
        suite()  # warm the caches
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for _ in range(repeats):
            for name, extra in variants.items():
                times[name].append(suite(*extra))
    print(f"example suite (pytest examples), {repeats} runs each, median:")
    for label, index in (("wall time", 0), ("CPU time (user + system)", 1)):
        base = statistics.median(run[index] for run in times["plain"])
        print(f" {label}:")
        for name in variants:
            value = statistics.median(run[index] for run in times[name])
            print(f"  {name:<20}: {value:7.2f} s  (ratio {value / base:.3f})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
