"""A redacted text value shorter than 4 characters is refused with a UsageError naming its key.

Such a value is redacted where its key is, but is too short to be searched for inside prompts and outputs
(replacing every "42" everywhere would ruin them), so a prompt that embeds it would carry it raw into the
cassette and the snapshot. The run refuses it before anything is sent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom import Scripted, run_workflow
from pytest_agentloom.engine._entry.resume_workflow import resume_workflow
from pytest_agentloom.errors import UsageError

#: these workflows (and upstream's, and the docs' one-step fragments) have gates whose decision no router
#: reads, on purpose; the warning itself is tested in tests/engine/format/test_unread_gates.py
pytestmark = pytest.mark.filterwarnings("ignore::pytest_agentloom.UnreadDecisionWarning")

FLOW = """\
name: short
state_schema: {pin: {redact: true}, creds: {redact: true}}
state: {pin: "", creds: {}}
steps:
  - {id: say, type: llm_call, model: gpt-4o-mini, prompt: "pin {state.pin}", output: said}
  - {id: gate, type: approval_gate, depends_on: [say], message: "Go?"}
"""


@pytest.fixture
def flow(tmp_path: Path) -> Path:
    path = tmp_path / "flow.yaml"
    path.write_text(FLOW)
    return path


def run(flow: Path, state: dict[str, Any], **options: Any) -> Any:
    return run_workflow(flow, provider=options.pop("provider", None) or Scripted({"say": ["ok"]}), state=state,
                        runs_dir=False, **options)


@pytest.mark.parametrize(("state", "path"), [({"pin": "Zq#"}, "pin"), ({"pin": "1"}, "pin"),
                                             ({"creds": {"user": "ann-1", "pw": "ab"}}, "creds.pw"),
                                             ({"creds": {"codes": ["long-enough", "x"]}}, "creds.codes[1]")])
def test_a_short_secret_is_refused_naming_its_key(flow: Path, state: dict[str, Any], path: str) -> None:
    script = Scripted({"say": ["ok"]})
    with pytest.raises(UsageError) as info:
        run(flow, state, provider=script)
    message = str(info.value)
    assert f"state key '{path}' is redacted" in message and "shorter than 4 characters" in message
    assert "How to fix" in message and "4 characters or more" in message
    assert script.requests == []  # refused before anything was sent


@pytest.mark.parametrize("state", [{"pin": ""}, {"pin": "Zq#7"}, {"creds": {"retries": 3, "on": True, "pw": None}}])
def test_empty_long_enough_and_non_text_values_run(flow: Path, state: dict[str, Any]) -> None:
    assert run(flow, state).status.value == "paused"


def test_a_short_secret_put_back_on_resume_is_refused(flow: Path, tmp_path: Path) -> None:
    paused = run(flow, {"pin": "Zq#7"}, checkpoint_dir=tmp_path / "cps")
    with pytest.raises(UsageError, match="state key 'pin'"):
        resume_workflow(paused.checkpoint_path, decision=True, state={"pin": "Zq"}, runs_dir=False)
    resumed = resume_workflow(paused.checkpoint_path, decision=True, state={"pin": "Zq#7"}, runs_dir=False)
    assert resumed.status.value == "success"


def test_under_pytest_the_test_fails_with_the_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", flow=FLOW)
    pytester.makepyfile(test_short="""
def test_short(agentloom):
    agentloom.run("flow.yaml", state={"pin": "Zq#"}, provider=agentloom.scripted(say="ok"))
""")
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*state key 'pin' is redacted*shorter than 4 characters*"])
