"""What the fuzz tests share: the examples, a fast derandomized search, a seeded copy, the shrunk failure."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings

from pytest_agentloom.strategies import FuzzScript

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "examples" / "agent_triage"
TRIAGE = ROOT / "examples" / "support_triage" / "triage.yaml"
if str(AGENT) not in sys.path:
    sys.path.insert(0, str(AGENT))

from triage_desk import Desk  # noqa: E402

__all__ = ["AGENT", "FAST", "TRIAGE", "Desk", "create_issue", "seeded", "shrunk_failure", "total_replies"]

# no explain phase: it reruns the minimal example many times to point at lines, which these tests don't read
FAST = settings(max_examples=40, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow],
                phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])


def create_issue(title: str, reporter: str) -> dict:
    return {"id": "BUG-1", "title": title, "reporter": reporter}


def seeded(tmp_path: Path, source: Path, change) -> Path:
    """A copy of ``source`` (in ``tmp_path``, made if need be) with a bug seeded into its data by ``change``."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    data = yaml.safe_load(source.read_text())
    change(data)
    copy = tmp_path / source.name
    copy.write_text(yaml.safe_dump(data, sort_keys=False))
    return copy


def shrunk_failure(strategy, check) -> tuple[FuzzScript, str]:
    """The minimal script hypothesis finds for which ``check(script)`` raises, and the error it raised."""
    found: list[tuple[FuzzScript, str]] = []

    @FAST
    @given(script=strategy)
    def search(script):
        try:
            check(script)
        except AssertionError as exc:
            found.append((script, str(exc)))
            raise

    with pytest.raises(AssertionError):
        search()
    return found[-1]  # hypothesis replays the minimal example last


def total_replies(script: FuzzScript) -> int:
    """Replies listed, and ``then`` replies other than the step's right answer: what the printed script shows."""
    return sum(len(items) for items in script.replies.values()) + sum(
        item != script.right[step] for step, item in script.then.items())
