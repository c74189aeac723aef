"""The drift comparisons that ask a model: ``embedding`` (the cosine distance of the two outputs' embeddings) and
``judge`` (a judge's verdict on each output by a rubric). Their calls go where the live run's model calls go (the
fake server, recorded into the live cassette in the scratch folder); in a fork they go to ``then``, offline."""

from __future__ import annotations

import json

import pytest

# Imported before pytester's in-process runs (see tests/replay/conftest.py): a model class first imported inside one
# run is dropped after it, and the next run's scripted tool call would be a ToolCall of another copy.
import pytest_agentloom.engine._entry.run_workflow
import pytest_agentloom.providers._scripted  # noqa: F401
from tests.replay.drift_project import assert_no_secret_in, committed, drift, plan_bug, record
from tests.replay.helpers import Project
from tests.servers.fake_llm import fail, recorded, text

pytestmark = pytest.mark.slow  # each records, then runs a drift check: a few seconds

_LIVE = ".agentloom/drift/check/cassettes/test_triage.py/test_triage.yaml"
_ASKED = ".agentloom/drift/check/comparisons/test_triage.py/test_triage.yaml"  # the comparison calls, recorded


def mark(project: Project, methods: dict[str, str]) -> None:
    """The triage test with ``drift_outputs=methods`` on its marker."""
    test = (project.path / "test_triage.py").read_text()
    (project.path / "test_triage.py").write_text(test.replace(
        "def test_triage(", f"import pytest\n\n\n@pytest.mark.agentloom(drift_outputs={methods!r})\n"
                            "def test_triage("))


def plan_vectors(project: Project, *vectors: list[float]) -> None:
    """The embeddings the fake server answers, one per text (as floats: the gateway asks for them)."""
    data = [{"object": "embedding", "index": index, "embedding": vector} for index, vector in enumerate(vectors)]
    project.server.plan("openai_embed", recorded(json.dumps({
        "object": "list", "data": data, "model": "text-embedding-3-small",
        "usage": {"prompt_tokens": 6, "total_tokens": 6}})))


def plan_verdicts(project: Project, *verdicts: tuple[float, str]) -> None:
    """The judge's answers (score, reason): the replayed output's first, then the live one's."""
    project.server.plan("openai", *(text(json.dumps({"score": score, "reason": reason})) for score, reason in verdicts))


# -- embedding ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("live_vector", "verdict", "line"), [
    # (3, 4) and (4, 3): cos = 24 / 25 = 0.96, distance 0.04 <= 0.1
    ([4.0, 3.0], "benign", "    output investigate: close by embedding (distance 0.040 <= 0.1)"),
    # (3, 4) and (4, -3): cos = 0, distance 1.0 > 0.1
    ([4.0, -3.0], "regression (output investigate)",
     "    output investigate: 'A printer fire.' -> 'Completely different answer text.' "
     "(embedding distance 1.000 > 0.1)"),
])
def test_an_output_compared_by_embedding_is_benign_or_a_regression_by_its_distance(
        project: Project, live_vector: list[float], verdict: str, line: str) -> None:
    record(project)
    mark(project, {"investigate": "embedding:0.1"})
    before = committed(project)
    plan_bug(project, answer="Completely different answer text.")  # lexically nothing shared: similarity 0.00
    plan_vectors(project, [3.0, 4.0], live_vector)

    result = drift(project, "--agentloom-report=scratch/drift.md")

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"  test_triage.py::test_triage: passed -> passed, * changes: {verdict}", line])
    asked = [request for request in project.server.requests if request.route == "openai_embed"]
    assert [request.json["input"] for request in asked] == [["A printer fire.", "Completely different answer text."]]
    assert asked[0].json["model"] == "text-embedding-3-small"
    assert "/v1/embeddings" in (project.path / _ASKED).read_text()  # recorded beside the live run's cassette,
    assert "/v1/embeddings" not in (project.path / _LIVE).read_text()  # not in it (adopting it must not take it)
    assert line.strip() in (project.path / "scratch/drift.md").read_text()
    assert committed(project) == before
    assert_no_secret_in(project.path / ".agentloom/drift/check")  # the comparison cassette is scrubbed too


def test_an_embedding_model_of_its_own_and_a_failed_embedding_call_which_is_a_regression(project: Project) -> None:
    record(project)
    mark(project, {"investigate": "embedding(text-embedding-3-large):0.5"})
    plan_bug(project, answer="The printer fire.")
    project.server.plan("openai_embed", fail(500, "embeddings are down"))

    result = drift(project, "--agentloom-drift-fail-on=regression")

    assert result.ret == 1, result.stdout.str()
    result.stdout.fnmatch_lines([
        "  test_triage.py::test_triage: passed -> passed, * changes: regression (output investigate)",
        "    output investigate: 'A printer fire.' -> 'The printer fire.' (embedding: not measured: Embedding check "
        "with model text-embedding-3-large got no vectors*",
    ])
    asked = [request for request in project.server.requests if request.route == "openai_embed"]
    assert asked and asked[0].json["model"] == "text-embedding-3-large"


# -- judge -------------------------------------------------------------------------------------------------------

RUBRIC = "Names what is wrong, in one sentence."


@pytest.mark.parametrize(("live", "verdict", "line"), [
    ((0.72, "Names the fire, tersely."), "benign",
     "    output investigate: judged alike (judge 0.90 -> 0.72, both pass at 0.7; reason now: 'Names the fire, "
     "tersely.')"),
    ((0.68, "Vague: no fire named."), "regression (output investigate)",
     "    output investigate: 'A printer fire.' -> 'Something is off.' (judge 0.90 -> 0.68 < 0.7: fails, passed "
     "before; reason now: 'Vague: no fire named.'; before: 'Names the fire.')"),
])
def test_an_output_compared_by_a_judge_is_a_regression_when_its_verdict_turns_to_fail(
        project: Project, live: tuple[float, str], verdict: str, line: str) -> None:
    record(project)
    mark(project, {"investigate": f"judge:{RUBRIC}"})
    plan_bug(project, answer="Something is off.")
    plan_verdicts(project, (0.9, "Names the fire."), live)

    result = drift(project, "--agentloom-report=scratch/drift.md")

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"  test_triage.py::test_triage: passed -> passed, * changes: {verdict}", line])
    judged = [request.json["messages"][-1]["content"] for request in project.server.requests
              if "Rubric:" in json.dumps(request.json)]
    assert judged == [f"Rubric:\n{RUBRIC}\n\nText to grade:\nA printer fire.",
                      f"Rubric:\n{RUBRIC}\n\nText to grade:\nSomething is off."]
    assert "Names what is wrong" in (project.path / _ASKED).read_text()  # the judge's calls, recorded
    report = (project.path / "scratch/drift.md").read_text()
    assert "0.90 -> " in report and "reason now:" in report  # the verdict's audit trail is in the report too


def test_a_judge_with_its_own_threshold_and_model_from_the_ini(project: Project) -> None:
    record(project)
    project.pytester.makeini("[pytest]\nagentloom_drift_outputs =\n    exact\n"
                             "    investigate=judge(0.95, gpt-4.1):Polite, and names the fire.\n")
    plan_bug(project, answer="Something is off.")
    plan_verdicts(project, (0.97, "Polite."), (0.93, "Polite, no fire."))

    result = drift(project)

    result.stdout.fnmatch_lines([
        "    output investigate: 'A printer fire.' -> 'Something is off.' (judge 0.97 -> 0.93 < 0.95: fails, passed "
        "before; *",
    ])
    models = {request.json["model"] for request in project.server.requests
              if "Rubric:" in json.dumps(request.json)}
    assert models == {"gpt-4.1"}


# -- settings ----------------------------------------------------------------------------------------------------


def test_bad_embedding_and_judge_methods_are_named_errors_with_the_fix(project: Project) -> None:
    record(project)
    typo = drift(project, "--agentloom-drift-outputs=investigate=embeding:0.2")
    assert typo.ret == 4
    typo.stderr.fnmatch_lines(["*--agentloom-drift-outputs (investigate=embeding:0.2): unknown output comparison "
                               "'embeding:0.2'*", "*did you mean 'embedding'?*"])
    far = drift(project, "--agentloom-drift-outputs=embedding:3")
    assert far.ret == 4
    far.stderr.fnmatch_lines(["*the embedding distance (the largest cosine distance that is benign) must be a number "
                              "from 0 to 2 (got '3')*"])
    no_rubric = drift(project, "--agentloom-drift-outputs=reply=judge")
    assert no_rubric.ret == 4
    no_rubric.stderr.fnmatch_lines(["*judge needs a rubric after its colon*"])
    mark(project, {"investigate": "judge(1.5):Polite."})
    marked = project.run()  # a plain replay checks the marker too
    marked.assert_outcomes(errors=1)
    marked.stdout.fnmatch_lines(["*drift_outputs*the judge threshold must be a number from 0 to 1 (got '1.5')*"])
    assert project.server.requests == []


# -- offline: a fork answers the comparison from its ``then`` provider -------------------------------------------

FORK_TEST = """\
import os

from test_triage import lookup  # the recorded run's tool, as its requests describe it

from pytest_agentloom import Scripted


def test_fork_by_meaning(agentloom):
    then = Scripted({"investigate": [{"tool_call": "lookup", "arguments": {"ticket": 7}},
                                     "Completely different answer text."],
                     "embedding_check": {"embedding": [[3.0, 4.0], [4.0, 3.0]]},
                     "judge": ['{"score": 0.9, "reason": "Names the fire."}', '{"score": 0.4, "reason": "Vague."}']})
    state = {"ticket": "Printer on fire", "api_token": os.environ["CANARY_SECRET"]}
    fork = agentloom.fork("triage.yaml", state, at="investigate", then=then, tools=[lookup],
                          outputs=OUTPUTS, cassette="cassettes/test_triage.py/test_triage.yaml")
    print("FORK", fork.verdict, fork.changes[0])
    assert fork.forked.steps["classify"].output == fork.recorded.steps["classify"].output
    assert fork.verdict == VERDICT
"""


@pytest.mark.parametrize(("outputs", "verdict", "change"), [
    ({"investigate": "embedding:0.1"}, "benign", "output investigate: close by embedding (distance 0.040 <= 0.1)"),
    ({"investigate": "judge:Names the fire."}, "regression",
     "output investigate: 'A printer fire.' -> 'Completely different answer text.' (judge 0.90 -> 0.40 < 0.7: "
     "fails, passed before; reason now: 'Vague.'; before: 'Names the fire.')"),
])
def test_a_fork_compares_by_embedding_or_judge_offline_with_scripted_answers(
        project: Project, outputs: dict[str, str], verdict: str, change: str) -> None:
    record(project)
    project.pytester.makepyfile(test_fork_by_meaning=FORK_TEST.replace("OUTPUTS", repr(outputs)).replace("VERDICT",
                                                                                              repr(verdict)))
    project.offline()  # no keys, no server: every answer is the cassette's or the script's

    result = project.run("test_fork_by_meaning.py", "-s")

    result.assert_outcomes(passed=1)
    assert f"FORK {verdict} {change}\n" in result.stdout.str()


def test_an_adopted_recording_with_its_embedding_call_replays_offline(project: Project) -> None:
    record(project)
    mark(project, {"investigate": "embedding:0.1"})
    plan_bug(project, answer="The printer fire.")
    plan_vectors(project, [3.0, 4.0], [4.0, 3.0])
    drift(project).assert_outcomes(passed=1)
    scratch = project.path / ".agentloom/drift/check"
    for name in ("cassettes/test_triage.py/test_triage.yaml", "__agentloom_snapshots__/test_triage/test_triage.yaml"):
        source = scratch / name if name.startswith("cassettes") else scratch / "snapshots" / name
        (project.path / name).write_bytes(source.read_bytes())  # what agentloom drift --adopt copies
    project.offline()

    replayed = project.run()  # the live cassette holds no embedding request, which a plain run would not use

    replayed.assert_outcomes(passed=1)
