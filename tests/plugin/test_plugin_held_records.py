"""Run records in pytest: held in memory, written when someone may read them (docs/running-workflows.md)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_agentloom.engine._outcome.held_records import HeldRecords
from pytest_agentloom.engine._persist.records import record_name

SCRIPT = "{'classify': 'question', 'reply': 'hi'}"


def folders(pytester: pytest.Pytester) -> dict[str, list[str]]:
    """Each test folder the session's tests made under ``<base temp>/agentloom``, with the files in it."""
    base = pytester.path / "basetemp" / "agentloom"
    if not base.is_dir():
        return {}
    return {folder.name.rsplit("-", 1)[0]: sorted(path.relative_to(folder).as_posix()
                                                   for path in folder.rglob("*") if path.is_file())
            for folder in base.iterdir()}


def run(pytester: pytest.Pytester, source: str, **outcomes: int) -> dict[str, list[str]]:
    pytester.makepyfile(test_records=source)
    pytester.runpytest_inprocess("-p", "no:cacheprovider", "--basetemp", str(pytester.path / "basetemp")
                                 ).assert_outcomes(**outcomes)
    return folders(pytester)


def test_a_passing_test_that_never_looks_writes_no_folder_and_no_record(triage: pytest.Pytester) -> None:
    made = run(triage, f"""
        def test_quiet(agentloom):
            assert agentloom.run("flow.yaml", provider=agentloom.scripted({SCRIPT})).ok
    """, passed=1)
    assert made == {}


def test_a_failing_test_keeps_the_records_of_its_runs(triage: pytest.Pytester) -> None:
    made = run(triage, f"""
        def test_fails(agentloom):
            agentloom.run("flow.yaml", provider=agentloom.scripted({SCRIPT}))
            agentloom.run("flow.yaml", provider=agentloom.scripted({SCRIPT}))
            assert False, "the check after the runs"
    """, failed=1)
    (records,) = made.values()
    assert len(records) == 2 and all(name.startswith("runs/") and name.endswith(".json") for name in records)


def test_a_test_failing_in_teardown_keeps_them_too(triage: pytest.Pytester) -> None:
    made = run(triage, f"""
        import pytest

        @pytest.fixture
        def breaks_after():
            yield
            raise RuntimeError("teardown broke")

        def test_teardown_fails(breaks_after, agentloom):
            agentloom.run("flow.yaml", provider=agentloom.scripted({SCRIPT}))
    """, passed=1, errors=1)
    assert [len(records) for records in made.values()] == [1]


def test_reading_the_folder_or_a_record_path_writes_what_is_held_and_later_records_at_once(
    triage: pytest.Pytester,
) -> None:
    made = run(triage, f"""
        import json

        def test_record_path(agentloom):
            result = agentloom.run("flow.yaml", provider=agentloom.scripted({SCRIPT}))
            assert json.loads(result.record_path.read_text())["run_id"] == result.run_id

        def test_run_dir_first(agentloom):
            runs = agentloom.run_dir
            assert runs.parent.is_dir() and not runs.exists()
            result = agentloom.run("flow.yaml", provider=agentloom.scripted({SCRIPT}))
            assert [path.name for path in runs.iterdir()] == [result.run_id + ".json"]

        def test_tmp_path_after(agentloom):
            first = agentloom.run("flow.yaml", provider=agentloom.scripted({SCRIPT}))
            second = agentloom.run("flow.yaml", provider=agentloom.scripted({SCRIPT}))
            names = sorted(path.name for path in (agentloom.tmp_path / "runs").iterdir())
            assert names == sorted([first.run_id + ".json", second.run_id + ".json"])
    """, passed=3)
    assert sorted(len(records) for records in made.values()) == [1, 1, 2]


def test_a_test_that_takes_tmp_path_gets_its_records_written_at_once(triage: pytest.Pytester) -> None:
    run(triage, f"""
        def test_with_tmp_path(agentloom, tmp_path):
            result = agentloom.run("flow.yaml", provider=agentloom.scripted({SCRIPT}))
            assert (tmp_path / "runs" / (result.run_id + ".json")).is_file()
    """, passed=1)


def test_a_checkpoint_is_written_where_it_belongs_whether_or_not_records_are_held(triage: pytest.Pytester) -> None:
    made = run(triage, f"""
        def test_checkpointed(agentloom):
            result = agentloom.run("flow.yaml", provider=agentloom.scripted({SCRIPT}), checkpoint=True)
            assert result.checkpoint_path.is_file()
            assert result.checkpoint_path.parent == agentloom.run_dir / "checkpoints"
    """, passed=1)
    (files,) = made.values()
    assert len(files) == 2 and files[0].startswith("runs/checkpoints/")  # the record: read run_dir


# -- HeldRecords itself ---------------------------------------------------------------------------------------


def record(run_id: str, resumes: int = 0) -> tuple[str, Callable[[], dict[str, object]]]:
    """A record's name and the function that builds it (counting its calls in ``BUILT``)."""
    def build() -> dict[str, object]:
        BUILT.append(run_id)
        return {"run_id": run_id, "resumes": resumes, "status": "success"}

    return record_name(run_id, resumes), build


BUILT: list[str] = []


def test_held_records_are_built_and_written_on_release_and_each_later_one_at_once(tmp_path: Path) -> None:
    BUILT.clear()
    held = HeldRecords(tmp_path / "runs")
    held.add(*record("a"))
    held.add(*record("a", resumes=1))
    assert not (tmp_path / "runs").exists() and BUILT == []  # not even built while held
    held.release()
    assert json.loads((tmp_path / "runs" / "a.json").read_text())["run_id"] == "a"
    assert (tmp_path / "runs" / "a.resume-1.json").is_file()
    held.add(*record("b"))
    assert (tmp_path / "runs" / "b.json").is_file() and BUILT == ["a", "a", "b"]


def test_unheld_records_are_written_at_once_and_a_copy_shares_the_holder(tmp_path: Path) -> None:
    HeldRecords(tmp_path, held=False).add(*record("now"))
    assert (tmp_path / "now.json").is_file()
    held = HeldRecords(tmp_path / "later")
    assert copy.deepcopy(held) is held  # a copied result must not write a second, diverging set


def test_finding_a_checkpoint_by_run_id_writes_held_records_first(tmp_path: Path) -> None:
    from pytest_agentloom.engine._persist.checkpoints import find_checkpoint
    from pytest_agentloom.errors import CheckpointError

    held = HeldRecords(tmp_path / "runs")
    held.add(*record("r1"))
    with pytest.raises(CheckpointError):
        find_checkpoint("r1", runs_dir=held, env={})
    assert (tmp_path / "runs" / "r1.json").is_file()


def test_a_held_record_tells_the_run_as_it_ended_whatever_the_test_did_with_its_result(
    triage: pytest.Pytester,
) -> None:
    run(triage, f"""
        import json

        def test_changes_its_result(agentloom):
            result = agentloom.run("flow.yaml", provider=agentloom.scripted({SCRIPT}))
            ran = sorted(result.steps)
            result.status, result.steps = "failed", {{}}
            record = json.loads(result.record_path.read_text())
            assert record["status"] == "success" and sorted(record["step_status"]) == ran
    """, passed=1)
