"""The CI recipe of docs/ci-and-shards.md runs: each shard's ``pytest`` command (under ``-n 2``), then the
combine job's ``agentloom`` command, read from the page's workflow file itself."""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_agentloom.cli import main

importlib.import_module("xdist")
importlib.import_module("pytest_shard")

pytestmark = pytest.mark.xdist

PAGE = Path(__file__).resolve().parents[2] / "docs" / "ci-and-shards.md"
TESTS = """
import pytest

@pytest.mark.parametrize("ticket", ["crash", "how do I log in?", "printer on fire", "refund"])
def test_triage(agentloom, ticket):
    category = "bug" if ticket in ("crash", "printer on fire") else "question"
    provider = agentloom.scripted({"classify": category, "reply": "Hi"}, allow_unused=True)
    result = agentloom.run("flow.yaml", state={"ticket": ticket}, provider=provider)
    agentloom.assert_snapshot(result)
"""


def recipe() -> dict[str, Any]:
    block = re.search(r"^```yml\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
    assert block is not None, "the CI recipe's workflow block"
    document: dict[str, Any] = yaml.safe_load(block[1])
    return document


def commands(job: dict[str, Any], program: str, **matrix: Any) -> list[list[str]]:
    """The job's ``run:`` lines that call ``program``, with the matrix values put in."""
    found = []
    for step in job["steps"]:
        line = step.get("run", "")
        for key, value in matrix.items():
            line = line.replace("${{ matrix." + key + " }}", str(value))
        words = shlex.split(line)
        if words[:1] == [program]:
            found.append(words[1:])
        elif words[:2] == ["pip", "install"]:
            assert set(words[2:]) <= {"pytest-agentloom", "pytest-xdist", "pytest-shard"}  # the dev extra's
    return found


def test_the_ci_recipe_runs_its_shards_then_combines_them(triage: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    triage.makepyfile(test_triage=TESTS)
    triage.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=4)
    jobs = recipe()["jobs"]
    shards = jobs["tests"]["strategy"]["matrix"]["shard"]
    assert shards == [0, 1]
    for shard in shards:
        [args] = commands(jobs["tests"], "pytest", shard=shard)
        result = triage.runpytest_subprocess("-p", "no:randomly", *args)
        result.assert_outcomes(passed=2)
        assert (triage.path / f"shard-{shard}.json").is_file()
    monkeypatch.chdir(triage.path)
    [args] = commands(jobs["combine"], "agentloom")
    capsys.readouterr()
    status = main(args)
    out = capsys.readouterr().out
    assert status == 0, out
    assert out.startswith("agentloom combine: 2 shard reports, 4 of 4 tests run\n")
    assert (triage.path / "agentloom-report.html").read_text().startswith("<!DOCTYPE html>")
