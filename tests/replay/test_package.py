"""The replay package's surface: sorted exports, and cheap to import."""

from __future__ import annotations

import pytest_agentloom.replay as replay


def test_all_is_sorted_and_exported() -> None:
    assert replay.__all__ == sorted(replay.__all__)
    for name in replay.__all__:
        assert getattr(replay, name) is not None


def test_importing_replay_loads_no_heavy_module() -> None:
    import subprocess
    import sys

    code = ("import sys, pytest_agentloom.replay; "
            "print(sorted(m for m in ('vcr', 'deepdiff', 'openai', 'anthropic') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
