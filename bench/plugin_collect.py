"""How much the agentloom plugin adds to ``pytest --collect-only`` of 200 trivial tests.

Generates a folder of 20 test files x 10 trivial tests in a temporary directory,
then times ``python -m pytest --collect-only -q`` in a subprocess with the
plugin and with ``-p no:agentloom``, alternating the two, several times each.
Prints the medians and their ratio, in wall time and in CPU time (user + system of the
pytest process: on a busy machine the CPU time is the steadier of the two).
Run: ``python bench/plugin_collect.py [repeats]``.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILES, TESTS_PER_FILE = 20, 10


def make_suite(root: Path) -> None:
    (root / "pytest.ini").write_text("[pytest]\n")
    for number in range(FILES):
        tests = (f"def test_{number}_{index}():\n    assert {index} == {index}" for index in range(TESTS_PER_FILE))
        body = "\n\n".join(tests)
        (root / f"test_trivial_{number:02d}.py").write_text(body + "\n")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def collect(root: Path, *extra: str) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one ``pytest --collect-only`` in a subprocess."""
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *extra]
    cpu_before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(command, cwd=root, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    cpu = _children_cpu() - cpu_before
    if done.returncode != 0 or f"{FILES * TESTS_PER_FILE} tests collected" not in done.stdout:
        raise SystemExit(f"collection failed ({' '.join(extra) or 'plugin on'}):\n{done.stdout}\n{done.stderr}")
    return elapsed, cpu


def import_time(*modules: str) -> float:
    code = "import " + ", ".join(modules)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


def main(repeats: int = 7) -> None:
    with tempfile.TemporaryDirectory(prefix="agentloom-bench-") as folder:
        root = Path(folder)
        make_suite(root)
        collect(root)  # warm the file system cache
        with_plugin, without = [], []
        for _ in range(repeats):
            with_plugin.append(collect(root))
            without.append(collect(root, "-p", "no:agentloom"))
    bare = statistics.median(import_time("pytest") for _ in range(repeats))
    loaded = statistics.median(import_time("pytest", "pytest_agentloom.plugin") for _ in range(repeats))
    print(f"pytest --collect-only -q, {FILES * TESTS_PER_FILE} trivial tests, {repeats} runs each (median):")
    for label, index in (("wall time", 0), ("CPU time (user + system)", 1)):
        on = statistics.median(run[index] for run in with_plugin)
        off = statistics.median(run[index] for run in without)
        print(f" {label}:")
        print(f"  with the agentloom plugin : {on * 1000:8.1f} ms")
        print(f"  with -p no:agentloom      : {off * 1000:8.1f} ms")
        print(f"  overhead                  : {(on - off) * 1000:8.1f} ms  (ratio {on / off:.3f})")
    print(f"of which importing pytest_agentloom.plugin (exports are lazy: no engine models yet): "
          f"{(loaded - bare) * 1000:.1f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
