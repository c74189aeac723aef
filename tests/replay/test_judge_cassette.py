"""agentloom.judge() recorded against the fake OpenAI server and replayed offline: same verdict, stale verdicts
refused with the re-record command, malformed answers failing closed, no secret written anywhere."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.replay.helpers import CANARY_KEY, Project
from tests.servers.fake_llm import fake_vector

REPLY_FLOW = """\
name: reply
state: {ticket: ""}
steps:
  - {id: reply, type: llm_call, model: gpt-4o-mini, prompt: "Reply to: {state.ticket}", output: answer}
"""

JUDGE_TEST = textwrap.dedent("""\
    import json
    import os

    RUBRIC = os.environ.get("RUBRIC", "Apologises and promises a fix.")

    def test_judged(agentloom):
        result = agentloom.run("reply.yaml", state={"ticket": "Printer on fire"})
        verdict = agentloom.judge(result, RUBRIC, model="gpt-4o-mini", threshold=0.7)
        with open(os.environ["RESULT_FILE"], "a") as out:
            out.write(json.dumps([verdict.score, verdict.passed, verdict.reason, verdict.judged]) + "\\n")
    """)

ANSWER = "Sorry about that, a fix is on its way."
VERDICT = '{"score": 0.85, "reason": "It apologises and promises a fix."}'
NODE = "test_judged.py::test_judged"


def _setup(project: Project) -> Path:
    project.pytester.makefile(".yaml", reply=REPLY_FLOW)
    project.pytester.makepyfile(test_judged=JUDGE_TEST)
    results = project.path / "results.jsonl"
    project.monkeypatch.setenv("RESULT_FILE", str(results))
    return results


def _record(project: Project, *replies: str, outcome: str = "passed") -> None:
    project.server.start()
    project.live()
    project.server.plan("openai", *replies)
    project.run("test_judged.py", "--agentloom-record").assert_outcomes(**{outcome: 1})


def _verdict_file(project: Project) -> Path:
    return project.path / "__agentloom_snapshots__" / "test_judged" / "test_judged.verdict.yaml"


def test_a_recorded_verdict_replays_offline_with_the_same_score_and_reason(project: Project) -> None:
    results = _setup(project)
    _record(project, ANSWER, VERDICT)
    judge_request = project.server.requests[-1].json
    assert "Apologises and promises a fix." in json.dumps(judge_request) and ANSWER in json.dumps(judge_request)
    assert judge_request["response_format"]["type"] == "json_schema"  # a structured answer is asked for

    stored = yaml.safe_load(_verdict_file(project).read_text())["verdict"]
    assert stored["score"] == 0.85 and stored["passed"] is True and stored["model"] == "gpt-4o-mini"
    assert len(stored["rubric_sha256"]) == len(stored["judged_sha256"]) == 64
    assert stored["judged_from"] == "step 'reply' of the run of 'reply'"

    project.offline()
    project.run("test_judged.py").assert_outcomes(passed=1)
    recorded, replayed = (json.loads(line) for line in results.read_text().splitlines())
    assert recorded == replayed == [0.85, True, "It apologises and promises a fix.", ANSWER]
    written = project.files()  # the cassette, the verdict snapshot, run records: the API key is in none
    assert len(written) > 3 and not [path for path in written if CANARY_KEY.encode() in path.read_bytes()]


@pytest.mark.slow
def test_a_changed_rubric_makes_the_verdict_stale_and_names_the_re_record_command(project: Project) -> None:
    _setup(project)
    _record(project, ANSWER, VERDICT)
    before = _verdict_file(project).read_text()
    project.offline()
    project.monkeypatch.setenv("RUBRIC", "Offers a refund.")

    for flags in ((), ("--agentloom-update-snapshots",)):  # updating snapshots cannot re-judge: the cassette can't
        result = project.run("test_judged.py", *flags)
        result.assert_outcomes(failed=1)
        output = result.stdout.str()
        assert "VerdictStaleError: Verdict 'test_judged.verdict' is stale: the rubric changed" in output
        assert f"pytest {NODE} --agentloom-record" in output
        assert "rubric then: 'Apologises and promises a fix.'" in output
        assert "CassetteMismatch" not in output  # refused before the judge is asked
        assert _verdict_file(project).read_text() == before

    _record(project, ANSWER, '{"score": 0.9, "reason": "It offers a refund."}')
    assert "It offers a refund." in _verdict_file(project).read_text()
    project.offline()
    project.run("test_judged.py").assert_outcomes(passed=1)


@pytest.mark.slow
def test_replayed_verdicts_are_compared_written_by_the_snapshot_flags_and_checked(project: Project) -> None:
    _setup(project)
    _record(project, ANSWER, VERDICT)
    project.offline()
    path = _verdict_file(project)
    path.write_text(path.read_text().replace("score: 0.85", "score: 0.5"))
    result = project.run("test_judged.py")
    result.assert_outcomes(failed=1)
    assert "Verdict 'test_judged.verdict' does not match" in result.stdout.str()
    assert "score: 0.5 -> 0.85" in result.stdout.str()
    assert f"pytest --agentloom-update-snapshots {NODE}" in result.stdout.str()
    project.run("test_judged.py", "--agentloom-update-snapshots").assert_outcomes(passed=1)
    assert "score: 0.85" in path.read_text()

    path.unlink()
    result = project.run("test_judged.py")
    result.assert_outcomes(failed=1)
    assert "Verdict 'test_judged.verdict' has no snapshot" in result.stdout.str()
    project.run("test_judged.py", "--agentloom-create-snapshots").assert_outcomes(passed=1)

    # the judged output changed (here: in the cassette): stale, before the judge is asked
    cassette = project.cassette("test_judged.py/test_judged.yaml")
    recorded = cassette.read_text()
    cassette.write_text(recorded.replace("a fix is on its way", "a fix is coming"))
    result = project.run("test_judged.py")
    result.assert_outcomes(failed=1)
    assert "is stale: the judged text changed since it was recorded" in result.stdout.str()
    assert f"judged then: '{ANSWER}'" in result.stdout.str()

    # the judge's recorded answer has another shape: it fails closed, naming the judge call and the fix
    cassette.write_text(recorded.replace('{"score": 0.85,', '{"score": "high",'))
    result = project.run("test_judged.py")
    result.assert_outcomes(failed=1)
    assert "JudgeError: Judge 'test_judged.verdict' gave no usable verdict" in result.stdout.str()
    assert f"re-record it (pytest {NODE} --agentloom-record)" in result.stdout.str()


def test_a_malformed_judge_answer_while_recording_fails_closed_and_writes_nothing(project: Project) -> None:
    _setup(project)
    _record(project, ANSWER, "The answer looks fine to me.", outcome="failed")
    assert not project.cassette("test_judged.py/test_judged.yaml").exists()
    assert not _verdict_file(project).exists()


EMBED_TEST = textwrap.dedent("""\
    import json
    import os

    def test_close(agentloom):
        distance = agentloom.embedding_distance("the cat sat", "a dog", model="text-embedding-3-small")
        with open(os.environ["RESULT_FILE"], "a") as out:
            out.write(json.dumps(distance) + "\\n")
    """)


def test_an_embedding_distance_is_recorded_and_replayed_like_an_embed_step(project: Project) -> None:
    import math

    project.pytester.makepyfile(test_close=EMBED_TEST)
    results = project.path / "results.jsonl"
    project.monkeypatch.setenv("RESULT_FILE", str(results))
    project.live()
    project.run("test_close.py", "--agentloom-record").assert_outcomes(passed=1)
    assert [request.route for request in project.server.requests] == ["openai_embed"]
    assert "/v1/embeddings" in project.cassette("test_close.py/test_close.yaml").read_text()
    project.offline()
    project.run("test_close.py").assert_outcomes(passed=1)
    recorded, replayed = (json.loads(line) for line in results.read_text().splitlines())
    left, right = fake_vector("the cat sat"), fake_vector("a dog")
    cosine = sum(x * y for x, y in zip(left, right, strict=True)) / (
        math.sqrt(sum(x * x for x in left)) * math.sqrt(sum(y * y for y in right)))
    assert recorded == replayed and math.isclose(recorded, 1 - cosine)


SECRET_FLOW = """\
name: secret
state_schema:
  api_token: {redact: true}
state: {api_token: ""}
steps:
  - {id: reply, type: llm_call, model: gpt-4o-mini, prompt: "Say hello (auth {state.api_token})", output: answer}
"""

SECRET_TEST = textwrap.dedent("""\
    import os

    def test_secret(agentloom):
        token = os.environ["CANARY_SECRET"]
        result = agentloom.run("secret.yaml", state={"api_token": token})
        agentloom.judge(f"{result.state['answer']} (sent with {token})", f"Never shows {token}.", model="gpt-4o-mini")
        agentloom.assert_no_secrets(token, os.environ["OPENAI_API_KEY"])
    """)


def test_a_secret_in_the_judged_text_or_rubric_reaches_no_file(project: Project) -> None:
    from tests.replay.helpers import CANARY_SECRET

    project.pytester.makefile(".yaml", secret=SECRET_FLOW)
    project.pytester.makepyfile(test_secret=SECRET_TEST)
    project.live()
    project.server.plan("openai", "Hello.", '{"score": 0.8, "reason": "Polite."}')
    project.run("test_secret.py", "--agentloom-record").assert_outcomes(passed=1)
    verdict = project.path / "__agentloom_snapshots__" / "test_secret" / "test_secret.verdict.yaml"
    assert "<REDACTED" in verdict.read_text()
    leaks = [path for path in project.files() for secret in (CANARY_KEY, CANARY_SECRET)
             if secret.encode() in path.read_bytes()]
    assert not leaks


def test_live_repetitions_judge_live_and_neither_compare_nor_write_verdicts(project: Project) -> None:
    _setup(project)
    _record(project, ANSWER, VERDICT)
    before = _verdict_file(project).read_bytes()
    project.server.plan("openai", ANSWER, '{"score": 0.3, "reason": "Too curt."}',
                        ANSWER, '{"score": 0.95, "reason": "Kind and clear."}')  # another verdict than recorded
    result = project.run("test_judged.py", "--agentloom-live", "--agentloom-repeat=2",
                         "--agentloom-min-pass-rate=0.5")
    result.assert_outcomes(passed=1)
    assert len(project.server.requests) == 6  # the recording's 2 calls, then 2 live calls per repetition
    assert "1/2 passed" in result.stdout.str()
    assert _verdict_file(project).read_bytes() == before


def test_a_verdict_left_in_the_old_snapshot_folder_fails_with_the_move_and_is_kept(project: Project) -> None:
    _setup(project)
    _record(project, ANSWER, VERDICT)
    new = _verdict_file(project)
    old = project.path / "__snapshots__" / "test_judged" / new.name
    old.parent.mkdir(parents=True)
    new.rename(old)  # where an older version of the plugin kept it
    new.parent.rmdir()
    before = old.read_bytes()
    project.offline()
    replayed = project.run("test_judged.py", "--agentloom-update-snapshots")
    replayed.assert_outcomes(failed=1)
    replayed.stdout.fnmatch_lines(["*Snapshot 'test_judged.verdict' is in the old snapshot folder: "
                                   "__snapshots__/test_judged/test_judged.verdict.yaml",
                                   "*git mv __snapshots__/test_judged __agentloom_snapshots__/test_judged"])
    assert old.read_bytes() == before
    assert not new.exists()
