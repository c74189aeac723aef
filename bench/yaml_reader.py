"""The YAML reader against PyYAML's loaders, on a 1.6 MB workflow-like document, in the same process.

Run it from the repository root::

    python bench/yaml_reader.py

It prints the median seconds of each and the ratios to ``yaml.safe_load`` (the pure-Python loader the
package used before) and to ``yaml.load(..., CSafeLoader)`` (libyaml with no checks). A script, not a test.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_agentloom._core.yaml_io import load_yaml

TEXT = ("name: big\nstate:\n" + "".join(f"  k{i}: [{', '.join(['value'] * 10)}]\n" for i in range(20000))
        + "steps:\n  - {id: s, type: tool, tool_name: echo, output: o}\n")


def median_seconds(read: Callable[[str], object], repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        read(TEXT)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    ours = median_seconds(lambda text: load_yaml(text))
    pure = median_seconds(yaml.safe_load)
    c_only = median_seconds(lambda text: yaml.load(text, Loader=yaml.CSafeLoader))
    print(f"{len(TEXT):,} characters")
    print(f"_core.yaml_io.load_yaml     {ours:7.3f} s")
    print(f"yaml.safe_load (pure)      {pure:7.3f} s   ours / pure = {ours / pure:.2f}")
    print(f"yaml.load(CSafeLoader)     {c_only:7.3f} s   ours / C    = {ours / c_only:.2f}")


if __name__ == "__main__":
    main()
