"""A drift check's ``judge`` comparison reads the replayed output's verdict from a committed verdict snapshot: the
judge is asked of the live output only. The snapshot flags write it (the replayed side is a plain replay), a stale
one is ignored with a note in the line, and the live output's verdict goes into the scratch folder, adopted with
the live recording (see pytest_agentloom/testing/_live/drift_verdicts.py)."""

from __future__ import annotations

import json

import pytest
import yaml

# Imported before pytester's in-process runs (see tests/replay/conftest.py)
import pytest_agentloom.engine._entry.run_workflow
import pytest_agentloom.providers._scripted  # noqa: F401
from pytest_agentloom.testing._live.adopt import adopt
from tests.replay.drift_project import assert_no_secret_in, committed, drift, plan_bug, record
from tests.replay.helpers import Project
from tests.replay.test_plugin_drift_by_model import mark, plan_verdicts

pytestmark = pytest.mark.slow  # each records, then runs drift checks: a few seconds each

RUBRIC = "Names what is wrong, in one sentence."
KEPT = "__agentloom_snapshots__/test_triage/test_triage.drift-verdict.investigate.yaml"
SCRATCH = ".agentloom/drift/check"
REGRESSION = ("    output investigate: 'A printer fire.' -> 'Something is off.' (judge 0.90{kept} -> 0.68 < 0.7: "
              "fails, passed before; reason now: 'Vague: no fire named.'; before: 'Names the fire.')")


def judged(project: Project) -> list[str]:
    """The texts the judge was asked to grade, in order."""
    return [request.json["messages"][-1]["content"].rpartition("Text to grade:\n")[2]
            for request in project.server.requests if "Rubric:" in json.dumps(request.json)]


def check_with_verdicts(project: Project, *args: str, replayed: tuple[float, str] | None = (0.9, "Names the fire."),
                        folder: str = SCRATCH) -> pytest.RunResult:
    """A drift check where the live answer is 'Something is off.'; the judge answers ``replayed`` first (when
    it is to be asked), then the live output's verdict."""
    project.server.reset()
    plan_bug(project, answer="Something is off.")
    plan_verdicts(project, *([replayed] if replayed else []), (0.68, "Vague: no fire named."))
    return drift(project, *args, folder=folder)


def keep_verdict(project: Project) -> None:
    """Record the triage test with a judge method, then commit the replayed output's verdict."""
    record(project)
    mark(project, {"investigate": f"judge:{RUBRIC}"})
    check_with_verdicts(project, "--agentloom-create-snapshots", folder=".agentloom/drift/first").assert_outcomes(
        passed=1)


def test_a_committed_verdict_answers_for_the_replayed_output_so_the_judge_is_asked_once(project: Project) -> None:
    record(project)
    mark(project, {"investigate": f"judge:{RUBRIC}"})

    first = check_with_verdicts(project, "--agentloom-create-snapshots", folder=".agentloom/drift/first")

    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines(["agentloom: 1 snapshot created:", f"  {KEPT}"])  # by the replayed side
    first.stdout.fnmatch_lines([REGRESSION.format(kept=" (asked; snapshot written)")])
    assert judged(project) == ["A printer fire.", "Something is off."]
    kept = yaml.safe_load((project.path / KEPT).read_text())
    assert kept["format_version"] == 1  # the verdict snapshot format of agentloom.judge()
    assert {key: kept["verdict"][key] for key in ("model", "rubric", "judged", "score", "passed", "reason")} == {
        "model": "gpt-4o-mini", "rubric": RUBRIC, "judged": "A printer fire.", "score": 0.9, "passed": True,
        "reason": "Names the fire."}
    before = committed(project)

    second = check_with_verdicts(project, "--agentloom-report=scratch/drift.md", replayed=None)

    second.assert_outcomes(passed=1)
    second.stdout.fnmatch_lines(["  test_triage.py::test_triage: passed -> passed, * changes: regression (output "
                                 "investigate)", REGRESSION.format(kept=" (snapshot)")])
    assert judged(project) == ["Something is off."]  # the live output only: one call
    assert "judge 0.90 (snapshot) -> 0.68" in (project.path / "scratch/drift.md").read_text()
    assert committed(project) == before  # read, not written

    project.offline()
    plain = project.run("--agentloom-update-snapshots")  # a whole suite: its unused snapshots would be deleted
    plain.assert_outcomes(passed=1)
    assert committed(project) == before  # a plain run never reads a drift verdict, nor calls it unused


@pytest.mark.parametrize(("change", "changed"), [("rubric", "the rubric changed"),
                                                 ("judged", "the judged text changed")])
def test_a_stale_verdict_is_ignored_with_a_note_then_rewritten_by_update(project: Project, change: str,
                                                                         changed: str) -> None:
    keep_verdict(project)
    if change == "rubric":
        test = (project.path / "test_triage.py").read_text()
        (project.path / "test_triage.py").write_text(test.replace(RUBRIC, "Names the fire."))
    else:  # as a re-recording with another answer leaves it: the verdict was of another text
        text = (project.path / KEPT).read_text()
        stored = yaml.safe_load(text)["verdict"]["judged_sha256"]
        (project.path / KEPT).write_text(text.replace(stored, "0" * 64))
    before = committed(project)

    stale = check_with_verdicts(project)

    stale.stdout.fnmatch_lines([REGRESSION.format(kept=f" (asked; stale snapshot ignored: {changed}; "
                                                       "--agentloom-update-snapshots rewrites it)")])
    assert judged(project) == ["A printer fire.", "Something is off."]  # never used: asked again
    assert committed(project) == before

    refreshed = check_with_verdicts(project, "--agentloom-update-snapshots")

    refreshed.stdout.fnmatch_lines(["agentloom: 1 snapshot updated:", f"  {KEPT}"])
    refreshed.stdout.fnmatch_lines([REGRESSION.format(kept=" (asked; stale snapshot rewritten)")])
    check_with_verdicts(project, replayed=None).stdout.fnmatch_lines([REGRESSION.format(kept=" (snapshot)")])
    assert judged(project) == ["Something is off."]


def test_the_live_verdict_is_adopted_with_the_live_recording_and_answers_for_it_next_time(project: Project) -> None:
    keep_verdict(project)
    scratch = project.path / SCRATCH
    check_with_verdicts(project, replayed=None).assert_outcomes(passed=1)
    live_kept = scratch / "snapshots" / KEPT
    assert yaml.safe_load(live_kept.read_text())["verdict"]["judged"] == "Something is off."
    manifest = json.loads((scratch / "drift.json").read_text())
    assert [f"snapshots/{KEPT}", KEPT] in manifest["tests"]["test_triage.py::test_triage"]["files"]
    assert_no_secret_in(scratch)

    adopted = adopt(scratch, ["test_triage"])

    assert (KEPT, "changed") in adopted.files
    assert (project.path / KEPT).read_bytes() == live_kept.read_bytes()
    project.server.reset()
    plan_bug(project, answer="A printer fire.")  # live now answers what was recorded before
    plan_verdicts(project, (0.9, "Names the fire."))
    result = drift(project)
    result.stdout.fnmatch_lines(["    output investigate: judge 0.68 (snapshot) -> 0.90 >= 0.7: passes now, failed "
                                 "before (reason now: 'Names the fire.'; before: 'Vague: no fire named.')"])
    assert judged(project) == ["A printer fire."]  # the adopted output's verdict came with it
