"""Scripted streams: ``reply(..., chunks=..., chunk_delay=..., break_after=...)`` through every streaming path.

A streamed ``llm_call`` hands each chunk to the run's stream listener as it arrives (time to first token is the
first chunk's virtual delay); a break after N chunks is a ``MidStreamError``, which the engine retries as a
call without a status. Steps that never stream (a tool loop, an agent, a conversation) get the text whole and
the listener sees it once, at the end. A script written as data (``--script``, scenario tables) takes the
same keys.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_agentloom import Scripted, VirtualClock, reply, run_workflow, tool_call
from pytest_agentloom._core.types import text_listener
from pytest_agentloom.cli import main
from pytest_agentloom.errors import ScriptDataError, UsageError

FLOW = """\
name: streams
config: {model: gpt-4o-mini, stream: true, retry: {max_retries: 2, backoff_seconds: 1}}
steps:
  - {id: draft, type: llm_call, prompt: "Draft a greeting", output: draft}
"""


def run(flow: str, provider: Scripted, tmp_path: Path, **options):
    """Run ``flow`` on a virtual clock; the chunks the stream listener saw, and the result."""
    path = tmp_path / "flow.yaml"
    path.write_text(textwrap.dedent(flow))
    seen: list[str] = []
    token = text_listener.set(seen.append)  # the listener the CLI's --stream sets: the engine's one way out
    try:
        result = run_workflow(path, provider=provider, clock=VirtualClock(), runs_dir=False, **options)
    finally:
        text_listener.reset(token)
    return seen, result


def test_a_streamed_step_hands_each_chunk_to_the_listener_and_times_the_first(tmp_path):
    answer = reply("Hello there, Ada!", chunks=["Hello", " there,", " Ada!"], chunk_delay=[0.75, 0.25, 0.5])
    seen, result = run(FLOW, Scripted({"draft": answer}), tmp_path)
    step = result.steps["draft"]
    assert seen == ["Hello", " there,", " Ada!"]
    assert (step.output, step.time_to_first_token, step.ended_at - step.started_at) == ("Hello there, Ada!", 0.75,
                                                                                        1.5)
    assert result.trace.events("provider_call")[0].data["time_to_first_token"] == 0.75


@pytest.mark.parametrize(("chunks", "expected"), [
    (5, ["Hello", " big ", "world"]),
    ("words", ["Hello ", "big ", "world"]),
])
def test_a_chunking_rule_cuts_the_text(tmp_path, chunks, expected):
    seen, result = run(FLOW, Scripted({"draft": reply("Hello big world", chunks=chunks)}), tmp_path)
    assert seen == expected and result.state["draft"] == "Hello big world"
    assert result.steps["draft"].time_to_first_token == 0.0  # no delay: the first chunk arrives at once


def test_a_break_mid_stream_is_retried_and_the_retry_streams_again(tmp_path):
    broken = reply("Hello there", chunks="words", chunk_delay=0.5, break_after=1)
    seen, result = run(FLOW, Scripted({"draft": [broken, reply("Hi again", chunks=["Hi", " again"],
                                                                chunk_delay=2.0)]}), tmp_path)
    step = result.steps["draft"]
    assert (result.status, step.attempts, step.output) == ("success", 2, "Hi again")
    assert seen == ["Hello ", "Hi", " again"]  # what streamed before the break reached the listener too
    retry = result.trace.events("retry")[0]
    assert retry.data["status"] is None and "the stream broke after 1 of 2 chunks" in retry.data["error"]
    assert step.time_to_first_token == 2.0  # the attempt that answered: its own first chunk


def test_a_stream_that_breaks_on_every_attempt_fails_the_step_naming_the_break(tmp_path):
    broken = reply("Hello there", chunks="words", break_after=2)  # every chunk sent, never completed
    seen, result = run(FLOW, Scripted({"draft": [broken] * 3}), tmp_path)
    step = result.steps["draft"]
    assert (result.status, step.status, step.attempts) == ("failed", "failed", 3)
    assert "scripted: the stream broke after 2 of 2 chunks (break_after)" in step.error
    assert "gave up after 3 attempts" in step.error
    assert seen == ["Hello ", "there"] * 3


def test_a_structured_streamed_reply_is_validated_once_whole(tmp_path):
    flow = FLOW.replace('output: draft}', 'output: draft, response_schema: {type: json_schema, schema: {type: object, '
                                          'required: [name], properties: {name: {type: string}}}}}')
    seen, result = run(flow, Scripted({"draft": reply('{"name": "Ada"}', chunks=4)}), tmp_path)
    assert seen == ['{"na', 'me":', ' "Ad', 'a"}'] and result.state["draft"] == {"name": "Ada"}
    seen, bad = run(flow, Scripted({"draft": reply('{"name": 7}', chunks=4)}), tmp_path)
    assert bad.steps["draft"].error_code == "invalid_output"  # a stream is never re-asked
    assert len(seen) == 3


def test_a_step_that_does_not_stream_gets_the_text_whole(tmp_path):
    flow = FLOW.replace("stream: true, ", "")
    seen, result = run(flow, Scripted({"draft": reply("Hello there", chunks="words", chunk_delay=1.0)}), tmp_path)
    assert seen == [] and result.state["draft"] == "Hello there"
    assert result.steps["draft"].time_to_first_token is None and result.steps["draft"].ended_at == 0.0


def test_a_break_scripted_for_a_step_that_does_not_stream_is_refused(tmp_path):
    flow = FLOW.replace("stream: true, ", "")
    _, result = run(flow, Scripted({"draft": reply("Hello there", chunks="words", break_after=1)}), tmp_path)
    step = result.steps["draft"]
    assert (step.error_code, step.attempts) == ("invalid_script", 1)
    assert "breaks its stream after 1 chunk(s) (break_after), but the step's request does not stream" in step.error


def test_a_tool_loop_never_streams_its_answer_reaches_the_listener_whole(tmp_path):
    flow = FLOW.replace('output: draft}', 'output: draft, tools: [{name: lookup}]}')
    script = Scripted({"draft": [tool_call("lookup", name="Ada"), reply("Hello Ada", chunks="words")]})
    seen, result = run(flow, script, tmp_path, tools={"lookup": lambda name: f"{name} is a customer"})
    assert seen == ["Hello Ada"] and result.state["draft"] == "Hello Ada"
    assert [call.request.stream for call in script.requests] == [False, False]


def test_an_agent_never_streams_its_answer_reaches_the_listener_whole(tmp_path):
    flow = """\
        name: agent-streams
        config: {model: gpt-4o-mini, stream: true}
        agents:
          helper: {instructions: "Help.", tools: [lookup], max_steps: 3}
        steps:
          - {id: help, type: agent, agent: helper, prompt: "Help Ada", output: answer}
        """
    script = Scripted({"help": [tool_call("lookup", name="Ada"), reply("Done for Ada", chunks="words")]})
    seen, result = run(flow, script, tmp_path, tools={"lookup": lambda name: f"{name} is a customer"})
    assert (result.status, seen) == ("success", ["Done for Ada"])
    assert [call.request.stream for call in script.requests] == [False, False]


def _cli_stream(tmp_path, capsys, monkeypatch, first: str) -> str:
    """What ``agentloom run --stream`` prints for a redacted token, the step's first attempt scripted as
    ``first`` (a reply whose stream breaks), the second the token's whole reply."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "flow.yaml").write_text(FLOW.replace("steps:", "state_schema: {token: {redact: true}}\nsteps:"))
    (tmp_path / "script.yaml").write_text(textwrap.dedent(f"""\
        draft:
          - {first}
          - {{text: "Your code is tok-5ec12e7", chunks: ["Your code is tok-5e", "c12e7"]}}
        """))
    assert main(["run", "flow.yaml", "--script", "script.yaml", "--stream", "--state", "token=tok-5ec12e7",
                 "--no-record"]) == 0
    return capsys.readouterr().out


def test_the_cli_prints_a_scripted_stream_as_it_arrives_with_secrets_redacted_across_chunks(tmp_path, capsys,
                                                                                          monkeypatch):
    out = _cli_stream(tmp_path, capsys, monkeypatch,
                      '{text: "Your code is ready", chunks: ["Your code ", "is ready"], break_after: 1}')
    assert "tok-5e" not in out and "c12e7" not in out
    assert out.startswith("Your code Your code is <REDACTED:") and "streams: success" in out


def test_a_stream_that_breaks_inside_a_secret_never_prints_its_start(tmp_path, capsys, monkeypatch):
    out = _cli_stream(tmp_path, capsys, monkeypatch,
                      '{text: "Your code is tok-5ec12e7", chunks: ["Your code is tok-5e", "c12e7"], break_after: 1}')
    assert "tok-5e" not in out and "c12e7" not in out, out
    assert out.startswith("Your code is Your code is <REDACTED:"), out


@pytest.mark.parametrize(("arguments", "named", "says"), [
    ({"chunks": ["Hel", "lo!"]}, "chunks", "pieces that join to the text 'Hello'"),
    ({"chunks": ["He", "", "llo"]}, "chunks", "non-empty strings only"),
    ({"chunks": 0}, "chunks", "a number of characters per chunk"),
    ({"chunks": "letters"}, "chunks", "or 'words'"),
    ({"chunk_delay": 1.0}, "chunk_delay", "a delay for a reply with chunks"),
    ({"chunks": 2, "chunk_delay": [1.0]}, "chunk_delay", "a list of 3 (one per chunk)"),
    ({"chunks": 2, "chunk_delay": -1}, "chunk_delay", "at least 0"),
    ({"chunks": 2, "break_after": 0}, "break_after", "1 to 3, the number of chunks"),
    ({"break_after": 1}, "break_after", "with chunks=..."),
])
def test_stream_arguments_are_checked_when_the_reply_is_made(arguments, named, says):
    with pytest.raises(UsageError) as caught:
        reply("Hello", **arguments)
    assert f"reply(): argument {named} got" in str(caught.value) and says in str(caught.value)


def test_chunks_need_a_text():
    with pytest.raises(UsageError, match=r"(?s)argument chunks got 'words'.*chunks of a non-empty text"):
        reply("", chunks="words")


def test_a_script_written_as_data_names_the_stream_key_that_is_wrong():
    with pytest.raises(ScriptDataError) as caught:
        Scripted.from_data({"draft": ["fine", {"text": "Hello", "chunks": ["He", "y"]}]})
    assert caught.value.where == "script.draft[1].chunks" and caught.value.code == "invalid_script"
    assert "they join to 'Hey'" in str(caught.value)
    with pytest.raises(UsageError) as caught:
        Scripted({"draft": {"text": "Hello", "chunks": 2, "break_after": 5}})
    assert caught.value.code == "invalid_script" and "'break_after' got 5" in str(caught.value)


def test_a_script_written_as_data_streams_like_one_written_in_python(tmp_path):
    script = Scripted.from_data({"draft": {"text": "Hi Ada", "chunks": "words", "chunk_delay": 0.5}})
    seen, result = run(FLOW, script, tmp_path)
    assert seen == ["Hi ", "Ada"] and result.steps["draft"].time_to_first_token == 0.5


def test_the_fixture_streams_a_scripted_reply(agentloom, tmp_path):
    (tmp_path / "flow.yaml").write_text(FLOW)
    result = agentloom.run(tmp_path / "flow.yaml", provider=agentloom.scripted(
        draft=[reply("Hel", chunks=["H", "el"], break_after=1), reply("Hello", chunks=2, chunk_delay=0.1)]))
    assert result.steps["draft"].attempts == 2 and result.steps["draft"].time_to_first_token == 0.1
