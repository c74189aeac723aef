"""``bench/hostile.py`` runs (tiny sizes, this tree only). It prints timings; nothing here looks at them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

ROOT = Path(__file__).resolve().parents[2]


def test_the_hostile_shapes_script_runs_at_tiny_sizes() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "hostile.py"), "--quick"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stderr
    for label in ("chain-50 whose first step fails", "chain-200 whose first step fails", "typical router condition"):
        assert label in done.stdout, done.stdout
