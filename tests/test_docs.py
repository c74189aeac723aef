"""Every YAML, JSON and Python block of the README and docs/ runs, so an example cannot drift.

- YAML: a workflow (a mapping with ``steps``) loads; a list of steps, one step, or a mapping of
  top-level keys (``config``, ``state``, ``state_schema``, ``agents``) loads inside a minimal
  workflow (steps it refers to are added as stubs); a scenario table (rows with ``expect``)
  loads as a table.
- JSON: parses.
- Python: runs, in a fresh folder holding ``docs/examples/``, the example triage workflow and the
  agent example's folder (``agent_triage/``, its ``triage_desk`` importable), as the current directory.
  A block that defines tests is run by pytest (pytester) in a copy of
  ``examples/support_triage`` (its conftest gives the tools), and every test in it must pass.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

# imported here, before pytester's inner runs, which forget the modules first imported inside them
import pytest_agentloom.engine._entry.run_workflow
import pytest_agentloom.testing._harness  # noqa: F401
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.testing._scenarios.table import load_table

#: these workflows (and upstream's, and the docs' one-step fragments) have gates whose decision no router
#: reads, on purpose; the warning itself is tested in tests/engine/format/test_unread_gates.py
pytestmark = pytest.mark.filterwarnings("ignore::pytest_agentloom.UnreadDecisionWarning")

ROOT = Path(__file__).resolve().parent.parent
# every Markdown page: the README and docs/ at any depth (a page in a subfolder is collected too)
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(?P<indent>[ ]*)```(?P<lang>[a-z]*)\n(?P<body>.*?)^(?P=indent)```", re.MULTILINE | re.DOTALL)
TOP_KEYS = {"name", "description", "version", "config", "state", "state_schema", "agents", "steps"}


def _blocks() -> list[Any]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match["lang"] not in ("yaml", "json", "python"):
                continue
            line = text.count("\n", 0, match.start()) + 1
            indent = len(match["indent"])
            body = "\n".join(row[indent:] for row in match["body"].splitlines())
            found.append(pytest.param(match["lang"], body, id=f"{page.relative_to(ROOT)}:{line}"))
    return found


def test_every_page_with_an_example_is_collected() -> None:
    """A new page's examples cannot be skipped: each page holding a fenced yaml, json or python block has
    block ids here, as many as a plain search of the page finds."""
    fence = re.compile(r"^[ ]*```(yaml|json|python)$", re.MULTILINE)
    pages = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    expected = {page.relative_to(ROOT).as_posix(): len(fence.findall(page.read_text(encoding="utf-8")))
                for page in pages}
    expected = {name: count for name, count in expected.items() if count}
    collected: dict[str, int] = {}
    for block in _blocks():
        page = str(block.id).rsplit(":", 1)[0]
        collected[page] = collected.get(page, 0) + 1
    assert collected == expected


def test_the_docs_index_links_every_page() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    pages = sorted(page.name for page in (ROOT / "docs").glob("*.md") if page.name != "index.md")
    assert [name for name in pages if f"]({name}" not in index] == []


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "docs" / "examples", tmp_path, dirs_exist_ok=True)
    shutil.copy(ROOT / "examples" / "support_triage" / "triage.yaml", tmp_path / "triage.yaml")
    # the agent example too (docs/fuzzing.md fuzzes it): its workflow, and its tools importable as triage_desk
    shutil.copytree(ROOT / "examples" / "agent_triage", tmp_path / "agent_triage",
                    ignore=shutil.ignore_patterns("test_*", "conftest.py", "__pycache__"))
    monkeypatch.syspath_prepend(str(tmp_path / "agent_triage"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTLOOM_RUNS_DIR", str(tmp_path / "runs"))
    return tmp_path


@pytest.mark.parametrize(("lang", "body"), _blocks())
def test_docs_block_runs(lang: str, body: str, folder: Path, request: pytest.FixtureRequest) -> None:
    if lang == "json":
        json.loads(body)
    elif lang == "python" and re.search(r"^def test_", body, re.MULTILINE):
        _run_as_tests(body, request.getfixturevalue("pytester"))
    elif lang == "python":
        exec(compile(body, "<docs block>", "exec"), {"__name__": "docs_block"})
    else:
        _check_yaml(body, folder)


def _run_as_tests(body: str, pytester: pytest.Pytester) -> None:
    shutil.copytree(ROOT / "examples" / "support_triage", pytester.path, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("test_*", "__agentloom_snapshots__", "__pycache__"))
    recorded = ROOT / "cassettes" / "examples" / "support_triage"  # the examples' recordings, for a fork of one
    shutil.copytree(recorded, pytester.path / "cassettes" / "examples" / "support_triage", dirs_exist_ok=True)
    pytester.makepyfile(test_docs_block=body)
    outcome = pytester.runpytest_inprocess("-p", "no:randomly", "--agentloom-update-snapshots", "test_docs_block.py")
    counts = outcome.parseoutcomes()
    assert counts.get("passed", 0) >= 1 and not counts.get("failed") and not counts.get("errors"), counts


def _check_yaml(body: str, folder: Path) -> None:
    data = yaml.safe_load(body)
    if isinstance(data, list) and data and all(isinstance(row, dict) and ("expect" in row or "defaults" in row)
                                               for row in data):
        table = folder / "table.yaml"
        table.write_text(body, encoding="utf-8")
        scripted = dict.fromkeys(step for row in data for script in (
            row.get("script") or {}, (row.get("resume") or {}).get("script") or {},
            (row.get("defaults") or {}).get("script") or {}) for step in script)
        steps = [{"id": step, "type": "llm_call", "prompt": "stub"} for step in scripted]  # the rows' steps
        (folder / "flow.yaml").write_text(yaml.safe_dump(_minimal(steps)), encoding="utf-8")
        assert load_table(table, default_workflow="flow.yaml")
        return
    if isinstance(data, dict) and "steps" in data:
        workflow = {"name": "docs-example", **data}
    elif isinstance(data, list) and all(isinstance(step, dict) and "id" in step for step in data):
        workflow = _minimal(data)
    elif isinstance(data, dict) and "id" in data and "type" in data:
        workflow = _minimal([data])
    elif isinstance(data, dict) and set(data) <= TOP_KEYS:
        workflow = {**_minimal([]), **data}
    else:
        raise AssertionError(f"cannot tell what this YAML block is: {body[:80]!r}")
    source = folder / "docs_example.yaml"
    source.write_text(yaml.safe_dump(workflow, sort_keys=False), encoding="utf-8")
    parse_workflow(source.read_text(encoding="utf-8"), source=source)


def _minimal(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """A workflow around ``steps``, with a stub for every step id they refer to but do not define."""
    ids = {step["id"] for step in steps}
    named: list[str] = []
    for step in steps:
        named += step.get("depends_on", [])
        named += [condition.get("target") for condition in step.get("conditions", [])]
        named += [step["default"]] if step.get("default") else []
    stubs = [{"id": name, "type": "llm_call", "prompt": "stub"} for name in dict.fromkeys(named) if name not in ids]
    return {"name": "docs-example", "config": {"model": "gpt-4o-mini"}, "steps": [*steps, *stubs]
            or [{"id": "stub", "type": "llm_call", "prompt": "stub"}]}
