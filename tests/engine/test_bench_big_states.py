"""``bench/big_states.py`` runs (tiny sizes). It prints timings; nothing here looks at them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

ROOT = Path(__file__).resolve().parents[2]


def test_the_big_state_script_runs_at_tiny_sizes() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "big_states.py"), "--mb", "0.05", "--state-mb",
                           "0.1", "--repeats", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stderr
    for label in ("snapshot of a", "pass", "fail with its diff", "run_workflow(state=...)", "ratio"):
        assert label in done.stdout, done.stdout
