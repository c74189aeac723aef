"""Public constructors refuse a value of the wrong form at once, naming the argument, the value and the forms."""

from __future__ import annotations

from collections.abc import Callable

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
    error,
    reply,
)

_ONE = {"scripted": Scripted()}

BAD: list[tuple[str, Callable[[], object], list[str]]] = [
    ("scripted text", lambda: Scripted("hello"), ["Scripted()", "replies", "'hello'", "mapping of step id"]),  # type: ignore[arg-type]
    ("scripted number", lambda: Scripted({"s": 5}), ["Scripted()", "replies['s']", "got 5", "reply(...)"]),  # type: ignore[dict-item]
    ("scripted list", lambda: Scripted({"s": ["ok", None]}), ["replies['s']", "got None"]),  # type: ignore[list-item]
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
