"""``agentloom fork FILE --replay CASSETTE --at STEP``: the recorded run against the same run forked at a step."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentloom.cli import main
from tests.servers.fake_llm import FakeLLMServer, text

FLOW = """\
name: ask
config: {model: gpt-4o-mini, provider: openai}
state: {question: "Why is the sky blue?"}
steps:
  - {id: outline, type: llm_call, prompt: "Outline an answer to {state.question}", output: outline}
  - {id: answer, type: llm_call, prompt: "Answer from {state.outline}", output: answer, depends_on: [outline]}
"""


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ask.yaml").write_text(FLOW)
    server = FakeLLMServer().__enter__()
    server.plan("openai", text("Rayleigh scattering."), text("Short light scatters most, so blue fills the sky."))
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-provider-key-for-recording-0000")
    assert main(["run", "ask.yaml", "--record", "ask.cassette.yaml", "--no-record"]) == 0
    server.reset()
    yield server
    server.__exit__(None, None, None)


def test_a_scripted_fork_replays_the_prefix_offline_and_reports_the_change(
        recorded: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    recorded.stop()
    monkeypatch.delenv("OPENAI_API_KEY")
    (tmp_path / "script.yaml").write_text("answer: Because of dust.\n")
    capsys.readouterr()
    before = sorted(path.name for path in tmp_path.iterdir())

    code = main(["fork", "ask.yaml", "--replay", "ask.cassette.yaml", "--at", "answer", "--script", "script.yaml"])

    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[0] == ("agentloom fork: ask.yaml replayed from ask.cassette.yaml, forked at 'answer': regression "
                      "(output answer)")
    assert ("  output answer: 'Short light scatters most, so blue fills the sky.' -> 'Because of dust.' "
            "(similarity 0.00 < 0.6)") in out
    assert sorted(path.name for path in tmp_path.iterdir()) == before  # nothing written


def test_a_fork_onto_another_model_sends_only_the_forked_step_live(
        recorded: FakeLLMServer, capsys: pytest.CaptureFixture[str]) -> None:
    recorded.plan("openai", text("Short light scatters most: the sky looks blue."))

    code = main(["fork", "ask.yaml", "--replay", "ask.cassette.yaml", "--at", "answer", "--model", "gpt-4.1",
                 "--outputs", "similarity:0.5"])

    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert [request.json["model"] for request in recorded.requests_for("openai")] == ["gpt-4.1"]
    assert out[0].endswith("forked at 'answer': benign"), out
    assert out[1].startswith("  output answer: similar (")


def test_a_step_that_is_not_there_is_a_usage_error(recorded: FakeLLMServer,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fork", "ask.yaml", "--replay", "ask.cassette.yaml", "--at", "anwser"]) == 2
    assert "--at anwser: ask.yaml has no step 'anwser'; did you mean 'answer'?" in capsys.readouterr().err


# the recorded answer, then the fork's: (3, 4) and (4, 3) have cosine 24/25, so the distance is 0.04
_BY_MEANING = """\
answer: Because of dust.
embedding_check: {embedding: [[3.0, 4.0], [4.0, 3.0]]}
judge: ['{"score": 0.9, "reason": "Names the scattering."}', '{"score": 0.4, "reason": "Wrong cause."}']
"""


@pytest.mark.parametrize(("outputs", "verdict", "line"), [
    ("answer=embedding:0.1", "benign", "  output answer: close by embedding (distance 0.040 <= 0.1)"),
    ("answer=judge:Explains why the sky is blue.", "regression (output answer)",
     "  output answer: 'Short light scatters most, so blue fills the sky.' -> 'Because of dust.' (judge 0.90 -> "
     "0.40 < 0.7: fails, passed before; reason now: 'Wrong cause.'; before: 'Names the scattering.')"),
])
def test_a_scripted_fork_compares_by_embedding_or_judge_offline(
        recorded: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        outputs: str, verdict: str, line: str) -> None:
    recorded.stop()
    monkeypatch.delenv("OPENAI_API_KEY")
    (tmp_path / "script.yaml").write_text(_BY_MEANING)
    capsys.readouterr()
    before = sorted(path.name for path in tmp_path.iterdir())

    code = main(["fork", "ask.yaml", "--replay", "ask.cassette.yaml", "--at", "answer", "--script", "script.yaml",
                 "--outputs", outputs])

    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[:2] == [f"agentloom fork: ask.yaml replayed from ask.cassette.yaml, forked at 'answer': {verdict}",
                       line]  # then the tokens and cost
    assert recorded.requests == []  # the script answered the comparison too
    assert sorted(path.name for path in tmp_path.iterdir()) == before


def test_a_live_fork_asks_the_judge_for_both_outputs(recorded: FakeLLMServer,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    recorded.plan("openai", text("Because of dust."), text('{"score": 0.9, "reason": "Names the scattering."}'),
                  text('{"score": 0.4, "reason": "Wrong cause."}'))

    code = main(["fork", "ask.yaml", "--replay", "ask.cassette.yaml", "--at", "answer", "--model", "gpt-4.1",
                 "--outputs", "answer=judge(0.7, gpt-4o-mini):Explains why the sky is blue."])

    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[0].endswith("forked at 'answer': regression (output answer)"), out
    assert "(judge 0.90 -> 0.40 < 0.7: fails, passed before;" in out[1]
    asked = recorded.requests_for("openai")
    assert [request.json["model"] for request in asked] == ["gpt-4.1", "gpt-4o-mini", "gpt-4o-mini"]
    assert [request.json["messages"][-1]["content"].rpartition("\n")[2] for request in asked[1:]] == [
        "Short light scatters most, so blue fills the sky.", "Because of dust."]
