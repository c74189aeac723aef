"""The cassette library without pytest plugins: record against the fake server, replay with it stopped."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_agentloom._core.types import LLMRequest, LLMResponse, Message, ToolSpec
from pytest_agentloom.providers._anthropic import AnthropicProvider
from pytest_agentloom.providers._common import PLACEHOLDER_API_KEY
from pytest_agentloom.providers._google import GoogleProvider
from pytest_agentloom.providers._ollama import OllamaProvider
from pytest_agentloom.providers._openai import OpenAIProvider
from pytest_agentloom.replay import (
    CassetteConfig,
    CassetteMismatchError,
    CassetteNotFoundError,
    CassetteSession,
    RecordMode,
    UnusedInteractionsError,
)
from tests.servers.fake_llm import FakeLLMServer, drop, fail, text, tool_calls

KEY = "sk-live-key-that-must-not-leak-42"


def request(content: str = "hello", *, model: str = "gpt-4o-mini", stream: bool = False, step: str = "ask",
            **extra: Any) -> LLMRequest:
    return LLMRequest(step_id=step, model=model, messages=(Message(role="user", content=content),), stream=stream,
                      **extra)


def run_calls(session: CassetteSession, provider: Any, requests: list[LLMRequest]) -> list[LLMResponse | Exception]:
    wrapped = session.wrap(provider)

    async def go() -> list[LLMResponse | Exception]:
        out: list[LLMResponse | Exception] = []
        for item in requests:
            try:
                out.append(await wrapped.complete(item))
            except Exception as exc:
                out.append(exc)
        return out

    return asyncio.run(go())


ROUTES: dict[str, tuple[str, Callable[[FakeLLMServer | None], Any]]] = {
    "openai": ("gpt-4o-mini", lambda s: OpenAIProvider(api_key=KEY if s else PLACEHOLDER_API_KEY,
                                                       base_url=s.openai_base_url if s else None)),
    "anthropic": ("claude-3-5-haiku-latest", lambda s: AnthropicProvider(api_key=KEY if s else PLACEHOLDER_API_KEY,
                                                                         base_url=s.url if s else None)),
    "ollama": ("llama3.2", lambda s: OllamaProvider(host=s.url if s else None)),
    "gemini": ("gemini-2.0-flash", lambda s: GoogleProvider(api_key=KEY if s else PLACEHOLDER_API_KEY,
                                                            base_url=s.url if s else None)),
}


def record_then_replay(tmp_path: Path, route: str, plans: list[Any], requests: list[LLMRequest],
                       ) -> tuple[list[Any], list[Any], Path]:
    model, factory = ROUTES[route]
    requests = [item.model_copy(update={"model": model}) for item in requests]
    path = tmp_path / "cassette.yaml"
    with FakeLLMServer() as server:
        server.plan(route, *plans)
        with CassetteSession(CassetteConfig(path=path, mode=RecordMode.ALL, api_keys=(KEY,))) as session:
            live = run_calls(session, factory(server), requests)
    with CassetteSession(CassetteConfig(path=path, mode=RecordMode.NONE)) as session:
        replayed = run_calls(session, factory(None), requests)
        session.check_unused()
    return live, replayed, path


def same(a: Any, b: Any) -> bool:
    if isinstance(a, Exception) or isinstance(b, Exception):
        return type(a) is type(b) and str(a) == str(b)
    return a == b


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_each_provider_replays_what_it_recorded(tmp_path: Path, route: str, stream: bool) -> None:
    plans = [text("first answer", input_tokens=7, output_tokens=2),
             tool_calls(("lookup", {"q": "printers"}), input_tokens=9, output_tokens=5)]
    tools = (ToolSpec(name="lookup", description="search", parameters={"type": "object", "properties": {}}),)
    requests = [request("hello", stream=stream), request("use a tool", stream=stream, tools=tools)]
    live, replayed, path = record_then_replay(tmp_path, route, plans, requests)
    assert all(isinstance(item, LLMResponse) for item in live), live
    assert [same(a, b) for a, b in zip(live, replayed, strict=True)] == [True, True]
    assert live[0].text == "first answer" and live[0].usage.input_tokens == 7
    assert live[1].tool_calls[0].name == "lookup"
    saved = path.read_text()
    assert KEY not in saved
    body = yaml.safe_load(saved)["interactions"][0]["response"]["body"]
    assert list(body) == (["text"] if stream else ["json"])  # streams as text, JSON as data


def test_identical_requests_replay_in_recorded_order(tmp_path: Path) -> None:
    same_request = request("poll")
    live, replayed, _ = record_then_replay(tmp_path, "openai", [fail(503), text("one"), text("two")],
                                           [same_request, same_request, same_request])
    assert [getattr(item, "status", None) for item in live[:1]] == [503]
    assert [r.text for r in replayed[1:]] == ["one", "two"]
    assert [same(a, b) for a, b in zip(live, replayed, strict=True)] == [True, True, True]


def recorded(tmp_path: Path, *contents: str) -> Path:
    path = tmp_path / "c.yaml"
    with FakeLLMServer() as server:
        server.plan("openai", *[text(f"answer {i}") for i, _ in enumerate(contents)])
        with CassetteSession(CassetteConfig(path=path, mode=RecordMode.ALL)) as session:
            run_calls(session, ROUTES["openai"][1](server), [request(c) for c in contents])
    return path


def replay(path: Path, *requests: LLMRequest, test_id: str = "t.py::test_x", **config: Any,
           ) -> tuple[list[Any], CassetteSession]:
    session = CassetteSession(CassetteConfig(path=path, mode=RecordMode.NONE, test_id=test_id,
                                             record_command="pytest t.py::test_x --agentloom-record",
                                             root=path.parent, **config))
    with session:
        return run_calls(session, ROUTES["openai"][1](None), list(requests)), session


def test_a_mismatch_names_test_step_turn_and_shows_the_closest_diff(tmp_path: Path) -> None:
    path = recorded(tmp_path, "Classify: printer on fire", "Summarize it")
    (error, *_), _ = replay(path, request("Classify: scanner jammed", step="classify", turn=3, attempt=2))
    assert isinstance(error, CassetteMismatchError)
    assert error.reason == "no_match" and error.retryable is False and error.code == "cassette_mismatch"
    assert (error.step_id, error.turn) == ("classify", 3)
    assert str(error).splitlines() == [
        "Cassette has no recorded response for this request (test t.py::test_x, step 'classify', turn 3).",
        "  cassette: c.yaml (record mode none; 2 interactions, 0 used)",
        "  request: POST /v1/chat/completions (attempt 2, model gpt-4o-mini)",
        "  matched on: method, url, body",
        "  closest recorded: interaction #1 (POST /v1/chat/completions); differences (recorded -> now):",
        "    body.messages[0].content: 'Classify: printer on fire' -> 'Classify: scanner jammed'",
        "How to fix: if the change is intended, re-record this test against live providers:",
        "  pytest t.py::test_x --agentloom-record",
    ]


def test_ignored_body_paths_match_and_are_named_in_the_mismatch_message(tmp_path: Path) -> None:
    path = recorded(tmp_path, "Ticket 1f3a: printer on fire")
    (error,), _ = replay(path, request("Ticket 9c2b: printer on fire"))
    assert isinstance(error, CassetteMismatchError)
    (answer,), _ = replay(path, request("Ticket 9c2b: printer on fire"), ignore=("messages[*].content",))
    assert isinstance(answer, LLMResponse) and answer.text == "answer 0"
    (other,), _ = replay(path, request("Ticket 9c2b: printer on fire", model="gpt-4o"),
                         ignore=("messages.*.content",))
    lines = str(other).splitlines()
    assert "  matched on: method, url, body (ignoring messages.*.content)" in lines
    assert "    body.model: 'gpt-4o-mini' -> 'gpt-4o'" in lines  # the ignored content is in no diff


def same_ticket_number(request: Any, recorded: Any) -> None:
    """A matcher of a user's: the ticket numbers in the last message must agree."""
    if request.body.split(b"Ticket ")[1][:4] != recorded.body.split(b"Ticket ")[1][:4]:
        raise AssertionError("ticket numbers differ")


@pytest.mark.slow
def test_a_custom_matcher_takes_part_and_is_named_with_its_reason(tmp_path: Path) -> None:
    path = recorded(tmp_path, "Ticket 1f3a: printer on fire")
    on = ("method", "url", same_ticket_number)
    (answer,), _ = replay(path, request("Ticket 1f3a: scanner jammed"), match_on=on)
    assert isinstance(answer, LLMResponse)
    (error,), _ = replay(path, request("Ticket 2b2b: printer on fire"), match_on=on)
    lines = str(error).splitlines()
    assert "  matched on: method, url, same_ticket_number" in lines
    assert "    matcher 'same_ticket_number': ticket numbers differ" in lines
    named = ("method", "url", "body", "tests.replay.test_cassette:same_ticket_number")
    (error,), _ = replay(path, request("Ticket 2b2b: printer on fire"), match_on=named)
    assert "  matched on: method, url, body, tests.replay.test_cassette:same_ticket_number" in str(error)


def test_one_call_too_many_says_the_recording_was_already_used(tmp_path: Path) -> None:
    path = recorded(tmp_path, "hello")
    (first, second), _ = replay(path, request("hello"), request("hello"))
    assert isinstance(first, LLMResponse)
    assert isinstance(second, CassetteMismatchError) and second.reason == "already_played"
    assert "interaction #1 matches it but was already used" in str(second)


def test_unused_interactions_are_listed(tmp_path: Path) -> None:
    path = recorded(tmp_path, "first", "second", "third")
    _, session = replay(path, request("second"))
    assert session.unused() == [0, 2]
    with pytest.raises(UnusedInteractionsError) as caught:
        session.check_unused()
    assert str(caught.value).splitlines()[0] == (
        "Test t.py::test_x did not use 2 of the 3 recorded interactions of its cassette: "
        "the workflow now calls the model fewer times than when it was recorded.")
    assert "#1 POST /v1/chat/completions model=gpt-4o-mini last message='first'" in str(caught.value)


def test_a_missing_cassette_is_reported_before_any_call(tmp_path: Path) -> None:
    session = CassetteSession(CassetteConfig(path=tmp_path / "none.yaml", test_id="t.py::test_x", root=tmp_path))
    with pytest.raises(CassetteNotFoundError) as caught:
        session.require_cassette()
    assert str(caught.value).splitlines()[0] == (
        "Test t.py::test_x has no cassette to replay: none.yaml does not exist.")
    (error,), _ = replay(tmp_path / "none.yaml", request("hi"))
    assert isinstance(error, CassetteMismatchError) and error.reason == "no_cassette"


def test_replay_with_a_different_base_url_still_matches(tmp_path: Path) -> None:
    path = recorded(tmp_path, "hello")
    session = CassetteSession(CassetteConfig(path=path, mode=RecordMode.NONE))
    with session:
        provider = OpenAIProvider(api_key=PLACEHOLDER_API_KEY, base_url="https://proxy.invalid/v1")
        (response,) = run_calls(session, provider, [request("hello")])
    assert isinstance(response, LLMResponse) and response.text == "answer 0"


def test_new_episodes_appends_and_once_does_not_touch_an_existing_file(tmp_path: Path) -> None:
    path = recorded(tmp_path, "hello")
    with FakeLLMServer() as server:
        server.plan("openai", text("new"))
        with CassetteSession(CassetteConfig(path=path, mode=RecordMode.NEW_EPISODES)) as session:
            out = run_calls(session, ROUTES["openai"][1](server), [request("hello"), request("more")])
        assert [r.text for r in out] == ["answer 0", "new"]
        assert len(server.requests) == 1
        assert len(yaml.safe_load(path.read_text())["interactions"]) == 2
        before = path.read_text()
        with CassetteSession(CassetteConfig(path=path, mode=RecordMode.ONCE)) as session:
            (error,) = run_calls(session, ROUTES["openai"][1](server), [request("not recorded")])
        assert isinstance(error, CassetteMismatchError)
        assert path.read_text() == before and len(server.requests) == 1


def test_redacted_values_are_replaced_and_still_match(tmp_path: Path) -> None:
    from pytest_agentloom.engine._format.loader import load_workflow

    flow = tmp_path / "flow.yaml"
    flow.write_text("name: f\nstate_schema: {token: {redact: true}}\nstate: {token: ''}\n"
                    "steps:\n  - {id: ask, type: llm_call, model: gpt-4o-mini, prompt: 'x'}\n")
    workflow = load_workflow(flow)
    path = tmp_path / "c.yaml"
    secret = 'tok"en-\\-é-123'  # needs JSON escaping
    # the fake server echoes the prompt back, so the secret is in the response too
    config = CassetteConfig(path=path, mode=RecordMode.ALL, root=tmp_path, env={})
    with FakeLLMServer() as server, CassetteSession(config) as session:
        session.add_run(workflow, {"token": secret})
        (live,) = run_calls(session, ROUTES["openai"][1](server), [request(f"use {secret} now")])
    assert secret in live.text
    saved = path.read_text(encoding="utf-8")
    assert secret not in saved and 'tok"en' not in saved and 'tok\\"en' not in saved
    assert saved.count("<REDACTED:sha256=") == 2
    with CassetteSession(CassetteConfig(path=path, mode=RecordMode.NONE, root=tmp_path, env={})) as session:
        session.add_run(workflow, {"token": "a different value in CI"})
        (replayed,) = run_calls(session, ROUTES["openai"][1](None), [request("use a different value in CI now")])
    assert isinstance(replayed, LLMResponse) and "<REDACTED:sha256=" in replayed.text


def test_provenance_hashes_the_workflow_and_flags_edits(tmp_path: Path) -> None:
    from pytest_agentloom.engine._format.loader import load_workflow

    flow = tmp_path / "flow.yaml"
    flow.write_text("name: f\nsteps:\n  - {id: ask, type: llm_call, model: gpt-4o-mini, prompt: hello}\n")
    path = tmp_path / "c.yaml"
    config = CassetteConfig(path=path, mode=RecordMode.ALL, root=tmp_path)
    with FakeLLMServer() as server, CassetteSession(config) as session:
        session.add_run(load_workflow(flow))
        run_calls(session, ROUTES["openai"][1](server), [request("hello")])
    with CassetteSession(CassetteConfig(path=path, root=tmp_path)) as session:
        session.add_run(load_workflow(flow))
        assert session.stale_workflows() == []
    flow.write_text(flow.read_text() + "description: edited\n")
    with CassetteSession(CassetteConfig(path=path, root=tmp_path)) as session:
        session.add_run(load_workflow(flow))
        assert session.stale_workflows() == ["flow.yaml"]


def test_concurrent_steps_replay_and_a_mismatch_names_its_own_step(tmp_path: Path) -> None:
    from pytest_agentloom import VirtualClock, run_workflow
    from pytest_agentloom.engine._format.loader import load_workflow
    from pytest_agentloom.providers._factory import default_gateway

    steps = "".join(f"  - {{id: s{n}, type: llm_call, model: gpt-4o-mini, prompt: 'part {n} of {{state.topic}}'}}\n"
                    for n in range(4))
    (tmp_path / "flow.yaml").write_text("name: fan\nstate: {topic: ''}\nsteps:\n" + steps)
    workflow = load_workflow(tmp_path / "flow.yaml")
    path = tmp_path / "c.yaml"

    def run(session: CassetteSession, topic: str, **gateway: Any) -> Any:
        provider = session.wrap(default_gateway(workflow.config, **gateway))
        return run_workflow(workflow, state={"topic": topic}, provider=provider, clock=VirtualClock(), run_id="r")

    with FakeLLMServer() as server:  # echoes: each step's answer names its own part
        config = CassetteConfig(path=path, mode=RecordMode.ALL, env={})
        os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = server.openai_base_url, KEY
        try:
            with CassetteSession(config) as session:
                live = run(session, "cats")
        finally:
            del os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"]
    with CassetteSession(CassetteConfig(path=path, env={})) as session:
        replayed = run(session, "cats", api_key_placeholder=True)
    assert replayed.to_json() == live.to_json()
    assert [replayed.state["steps"][f"s{n}"]["output"] for n in range(4)] == [f"echo: part {n} of cats"
                                                                            for n in range(4)]
    with CassetteSession(CassetteConfig(path=path, env={})) as session:
        workflow = workflow.model_copy(update={"steps": [*workflow.steps[:3], workflow.steps[3].model_copy(
            update={"prompt": "something else"})]})
        changed = run(session, "cats", api_key_placeholder=True)
    assert [changed.steps[f"s{n}"].status.value for n in range(4)] == ["success", "success", "success", "failed"]
    assert changed.steps["s3"].error.startswith("Cassette has no recorded response for this request "
                                                "(step 's3', turn 1).")


def test_a_re_recording_that_changes_nothing_but_the_time_leaves_the_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    with FakeLLMServer() as server:

        def record(reply: str) -> None:
            server.reset()  # the same ids and timestamps in the bodies, as a deterministic provider gives
            server.plan("openai", text(reply))
            with CassetteSession(CassetteConfig(path=path, mode=RecordMode.ALL)) as session:
                run_calls(session, ROUTES["openai"][1](server), [request("hello")])

        record("same")
        first = path.read_text()
        old = first.replace(yaml.safe_load(first)["provenance"]["recorded_at"], "2020-01-01T00:00:00Z")
        assert old != first
        path.write_text(old)
        record("same")
        assert path.read_text() == old  # no diff for a reviewer: the recording did not change
        record("different")
        assert path.read_text() != old
        assert yaml.safe_load(path.read_text())["provenance"]["recorded_at"] != "2020-01-01T00:00:00Z"


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_dropped_connection_is_recorded_and_fails_the_same_way_on_replay(tmp_path: Path, route: str) -> None:
    from pytest_agentloom.errors import ProviderError

    live, replayed, path = record_then_replay(tmp_path, route, [drop(), text("after the drop")],
                                              [request("hello"), request("hello")])
    for run in (live, replayed):  # the retry that followed the drop answers at the second attempt, as it did live
        assert isinstance(run[0], ProviderError) and run[0].status is None, run
        assert "connection failed" in str(run[0])
        assert isinstance(run[1], LLMResponse) and run[1].text == "after the drop"
    interactions = yaml.safe_load(path.read_text())["interactions"]
    assert [(i["response"]["status"], i["response"]["reason"]) for i in interactions] == [
        (0, "no response: the connection was dropped"), (200, "OK")]


def test_a_fallback_after_a_dropped_connection_replays_through_the_same_providers(tmp_path: Path) -> None:
    from pytest_agentloom._core.clock import VirtualClock
    from pytest_agentloom.providers._gateway import Gateway
    from pytest_agentloom.providers._generic_openai import GenericOpenAIProvider

    def gateway(server: FakeLLMServer | None) -> Gateway:
        base_url = server.openai_base_url if server else "http://127.0.0.1:9/v1"  # replay: nothing listens there
        providers = {"openai": OpenAIProvider(api_key=KEY if server else PLACEHOLDER_API_KEY, base_url=base_url),
                     "generic_openai": GenericOpenAIProvider(base_url=base_url)}
        return Gateway(providers=providers, routes=[("gpt-*", ["openai", "generic_openai"])], clock=VirtualClock())

    path = tmp_path / "c.yaml"
    with FakeLLMServer() as server:
        server.plan("openai", drop(), text("from the backup"))
        with CassetteSession(CassetteConfig(path=path, mode=RecordMode.ALL)) as session:
            (live,) = run_calls(session, gateway(server), [request("hello")])
    with CassetteSession(CassetteConfig(path=path, mode=RecordMode.NONE)) as session:
        (replayed,) = run_calls(session, gateway(None), [request("hello")])
        session.check_unused()
    assert isinstance(live, LLMResponse) and isinstance(replayed, LLMResponse), (live, replayed)
    assert (live.provider, live.text) == (replayed.provider, replayed.text) == ("generic_openai", "from the backup")
    assert [i["response"]["status"] for i in yaml.safe_load(path.read_text())["interactions"]] == [0, 200]
