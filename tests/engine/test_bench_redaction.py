"""``bench/redaction.py`` runs (tiny sizes). It prints a rate; nothing here looks at it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("extra", [[], ["--no-secret"]])
def test_the_redaction_bench_runs(extra: list[str]) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "redaction.py"), "--runs", "1", "--repeats", "1",
                           *extra], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "runs/s" in done.stdout
