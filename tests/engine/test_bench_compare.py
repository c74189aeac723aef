"""``bench/compare.py`` runs (tiny sizes, ours only). It prints timings; nothing here looks at them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

ROOT = Path(__file__).resolve().parents[2]


def test_the_comparison_script_runs_at_tiny_sizes() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "compare.py"), "--quick", "--no-upstream"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stderr
    assert "upstream agentloom: not found, ours only" in done.stdout
    for label in ("chain-5 ", "fan-3 ", "chain-5 + 0.01 MB", "Scaling with the chain's length",
                  "Scaling with the fan-out's width", "peak memory"):
        assert label in done.stdout, done.stdout
