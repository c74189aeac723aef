"""A cassette is "possibly stale" only when a workflow it ran changed in a way that can change its requests:
not for a comment, a reformatting or a new key order; yes for a prompt, a subworkflow or a data file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_agentloom.replay._provenance import MEANING_PREFIX, workflow_hash, workflow_meaning_hash
from tests.replay.helpers import FLOW, Project
from tests.servers.fake_llm import text

STALE = "agentloom: 1 cassette possibly stale (the workflow file changed since recording):"


def recorded(project: Project) -> None:
    project.live()
    project.server.plan("openai", text("bug"), text("We are on it."))
    project.run("--agentloom-record").assert_outcomes(passed=1)
    project.offline()


def replay(project: Project) -> str:
    result = project.run()
    result.assert_outcomes(passed=1)
    return str(result.stdout.str())


def test_comments_formatting_and_key_order_leave_the_cassette_fresh(project: Project) -> None:
    recorded(project)
    flow = project.path / "flow.yaml"
    edited = ("# the support flow, commented\n" + FLOW.replace("name: support", "name: support   # its name")
              .replace("  ticket: \"\"\n  api_token: \"\"\n", "  api_token: ''\n  ticket: ''\n")
              .replace("    type: llm_call\n    model: gpt-4o-mini\n", "    model: gpt-4o-mini\n    type: llm_call\n"))
    flow.write_text(edited)
    assert flow.read_bytes() != FLOW.encode()
    assert STALE not in replay(project)


def test_a_changed_prompt_makes_the_cassette_possibly_stale(project: Project) -> None:
    recorded(project)
    flow = project.path / "flow.yaml"
    flow.write_text(FLOW.replace("    output: answer\n", "    output: answer\n    description: edited\n"))
    assert STALE in replay(project)


def test_a_cassette_from_before_the_meaning_hash_stays_fresh_until_its_file_changes(project: Project) -> None:
    recorded(project)
    cassette = project.cassette()
    body = cassette.read_text()
    assert f"flow.yaml: {MEANING_PREFIX}" in body
    old = re.sub(r"flow\.yaml: parsed-sha256:\w+", f"flow.yaml: {workflow_hash(project.path / 'flow.yaml')}", body)
    cassette.write_text(old)  # what an earlier version wrote: the hash of the file's bytes
    assert STALE not in replay(project)  # upgrading marks nothing stale
    flow = project.path / "flow.yaml"
    flow.write_text(flow.read_text().rstrip("\n") + "\n# a comment\n")
    assert STALE in replay(project)  # an old hash knows only bytes: any edit flags it, as before


def write(path: Path, content: str) -> Path:
    path.write_text(content)
    return path


@pytest.mark.parametrize("change", ["subworkflow", "responses file"])
def test_files_the_workflow_loads_count_too(tmp_path: Path, change: str) -> None:
    write(tmp_path / "child.yaml", "name: child\nsteps:\n  - {id: a, type: llm_call, prompt: 'hi'}\n")
    write(tmp_path / "answers.yaml", "a: one\n")
    parent = write(tmp_path / "parent.yaml", "name: parent\nconfig: {responses_file: answers.yaml}\nsteps:\n"
                   "  - {id: sub, type: subworkflow, workflow: child.yaml}\n")
    before = workflow_meaning_hash(parent)
    write(tmp_path / "child.yaml", "# a comment\nname: child\nsteps:\n  - {type: llm_call, id: a, prompt: 'hi'}\n")
    write(tmp_path / "answers.yaml", "a: one\n")
    assert workflow_meaning_hash(parent) == before
    if change == "subworkflow":
        write(tmp_path / "child.yaml", "name: child\nsteps:\n  - {id: a, type: llm_call, prompt: 'hello'}\n")
    else:
        write(tmp_path / "answers.yaml", "a: two\n")
    assert workflow_meaning_hash(parent) != before


def test_a_secret_state_default_is_not_hashed(tmp_path: Path) -> None:
    flow = "name: f\nstate_schema:\n  token: {redact: true}\nstate:\n  token: VALUE\nsteps:\n" \
           "  - {id: a, type: llm_call, prompt: 'hi'}\n"
    one = workflow_meaning_hash(write(tmp_path / "one.yaml", flow.replace("VALUE", "s3cret-value-one")))
    two = workflow_meaning_hash(write(tmp_path / "two.yaml", flow.replace("VALUE", "s3cret-value-two")))
    assert one == two
