"""Public constructors refuse a value of the wrong form at once, naming the argument, the value and the forms."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_agentloom import Scripted, VirtualClock
from pytest_agentloom.errors import UsageError
from pytest_agentloom.providers import (
    AnthropicProvider,
    CircuitBreaker,
    Gateway,
    GenericOpenAIProvider,
    GoogleProvider,
    OllamaProvider,
    OpenAIProvider,
    claims_done,
    error,
    invalid_call,
    never_finishes,
    obeys_injection,
    repeats,
    reply,
)
from pytest_agentloom.replay import CassetteConfig, CassetteSession, RecordMode, ReplayProvider, ToolTape
from pytest_agentloom.tools import Tool, ToolRegistry

_ONE = {"scripted": Scripted()}
_SESSION = CassetteSession(CassetteConfig(path="c.yaml"))

BAD: list[tuple[str, Callable[[], object], list[str]]] = [
    ("scripted text", lambda: Scripted("hello"), ["Scripted()", "replies", "'hello'", "mapping of step id"]),  # type: ignore[arg-type]
    ("scripted number", lambda: Scripted({"s": 5}), ["Scripted()", "step 's'", "reply: 5", "reply(...)"]),  # type: ignore[dict-item]
    ("scripted list", lambda: Scripted({"s": ["ok", None]}), ["reply 2 for step 's'", "reply: None"]),  # type: ignore[list-item]
    ("scripted key", lambda: Scripted({1: "ok"}), ["replies", "got 1", "step ids that are strings"]),  # type: ignore[dict-item]
    ("scripted flag", lambda: Scripted({}, allow_unused="yes"), ["allow_unused", "'yes'", "True or False"]),  # type: ignore[arg-type]
    ("openai api", lambda: OpenAIProvider(api="nope"), ["OpenAIProvider()", "api", "'nope'", "'responses'"]),
    ("openai timeout", lambda: OpenAIProvider(timeout=-1), ["timeout", "got -1", "above 0"]),
    ("openai key", lambda: OpenAIProvider(api_key=123), ["api_key", "got 123", "a string, or None"]),  # type: ignore[arg-type]
    ("generic url", lambda: GenericOpenAIProvider(base_url=b"x"), ["GenericOpenAIProvider()", "base_url"]),  # type: ignore[arg-type]
    ("anthropic timeout", lambda: AnthropicProvider(timeout="5"), ["AnthropicProvider()", "timeout", "'5'"]),  # type: ignore[arg-type]
    ("google key env", lambda: GoogleProvider(api_key_env=7), ["GoogleProvider()", "api_key_env", "got 7"]),  # type: ignore[arg-type]
    ("ollama host", lambda: OllamaProvider(host=11434), ["OllamaProvider()", "host", "got 11434"]),  # type: ignore[arg-type]
    ("ollama timeout", lambda: OllamaProvider(timeout=float("inf")), ["timeout", "got inf"]),
    ("clock start", lambda: VirtualClock("now"), ["VirtualClock()", "start", "'now'", "finite number"]),  # type: ignore[arg-type]
    ("clock flag", lambda: VirtualClock(True), ["VirtualClock()", "start", "got True"]),
    ("gateway threshold", lambda: Gateway(providers=_ONE, failure_threshold=0), ["Gateway()", "failure_threshold"]),
    ("gateway cooldown", lambda: Gateway(providers=_ONE, cooldown_seconds=-1), ["cooldown_seconds", "0 or more"]),
    ("gateway cooldown text", lambda: Gateway(providers=_ONE, cooldown_seconds="30"), ["cooldown_seconds", "'30'"]),  # type: ignore[arg-type]
    ("gateway clock", lambda: Gateway(providers=_ONE, clock=5.0), ["Gateway()", "clock", "now() method"]),  # type: ignore[arg-type]
    ("gateway routes text", lambda: Gateway(providers=_ONE, routes="gpt-*"), ["routes", "'gpt-*'", "pairs"]),  # type: ignore[arg-type]
    ("gateway route shape", lambda: Gateway(providers=_ONE, routes=[("gpt-*",)]), ["routes", "as a pair"]),  # type: ignore[list-item]
    ("gateway route names", lambda: Gateway(providers=_ONE, routes=[("gpt-*", [1])]), ["routes", "by their keys"]),  # type: ignore[list-item]
    ("breaker threshold", lambda: CircuitBreaker(failure_threshold=True), ["CircuitBreaker()", "failure_threshold"]),
    ("breaker cooldown", lambda: CircuitBreaker(cooldown_seconds=float("nan")), ["cooldown_seconds", "got nan"]),
    ("tool name", lambda: Tool(name="", function=print), ["Tool()", "name", "got ''", "non-empty string"]),
    ("tool function", lambda: Tool(name="lookup", function="lookup"), ["Tool()", "function", "callable"]),  # type: ignore[arg-type]
    ("tool parameters", lambda: Tool(name="t", function=print, parameters=[]), ["parameters", "JSON Schema"]),  # type: ignore[arg-type]
    ("registry empty name", lambda: ToolRegistry({"": print}), ["ToolRegistry()", "tools", "non-empty strings"]),
    ("repeats name", lambda: repeats(""), ["repeats()", "name", "non-empty string"]),
    ("repeats arguments", lambda: repeats("lookup", when=object()), ["repeats()", "arguments", "JSON can hold"]),
    ("never_finishes vary", lambda: never_finishes("lookup", vary=3), ["never_finishes()", "vary", "got 3"]),  # type: ignore[arg-type]
    ("invalid_call raw", lambda: invalid_call("lookup", raw_arguments=None), ["raw_arguments", "a string"]),  # type: ignore[arg-type]
    ("claims_done text", lambda: claims_done(5), ["claims_done()", "text", "got 5"]),  # type: ignore[arg-type]
    ("injection plan", lambda: obeys_injection("call x"), ["obeys_injection()", "plan", "a list of replies"]),
    ("injection pattern", lambda: obeys_injection(pattern="(a"), ["pattern", "does not compile"]),
    ("injection groups", lambda: obeys_injection(pattern="call"), ["pattern", "two groups", "0 group(s)"]),
    ("cassette path", lambda: CassetteConfig(path=5), ["CassetteConfig()", "path", "got 5"]),  # type: ignore[arg-type]
    ("cassette mode", lambda: CassetteConfig(path="c.yaml", mode="replay"), ["mode", "'replay'", "'new_episodes'"]),  # type: ignore[arg-type]
    ("cassette match_on", lambda: CassetteConfig(path="c.yaml", match_on="body"), ["match_on", "matcher names"]),  # type: ignore[arg-type]
    ("cassette keys", lambda: CassetteConfig(path="c.yaml", api_keys=[5]), ["api_keys", "5 is not one"]),  # type: ignore[list-item]
    ("cassette age", lambda: CassetteConfig(path="c.yaml", max_age=0), ["max_age", "above 0"]),
    ("cassette hook", lambda: CassetteConfig(path="c.yaml", before_record_response="x"), ["before_record_response"]),  # type: ignore[arg-type]
    ("registry not tools", lambda: ToolRegistry(5), ["ToolRegistry()", "tools", "got 5", "a list of tools"]),  # type: ignore[arg-type]
    ("registry tool", lambda: ToolRegistry({"lookup": 5}), ["tool 'lookup'", "got 5", "a callable"]),
    ("register", lambda: ToolRegistry().register("lookup"), ["function", "'lookup'", "BaseTool subclass"]),
    ("reply text", lambda: reply(5), ["reply()", "text", "got 5", "a string"]),  # type: ignore[arg-type]
    ("reply tokens", lambda: reply("x", input_tokens=-1), ["reply()", "input_tokens", "got -1", "0 or more"]),
    ("reply tokens flag", lambda: reply("x", output_tokens=True), ["output_tokens", "got True"]),
    ("reply cost", lambda: reply("x", cost="0.1"), ["reply()", "cost", "'0.1'", "finite number"]),  # type: ignore[arg-type]
    ("reply model", lambda: reply("x", model=4), ["reply()", "model", "got 4", "a string, or None"]),  # type: ignore[arg-type]
    ("reply calls", lambda: reply("x", tool_calls=["lookup"]), ["tool_calls", "ToolCall", "tool_call(...)"]),  # type: ignore[list-item]
    ("error status", lambda: error("429"), ["error()", "status", "'429'", "whole number"]),  # type: ignore[arg-type]
    ("error message", lambda: error(500, 5), ["error()", "message", "got 5", "a string"]),  # type: ignore[arg-type]
    ("session config", lambda: CassetteSession("c.yaml"), ["CassetteSession()", "config", "'c.yaml'",  # type: ignore[arg-type]
                                                        "CassetteConfig(path="]),
    ("replay inner", lambda: ReplayProvider("openai", _SESSION), ["ReplayProvider()", "inner", "complete(request)"]),  # type: ignore[arg-type]
    ("replay session", lambda: ReplayProvider(Scripted(), "c.yaml"), ["ReplayProvider()", "session",
                                                                      "CassetteSession"]),  # type: ignore[arg-type]
    ("tape path", lambda: ToolTape(5, recording=False), ["ToolTape()", "path", "got 5", "pathlib.Path"]),  # type: ignore[arg-type]
    ("tape flag", lambda: ToolTape("t.yaml", recording="no"), ["ToolTape()", "recording", "'no'", "True or False"]),  # type: ignore[arg-type]
    ("tape allow_real", lambda: ToolTape("t.yaml", recording=True, allow_real="lookup"), ["allow_real", "'lookup'",
                                                                                          "names of the tools"]),
    ("tape redact", lambda: ToolTape("t.yaml", recording=True, redact="x"), ["ToolTape()", "redact", "a function"]),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("make", "words"), [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_a_bad_argument_fails_at_construction_and_says_what_is_accepted(make: Callable[[], object],
                                                                      words: list[str]) -> None:
    with pytest.raises(UsageError) as caught:
        make()
    message = str(caught.value)
    for word in words:
        assert word in message, message
    assert "accepted:" in message


def test_the_forms_the_constructors_document_are_accepted() -> None:
    Scripted()
    Scripted(None, allow_unused=True)
    Scripted({"a": "text", "b": [reply("x"), error(500)], "c": lambda request: "made", "d": ("one", "two")})
    OpenAIProvider(api="responses", api_key="", timeout=5, name="local", api_key_env="MY_KEY")
    GenericOpenAIProvider(base_url="http://127.0.0.1:1")
    AnthropicProvider(api_key="k", base_url="http://127.0.0.1:1", timeout=1.5)
    GoogleProvider(api_key_env="K")
    OllamaProvider(host="127.0.0.1:11434")
    assert VirtualClock(3).now() == 3.0
    Gateway(providers=_ONE, routes=[("gpt-*", "scripted"), ("*", ["scripted"])], clock=VirtualClock(),
            failure_threshold=1, cooldown_seconds=0)
    CircuitBreaker(failure_threshold=2, cooldown_seconds=0.5)
    ToolRegistry({"lookup": print, 7: len})
    repeats("lookup", order_id="A-1"), never_finishes("search", vary="page"), claims_done("Done.")
    obeys_injection([reply("x")], pattern=r"do (\w+) using (\{.*\})")
    config = CassetteConfig(path="c.yaml", mode="all", match_on=["method", lambda a, b: None], ignore=["seed"])
    assert config.mode is RecordMode.ALL and config.ignore == ("seed",) and config.path.name == "c.yaml"
    reply("x", input_tokens=3, output_tokens=0, finish_reason=None, model="m", cost=0.5, reasoning="r"), error(None)
    ReplayProvider(Scripted(), CassetteSession(config))
    tape = ToolTape("t.yaml", recording=True, allow_real=(name for name in ["lookup"]), redact=str.upper, append=True)
    assert tape.allow_real == frozenset({"lookup"}) and ToolTape(Path("t.yaml"), recording=True).allow_real is False
