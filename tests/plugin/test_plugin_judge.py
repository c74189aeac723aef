"""agentloom.judge() with a scripted judge, through pytester: what is judged, the verdict, failures and errors."""

from __future__ import annotations

import textwrap

import pytest

FLOW = """\
name: reply
state: {ticket: ""}
steps:
  - {id: classify, type: llm_call, model: gpt-4o-mini, prompt: "Classify: {state.ticket}", output: category}
  - {id: reply, type: llm_call, depends_on: [classify], model: gpt-4o-mini, prompt: "Reply: {state.ticket}",
     output: answer}
"""

TESTS = textwrap.dedent('''\
    import asyncio
    import pytest
    from pytest_agentloom import JudgeError, UsageError, Verdict, embedding

    GOOD = '{"score": 0.9, "reason": "It apologises."}'

    def run(agentloom, *judge_replies):
        provider = agentloom.scripted(classify="bug", reply="Sorry, a fix is coming.", judge=list(judge_replies))
        return agentloom.run("flow.yaml", state={"ticket": "Printer on fire"}, provider=provider)

    def test_final_output(agentloom):
        result = run(agentloom, GOOD)
        verdict = agentloom.judge(result, "Apologises.", model="gpt-4o-mini", threshold=0.7)
        assert verdict == Verdict(score=0.9, passed=True, reason="It apologises.", threshold=0.7, model="gpt-4o-mini",
                                  rubric="Apologises.", judged="Sorry, a fix is coming.",
                                  judged_from="step 'reply' of the run of 'reply'")
        sent = result.steps  # the judge's run is not one of the test's results
        assert [r.workflow for r in agentloom.results] == ["reply"]

    def test_a_step_and_a_text(agentloom):
        result = run(agentloom, GOOD, GOOD)
        assert agentloom.judge(result, "Is a category.", model="m", step="classify").judged == "bug"
        assert agentloom.judge("plain text", "Is text.", model="m").judged_from == "the text passed"

    def test_below_threshold(agentloom):
        result = run(agentloom, '{"score": 0.4, "reason": "It blames the user."}')
        agentloom.judge(result, "Apologises and promises a fix without blaming the user. " * 5, model="gpt-4o-mini",
                        threshold=0.7)

    def test_check_false_returns_the_failing_verdict(agentloom):
        result = run(agentloom, '{"score": 0.4, "reason": "No."}')
        verdict = agentloom.judge(result, "Apologises.", model="m", threshold=0.7, check=False)
        assert (verdict.passed, verdict.score) == (False, 0.4)

    def test_malformed(agentloom):
        result = run(agentloom, '{"score": 7, "reason": "way above the scale"}')
        agentloom.judge(result, "Apologises.", model="gpt-4o-mini")

    def test_no_reply_for_the_judge(agentloom):
        result = agentloom.run("flow.yaml", provider=agentloom.scripted(classify="bug", reply="ok"))
        with pytest.raises(JudgeError) as caught:
            agentloom.judge(result, "Apologises.", model="m")
        assert caught.value.code == "judge_failed" and "step 'judge'" in str(caught.value)

    def test_async_twin(agentloom):
        result = run(agentloom, GOOD)
        verdict = asyncio.run(agentloom.ajudge(result, "Apologises.", model="m"))
        assert verdict.score == 0.9

    def test_embeddings(agentloom):
        provider = agentloom.scripted(embedding_check=[embedding([[1.0, 0.0], [1.0, 0.01]]),
                                                       embedding([[1.0, 0.0], [0.0, 1.0]])])
        assert agentloom.assert_embedding_close("cat", "cats", model="e", provider=provider) < 0.01
        agentloom.assert_embedding_close("cat", "tax law", model="e", provider=provider, max_distance=0.2)

    def test_unused_judge_reply(agentloom):
        run(agentloom, GOOD)

    @pytest.mark.parametrize("kwargs, words", [
        ({"rubric": ""}, "needs a rubric"),
        ({"model": ""}, "needs model="),
        ({"threshold": 1.5}, "threshold=1.5"),
        ({"step": "replly"}, "did you mean 'reply'"),
    ])
    def test_usage_errors(agentloom, kwargs, words):
        result = run(agentloom, GOOD)
        arguments = {"rubric": "Apologises.", "model": "m", **kwargs}
        with pytest.raises(UsageError, match=words):
            agentloom.judge(result, arguments.pop("rubric"), **arguments)
        agentloom.judge(result, "Apologises.", model="m")  # the scripted judge reply is used
    ''')


def test_a_scripted_judge_grades_the_final_output_a_step_or_a_text_and_fails_readably(
        pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", flow=FLOW)
    pytester.makepyfile(test_judge=TESTS)
    judged = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    judged.assert_outcomes(passed=9, failed=4)
    failed = {line.split("::")[1].split(" ")[0] for line in judged.outlines if line.startswith("FAILED")}
    assert failed == {"test_below_threshold", "test_malformed", "test_unused_judge_reply", "test_embeddings"}
    output = judged.stdout.str()

    # a verdict below the threshold: score, threshold, reason, the rubric shortened, what was judged
    assert "AssertionError: Judge 'test_below_threshold.verdict' scored 0.4, below the threshold 0.7." in output
    assert "reason: It blames the user." in output
    assert "rubric: Apologises and promises a fix without blaming the user. Apologises" in output
    assert "Apologi…" in output
    assert "judged: step 'reply' of the run of 'reply': 'Sorry, a fix is coming.'" in output

    # a malformed answer fails closed, naming the judge call and the fix, with no traceback into the plugin
    assert "JudgeError: Judge 'test_malformed.verdict' gave no usable verdict" in output
    assert "$.score: 7 is more than the maximum 1" in output
    assert "script the judge with agentloom.scripted(judge='{\"score\": 0.9" in output
    assert "testing/_judge/judge.py" not in output and "testing/_harness.py" not in output

    # embeddings too far apart
    assert "AssertionError: Embeddings are 1.000 apart (cosine distance), more than max_distance 0.2." in output
    assert "text: the text passed: 'cat'" in output and "reference: 'tax law'" in output

    # a judge reply that no call used fails the test like any scripted reply
    assert "step 'judge': 1 of 1 scripted reply never used" in output


SNAPSHOT_TEST = textwrap.dedent('''\
    import os

    def test_kept(agentloom):
        provider = agentloom.scripted(judge='{"score": 0.9, "reason": "Fine."}')
        agentloom.judge(os.environ["JUDGED"], "Is polite.", model="m", snapshot=True, name="polite",
                        provider=provider)
    ''')


def test_a_scripted_verdict_can_be_kept_and_refreshed_with_update_snapshots(pytester: pytest.Pytester,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_kept=SNAPSHOT_TEST)
    monkeypatch.setenv("JUDGED", "Thank you.")
    run = lambda *args: pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)  # noqa: E731
    run().assert_outcomes(failed=1)
    run("--agentloom-create-snapshots").assert_outcomes(passed=1)
    path = pytester.path / "__agentloom_snapshots__" / "test_kept" / "test_kept.verdict.polite.yaml"
    assert "judged: Thank you." in path.read_text()
    run().assert_outcomes(passed=1)

    monkeypatch.setenv("JUDGED", "Go away.")
    stale = run()
    stale.assert_outcomes(failed=1)
    assert "is stale: the judged text changed" in stale.stdout.str()
    assert "pytest --agentloom-update-snapshots test_kept.py::test_kept" in stale.stdout.str()
    run("--agentloom-update-snapshots").assert_outcomes(passed=1)
    assert "judged: Go away." in path.read_text()
