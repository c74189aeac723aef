"""The drift check's kept judge verdicts (``DriftVerdicts``), on files in a temporary folder: when a stored verdict
answers for the replayed output, when it is ignored and why, and which flags write it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pytest_agentloom.testing import Verdict
from pytest_agentloom.testing._live.drift_verdicts import DriftVerdicts, verdict_name
from pytest_agentloom.testing._settings.drift_outputs import OutputMethod
from pytest_agentloom.testing._snapshots.compare import SnapshotOptions, SnapshotSession
from pytest_agentloom.testing._snapshots.per_test import TestSnapshots

METHOD = OutputMethod("judge", 0.7, model="gpt-4o-mini", rubric="Names the fire.")
NODE = "test_triage.py::test_triage"


def verdicts(tmp_path: Path, *, create: bool = False, update: bool = False,
             replay_passed: bool = True) -> DriftVerdicts:
    replayed = TestSnapshots(NODE, tmp_path / "committed", "test_triage",
                             SnapshotSession(create=create, update=update), SnapshotOptions())
    live = TestSnapshots(NODE, tmp_path / "scratch", "test_triage", SnapshotSession(update=True), SnapshotOptions())
    return DriftVerdicts(NODE, replayed, live, replay_passed=replay_passed)


def verdict(text: str, score: float = 0.9, method: OutputMethod = METHOD) -> Verdict:
    return Verdict(score=score, passed=score >= method.threshold, reason="Names it.", threshold=method.threshold,
                   model=method.model, rubric=method.rubric, judged=text, judged_from="step investigate")


def kept(tmp_path: Path, folder: str = "committed", run: int = 1) -> Path:
    return tmp_path / folder / f"test_triage.{verdict_name('investigate', run)}.yaml"


def test_nothing_kept_is_asked_as_before_and_written_only_under_a_flag(tmp_path: Path) -> None:
    plain = verdicts(tmp_path)
    assert plain.stored("investigate", 1, METHOD, "A printer fire.") == (None, "")
    assert plain.keep("old", "investigate", 1, verdict("A printer fire."), "") == ""
    assert not kept(tmp_path).exists()

    assert verdicts(tmp_path, replay_passed=False, create=True).keep(
        "old", "investigate", 1, verdict("A printer fire."), "") == ""  # a failed replay keeps nothing
    assert not kept(tmp_path).exists()

    note = verdicts(tmp_path, create=True).keep("old", "investigate", 2, verdict("A printer fire."), "")
    assert note == "asked; snapshot written"
    assert kept(tmp_path, run=2).name == "test_triage.drift-verdict.investigate.run2.yaml"
    assert yaml.safe_load(kept(tmp_path, run=2).read_text())["verdict"]["judged"] == "A printer fire."


def test_a_matching_verdict_answers_by_todays_threshold(tmp_path: Path) -> None:
    verdicts(tmp_path, create=True).keep("old", "investigate", 1, verdict("A printer fire.", 0.8), "")
    stricter = OutputMethod("judge", 0.85, model=METHOD.model, rubric=METHOD.rubric)

    assert verdicts(tmp_path).stored("investigate", 1, METHOD, "A printer fire.") == (
        {"score": 0.8, "passed": True, "reason": "Names it.", "source": "snapshot"}, "")
    assert verdicts(tmp_path).stored("investigate", 1, stricter, "A printer fire.")[0]["passed"] is False


@pytest.mark.parametrize(("method", "text", "changed"), [
    (METHOD, "Another output.", "the judged text changed"),
    (OutputMethod("judge", 0.7, model="gpt-4.1", rubric=METHOD.rubric), "A printer fire.", "the model changed"),
    (OutputMethod("judge", 0.7, model="gpt-4.1", rubric="Polite."), "A printer fire.",
     "the rubric and the model changed"),
])
def test_a_stale_verdict_is_never_used_and_only_update_rewrites_it(tmp_path: Path, method: OutputMethod, text: str,
                                                                  changed: str) -> None:
    verdicts(tmp_path, create=True).keep("old", "investigate", 1, verdict("A printer fire."), "")
    before = kept(tmp_path).read_bytes()

    stored, note = verdicts(tmp_path, create=True).stored("investigate", 1, method, text)

    assert stored is None
    assert note == f"asked; stale snapshot ignored: {changed}; --agentloom-update-snapshots rewrites it"
    assert verdicts(tmp_path, create=True).keep("old", "investigate", 1, verdict(text, method=method), note) == note
    assert kept(tmp_path).read_bytes() == before  # create writes a missing verdict only
    assert verdicts(tmp_path, update=True).keep("old", "investigate", 1, verdict(text, method=method),
                                                note) == "asked; stale snapshot rewritten"
    assert verdicts(tmp_path).stored("investigate", 1, method, text)[0] is not None


def test_an_unreadable_verdict_is_ignored_with_a_note(tmp_path: Path) -> None:
    kept(tmp_path).parent.mkdir(parents=True)
    kept(tmp_path).write_text("format_version: 7\n")

    assert verdicts(tmp_path).stored("investigate", 1, METHOD, "A printer fire.") == (
        None, "asked; unreadable snapshot ignored; --agentloom-update-snapshots rewrites it")


def test_the_live_verdict_is_always_written_into_the_scratch_folder(tmp_path: Path) -> None:
    live = verdicts(tmp_path)
    assert live.keep("new", "investigate", 1, verdict("Something is off.", 0.4), "") == ""
    stored = yaml.safe_load(kept(tmp_path, "scratch").read_text())["verdict"]
    assert (stored["judged"], stored["score"], stored["passed"]) == ("Something is off.", 0.4, False)
    assert not kept(tmp_path).exists()
