"""The llm_call step (docs: llm_call): what reaches the model, what the step writes, and the retry table."""

from __future__ import annotations

import json
import logging
import textwrap
from typing import Any

import pytest

from pytest_agentloom import LLMRequest, Scripted, VirtualClock, Workflow, error, reply, run_workflow
from pytest_agentloom._core.clock import current_clock
from pytest_agentloom.engine._format.loader import parse_workflow

STATE: dict[str, Any] = {
    "question": "What changed?",
    "limits": {"max_words": 120},
    "items": [{"id": 1, "name": "Item A"}, {"id": 2, "name": "Item B"}],
    "numbers": [1, 2, 3],
    "score": 0.8712,
    "user": "alice",
}


def flow(text: str) -> Workflow:
    return parse_workflow(textwrap.dedent(text))


def ask(prompt: str, *, extra: str = "", system: str | None = None) -> Workflow:
    """A one-step workflow whose llm_call sends ``prompt`` (and ``system`` as its system prompt)."""
    lines = ["name: llm", "config: {model: gpt-4o}", "steps:", "  - id: ask", "    type: llm_call"]
    lines.append(f"    prompt: {json.dumps(prompt)}")
    if system is not None:
        lines.append(f"    system_prompt: {json.dumps(system)}")
    lines.extend(f"    {line}" for line in extra.splitlines() if line.strip())
    return parse_workflow("\n".join(lines) + "\n")


def sent(prompt: str, state: dict[str, Any] | None = None) -> str:
    """The user message the model receives for ``prompt`` rendered against ``state``."""
    provider = Scripted({"ask": "ok"})
    result = run_workflow(ask(prompt), provider=provider, state=STATE if state is None else state, clock=VirtualClock())
    assert result.status == "success", result.steps["ask"].error
    [request] = provider.requests
    return request.messages[-1]["content"]


def run(workflow: Workflow, provider: Scripted, state: dict[str, Any] | None = None, clock: VirtualClock | None = None):
    return run_workflow(workflow, provider=provider, state=state, clock=clock or VirtualClock())


# --------------------------------------------------------------------------- templates table (docs: Templates)


@pytest.mark.parametrize(
    ("template", "rendered"),
    [
        pytest.param("{state.question}", "What changed?", id="top-level-key"),
        pytest.param("{state.limits.max_words}", "120", id="key-in-dict"),
        pytest.param("{state.items[0].name}", "Item A", id="list-item-key"),
        pytest.param("{state.items[-1]}", "{'id': 2, 'name': 'Item B'}", id="negative-index"),
        pytest.param("{state.score:.2f}", "0.87", id="format-spec"),
        pytest.param("{state.numbers}", "[1, 2, 3]", id="whole-list"),
        pytest.param("{state.limits}", "{'max_words': 120}", id="whole-dict"),
        pytest.param("{question}", "What changed?", id="bare-top-level-key"),
        pytest.param("{{ and }}", "{ and }", id="doubled-braces"),
        pytest.param('JSON like {{"label": "x"}}', 'JSON like {"label": "x"}', id="doubled-braces-json"),
        pytest.param("{state.user!r}", "'alice'", id="conversion"),
        pytest.param("Q: {state.question} / {user}", "Q: What changed? / alice", id="mixed"),
    ],
)
def test_every_row_of_the_templates_table_reaches_the_model(template: str, rendered: str) -> None:
    assert sent(template) == rendered


def test_a_step_output_is_read_by_a_later_prompt() -> None:
    workflow = flow(
        """
        name: llm
        config: {model: gpt-4o}
        steps:
          - {id: classify, type: llm_call, prompt: "Classify"}
          - {id: explain, type: llm_call, prompt: "Why {state.steps.classify.output}?", depends_on: [classify]}
        """
    )
    provider = Scripted({"classify": "bug", "explain": "because"})

    run(workflow, provider)

    assert provider.calls("explain")[0].messages == [{"role": "user", "content": "Why bug?"}]


def test_system_prompt_is_rendered_and_sent_first() -> None:
    provider = Scripted({"ask": "ok"})

    run(ask("{state.question}", system="Answer in {state.limits.max_words} words."), provider, STATE)

    assert provider.requests[0].messages == [
        {"role": "system", "content": "Answer in 120 words."},
        {"role": "user", "content": "What changed?"},
    ]


# --------------------------------------------------------------------------- missing keys (docs: Templates)


@pytest.mark.parametrize(
    ("template", "rendered", "warned"),
    [
        pytest.param("[{state.name}]", "[]", ["state.name"], id="missing-key"),
        pytest.param("[{state.a.b.c}]", "[]", ["state.a.b.c"], id="missing-deep-path"),
        pytest.param("[{state.limits.nope}]", "[]", ["state.limits.nope"], id="missing-inner-key"),
        pytest.param("[{state.name:.2f}]", "[]", ["state.name"], id="missing-with-spec"),
        pytest.param("[{state.name:>10}]", "[]", ["state.name"], id="missing-with-width"),
        pytest.param("[{state.items[5]}]", "[]", ["state.items[5]"], id="index-past-the-end"),
        pytest.param("[{state.items[-9].name}]", "[]", ["state.items[-9].name"], id="negative-index-past-start"),
        pytest.param("[{state.user.name}]", "[]", ["state.user.name"], id="path-through-a-string"),
        pytest.param("[{name}]", "[{name}]", [], id="bare-name-stays"),
        pytest.param("[{name:>5}]", "[{name:>5}]", [], id="bare-name-with-spec-stays"),
        pytest.param("[{name.first}]", "[{name.first}]", [], id="bare-dotted-name-stays"),
        pytest.param("[{0}]", "[{0}]", [], id="positional-stays"),
    ],
)
def test_missing_keys_render_as_000_says(
    template: str, rendered: str, warned: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    provider = Scripted({"ask": "ok"})
    caplog.set_level(logging.WARNING, logger="pytest_agentloom")

    result = run(ask(template), provider, STATE)

    assert result.status == "success"
    assert provider.requests[0].messages[-1]["content"] == rendered
    messages = [f"Template variable '{name}' not found, rendering as empty." for name in warned]
    assert [record.getMessage() for record in caplog.records] == messages
    events = result.trace.events("template_warning", step="ask")
    assert [(e.data["field"], e.data["message"]) for e in events] == list(zip(warned, messages, strict=True))


def test_a_missing_key_in_the_system_prompt_warns_too(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="pytest_agentloom")

    result = run(ask("hi", system="Be {state.tone}."), Scripted({"ask": "ok"}), STATE)

    assert result.trace.events("template_warning")[0].data["field"] == "state.tone"
    assert "Template variable 'state.tone' not found, rendering as empty." in caplog.text


def test_a_missing_key_warns_once_even_when_the_call_is_retried(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="pytest_agentloom")

    result = run(ask("[{state.nope}]"), Scripted({"ask": [error(503), "ok"]}), STATE)

    assert result.steps["ask"].attempts == 2
    assert len(result.trace.events("template_warning")) == 1
    assert caplog.text.count("Template variable 'state.nope' not found") == 1


# --------------------------------------------------------------------------- template errors at run time


@pytest.mark.parametrize(
    ("template", "python_says"),
    [
        pytest.param("{state.user:.2f}", "Unknown format code 'f' for object of type 'str'", id="float-spec-on-str"),
        pytest.param("{state.score:d}", "Unknown format code 'd' for object of type 'float'", id="int-spec-on-float"),
        pytest.param("{user:.2f}", "Unknown format code 'f' for object of type 'str'", id="bare-name"),
        pytest.param("{state.items:>5}", "unsupported format string passed to list.__format__", id="spec-on-list"),
    ],
)
def test_a_format_spec_that_does_not_fit_the_value_fails_at_once(template: str, python_says: str) -> None:
    provider = Scripted({"ask": ["never sent"]})

    result = run(ask(template), provider, STATE)

    step = result.steps["ask"]
    assert result.status == "failed"
    assert result.reason == "step_failed"
    assert step.status == "failed"
    assert step.error.startswith("Prompt template error: ")
    assert python_says in step.error
    assert step.error_code == "template_error"
    assert step.attempts == 0  # rendering failed before the first call
    assert provider.requests == []
    assert result.trace.events("retry") == []


def test_a_format_spec_that_breaks_in_the_system_prompt_fails_at_once() -> None:
    provider = Scripted({"ask": "never sent"})

    result = run(ask("hi", system="{state.user:.2f}"), provider, STATE)

    assert result.steps["ask"].error.startswith("Prompt template error: Unknown format code 'f'")
    assert provider.requests == []


def test_broken_braces_in_a_workflow_built_in_python_fail_at_once() -> None:
    """The loader catches these; a Workflow validated directly still fails the step, without retry."""
    workflow = Workflow.model_validate(
        {"name": "py", "config": {"model": "gpt-4o"},
         "steps": [{"id": "ask", "type": "llm_call", "prompt": 'Return JSON like {"label": "x"}'}]}
    )
    provider = Scripted({"ask": "never sent"})

    result = run(workflow, provider)

    error_text = result.steps["ask"].error
    assert error_text.startswith("Prompt template error: Invalid format specifier")
    assert provider.requests == []


# --------------------------------------------------------------------------- the request


def test_request_carries_model_and_params_as_given() -> None:
    workflow = ask("hi", extra="model: claude-sonnet-4-5\ntemperature: 7.5\nmax_tokens: 400")
    provider = Scripted({"ask": "ok"})

    run(workflow, provider)

    [call] = provider.requests
    assert call.step_id == "ask"
    assert call.model == "claude-sonnet-4-5"  # the step's model wins over config.model
    assert call.params == {"temperature": 7.5, "max_tokens": 400}  # no range check on temperature
    assert call.attempt == 1


def test_unset_params_are_not_sent_and_config_model_is_the_default() -> None:
    provider = Scripted({"ask": "ok"})

    run(ask("hi"), provider)

    assert provider.requests[0].model == "gpt-4o"
    assert provider.requests[0].params == {}


def test_no_model_anywhere_fails_the_step() -> None:
    workflow = flow("name: x\nsteps: [{id: ask, type: llm_call, prompt: hi}]\n")
    provider = Scripted({"ask": "ok"})

    result = run(workflow, provider)

    assert result.steps["ask"].error_code == "no_model"
    assert "set 'model' on the step or 'config.model'" in result.steps["ask"].error
    assert provider.requests == []


def test_no_provider_fails_the_step() -> None:
    result = run_workflow(ask("hi"), clock=VirtualClock())

    assert result.steps["ask"].status == "failed"
    assert result.steps["ask"].error_code == "no_provider"
    assert "pass provider=Scripted" in result.steps["ask"].error


def test_no_prompt_fails_at_once_without_calling_the_provider() -> None:
    workflow = Workflow.model_validate(
        {"name": "py", "config": {"model": "gpt-4o"}, "steps": [{"id": "ask", "type": "llm_call"}]}
    )
    provider = Scripted({"ask": "never sent"})

    result = run(workflow, provider)

    step = result.steps["ask"]
    assert step.status == "failed"
    assert step.error_code == "no_prompt"
    assert "llm_call 'ask' has neither 'prompt' nor 'conversation'" in step.error
    assert provider.requests == []
    assert result.reason == "step_failed"


# --------------------------------------------------------------------------- what the step writes


def test_the_step_result_carries_tokens_cost_model_provider_and_finish_reason() -> None:
    provider = Scripted({"ask": reply("The answer.", input_tokens=1000, output_tokens=500, finish_reason="length")})

    result = run(ask("hi", extra="output: answer"), provider)

    step = result.steps["ask"]
    assert step.status == "success"
    assert step.output == "The answer."
    assert step.error is None and step.error_code is None
    assert step.attempts == 1
    assert step.finish_reason == "length"  # kept exactly as the provider gave it
    assert (step.input_tokens, step.output_tokens, step.reasoning_tokens, step.total_tokens) == (1000, 500, 0, 1500)
    assert step.cost_usd == pytest.approx(1000 * 2.50 / 1e6 + 500 * 10.00 / 1e6)
    assert step.model == "gpt-4o"
    assert step.provider == "scripted"
    assert result.state["answer"] == "The answer."
    assert result.state["steps"]["ask"] == {"output": "The answer.", "status": "success"}
    [event] = result.trace.events("provider_call")
    assert event.data == {
        "model": "gpt-4o", "provider": "scripted", "input_tokens": 1000, "output_tokens": 500,
        "reasoning_tokens": 0, "finish_reason": "length", "cost_usd": step.cost_usd, "priced": True,
    }


def test_the_model_that_answered_is_recorded_and_priced() -> None:
    provider = Scripted({"ask": reply("ok", model="claude-haiku-4-5-20251001", input_tokens=1_000_000)})

    result = run(ask("hi"), provider)

    assert result.steps["ask"].model == "claude-haiku-4-5-20251001"
    assert result.steps["ask"].cost_usd == pytest.approx(1.00)


def test_reasoning_tokens_bill_at_the_output_price() -> None:
    provider = Scripted({"ask": reply("ok", output_tokens=100, reasoning_tokens=900)})

    result = run(ask("hi"), provider)

    assert result.steps["ask"].reasoning_tokens == 900
    assert result.steps["ask"].cost_usd == pytest.approx(1000 * 10.00 / 1e6)


def test_a_provider_reported_cost_wins_over_the_pricing_table() -> None:
    provider = Scripted({"ask": reply("ok", input_tokens=1_000_000, cost=0.123)})

    result = run(ask("hi"), provider)

    assert result.steps["ask"].cost_usd == 0.123


def test_an_unpriced_model_costs_nothing_and_says_so() -> None:
    provider = Scripted({"ask": reply("ok", input_tokens=10_000)})

    result = run(ask("hi", extra="model: my-local-llama"), provider)

    assert result.steps["ask"].cost_usd == 0.0
    assert result.trace.events("provider_call")[0].data["priced"] is False


# --------------------------------------------------------------------------- the retry table (docs: step fields)


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504, None])
def test_retryable_statuses_and_errors_without_status_are_retried_with_backoff(status: int | None) -> None:
    provider = Scripted({"ask": [error(status, "flaky"), error(status, "flaky"), reply("ok")]})
    clock = VirtualClock()

    result = run(ask("hi"), provider, clock=clock)

    step = result.steps["ask"]
    assert step.status == "success"
    assert step.attempts == 3
    assert [call.attempt for call in provider.requests] == [1, 2, 3]
    assert clock.now() == 1.0 + 2.0  # default backoff 1s, doubling
    retries = result.trace.events("retry", step="ask")
    assert [(e.attempt, e.time, e.data["status"], e.data["delay"]) for e in retries] == [
        (1, 0.0, status, 1.0), (2, 1.0, status, 2.0)
    ]
    label = f"HTTP {status}" if status is not None else "no status"
    assert retries[0].data["error"] == f"provider error ({label}): flaky"
    assert result.trace.events("provider_call")[0].time == 3.0


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_statuses_fail_at_once(status: int) -> None:
    provider = Scripted({"ask": [error(status, "nope"), reply("never")]})
    clock = VirtualClock()

    result = run(ask("hi"), provider, clock=clock)

    step = result.steps["ask"]
    assert step.status == "failed"
    assert step.attempts == 1
    assert step.error == f"provider error (HTTP {status}): nope (not retryable, attempt 1)"
    assert step.error_code == "provider_error"
    assert len(provider.requests) == 1
    assert clock.now() == 0.0
    assert result.trace.events("retry") == []
    assert result.status == "failed" and result.reason == "step_failed"


def test_max_retries_exhausted() -> None:
    provider = Scripted({"ask": [error(429)] * 3})
    clock = VirtualClock()

    result = run(ask("hi", extra="retry: {max_retries: 2, backoff_seconds: 0.5, backoff_multiplier: 3}"),
                 provider, clock=clock)

    step = result.steps["ask"]
    assert step.status == "failed"
    assert step.attempts == 3  # max_retries + 1
    assert step.error == "provider error (HTTP 429) (gave up after 3 attempts: 2 retries)"
    assert clock.now() == 0.5 + 1.5
    assert provider.unused() == {}


def test_backoff_is_capped_by_max_backoff_seconds() -> None:
    provider = Scripted({"ask": [error(500)] * 4 + ["ok"]})
    clock = VirtualClock()

    result = run(ask("hi", extra="retry: {max_retries: 4, backoff_seconds: 2, max_backoff_seconds: 5}"),
                 provider, clock=clock)

    assert result.steps["ask"].attempts == 5
    assert [e.data["delay"] for e in result.trace.events("retry")] == [2.0, 4.0, 5.0, 5.0]
    assert clock.now() == 16.0


def test_max_retries_zero_makes_one_attempt() -> None:
    provider = Scripted({"ask": [error(503)]})

    result = run(ask("hi", extra="retry: {max_retries: 0}"), provider)

    assert result.steps["ask"].attempts == 1
    assert result.steps["ask"].error == "provider error (HTTP 503) (gave up after 1 attempts: 0 retries)"


def test_custom_retryable_status_codes_replace_the_defaults() -> None:
    workflow = ask("hi", extra="retry: {retryable_status_codes: [409]}")

    retried = run(workflow, Scripted({"ask": [error(409), "ok"]}))
    not_retried = run(workflow, Scripted({"ask": [error(429), "ok"]}))

    assert (retried.steps["ask"].status, retried.steps["ask"].attempts) == ("success", 2)
    assert (not_retried.steps["ask"].status, not_retried.steps["ask"].attempts) == ("failed", 1)


def test_config_retry_applies_to_steps_without_their_own() -> None:
    workflow = flow(
        """
        name: llm
        config: {model: gpt-4o, retry: {max_retries: 1, backoff_seconds: 10}}
        steps:
          - {id: plain, type: llm_call, prompt: hi}
          - {id: own, type: llm_call, prompt: hi, retry: {max_retries: 2, backoff_seconds: 1}}
        """
    )
    provider = Scripted({"plain": [error(500), error(500)], "own": [error(500), error(500), "ok"]})

    result = run(workflow, provider)

    assert (result.steps["plain"].status, result.steps["plain"].attempts) == ("failed", 2)
    assert (result.steps["own"].status, result.steps["own"].attempts) == ("success", 3)
    assert [e.data["delay"] for e in result.trace.events("retry", step="plain")] == [10.0]


def test_a_connection_error_from_the_provider_is_retried() -> None:
    answers = iter([ConnectionError("reset by peer"), "ok"])

    def flaky(request: LLMRequest) -> str:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    result = run(ask("hi"), Scripted({"ask": flaky}))

    assert (result.steps["ask"].status, result.steps["ask"].attempts) == ("success", 2)
    assert result.trace.events("retry")[0].data["error"] == "reset by peer"


# --------------------------------------------------------------------------- per-attempt timeout


def slow_then_fast(*durations: float):
    """A scripted callable whose n-th call takes ``durations[n]`` seconds of (virtual) time."""
    remaining = list(durations)

    async def answer(request: LLMRequest) -> str:
        await current_clock().sleep(remaining.pop(0))
        return f"answer {request.attempt}"

    return answer


def test_an_attempt_over_its_timeout_counts_as_an_error_without_status_and_is_retried() -> None:
    clock = VirtualClock()

    result = run(ask("hi", extra="timeout: 5"), Scripted({"ask": slow_then_fast(8, 2)}), clock=clock)

    step = result.steps["ask"]
    assert (step.status, step.attempts, step.output) == ("success", 2, "answer 2")
    [retry] = result.trace.events("retry")
    assert retry.data == {"error": "timed out after 5s", "status": None, "delay": 1.0}
    assert retry.time == 8.0  # under a virtual clock the attempt runs to its end, then counts as timed out
    assert clock.now() == 8 + 1 + 2


def test_an_attempt_within_its_timeout_succeeds() -> None:
    result = run(ask("hi", extra="timeout: 5"), Scripted({"ask": slow_then_fast(5)}))

    assert (result.steps["ask"].status, result.steps["ask"].attempts) == ("success", 1)


def test_every_attempt_timing_out_fails_the_step_with_code_timeout() -> None:
    result = run(
        ask("hi", extra="timeout: 1\nretry: {max_retries: 1}"), Scripted({"ask": slow_then_fast(3, 3)})
    )

    step = result.steps["ask"]
    assert step.status == "failed"
    assert step.attempts == 2
    assert step.error == "timed out after 1s (gave up after 2 attempts: 1 retry)"
    assert step.error_code == "timeout"


# --------------------------------------------------------------------------- a script that runs out


def test_a_script_that_runs_out_fails_at_once_naming_the_step_and_the_count() -> None:
    provider = Scripted({"ask": [error(429)]})

    result = run(ask("hi"), provider)

    step = result.steps["ask"]
    assert step.status == "failed"
    assert step.attempts == 2  # the 429 was retried; the second request found no reply and was not retried
    assert step.error_code == "script_exhausted"
    assert step.error.startswith("Scripted provider has no reply left for step 'ask': 1 reply was scripted")
    assert "How to fix: add another reply to the list for 'ask'." in step.error
    assert len(result.trace.events("retry")) == 1


def test_a_step_missing_from_the_script_fails_and_never_gets_a_default_reply() -> None:
    provider = Scripted({"other": "x"})

    result = run(ask("hi"), provider)

    step = result.steps["ask"]
    assert step.status == "failed"
    assert step.output is None
    assert step.error.startswith("Scripted provider has no replies for step 'ask' (steps with replies: other).")
    assert step.attempts == 1


def test_a_provider_that_raises_a_bug_fails_the_step_not_the_run() -> None:
    """A scripted callable with a bug is reported on its step, with the exception kept as the cause."""
    from pytest_agentloom import Scripted, VirtualClock, run_workflow
    from pytest_agentloom.engine import parse_workflow

    workflow = parse_workflow(
        "name: t\nconfig: {model: gpt-4o}\nsteps:\n"
        "  - {id: ask, type: llm_call, prompt: hi}\n"
        "  - {id: after, type: llm_call, prompt: bye, depends_on: [ask]}\n"
    )

    def buggy(request):
        return {}["missing"]

    result = run_workflow(workflow, provider=Scripted({"ask": buggy}), clock=VirtualClock(), runs_dir=False)

    assert (result.status, result.reason) == ("failed", "step_failed")
    ask = result.steps["ask"]
    assert (ask.status, ask.error_code, ask.attempts) == ("failed", "provider_crashed", 1)
    assert "raised KeyError: 'missing'" in ask.error
    assert result.steps["after"].error == "depends on failed step 'ask'"
