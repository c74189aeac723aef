"""The ``fallback`` of a step and ``config.fallbacks``: what loads, and the load errors (file:line, closest name)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentloom.engine._calls.fallback import failure_kind
from pytest_agentloom.engine._format.fallbacks import fallbacks_of
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.errors import MidStreamError, ProviderConfigError, ProviderError, WorkflowError

STEP = """\
name: triage
steps:
  - id: classify
    type: llm_call
    model: claude-haiku-4-5
    prompt: "Label it"
    fallback:
      - provider: {provider}
        model: gpt-4o-mini
        on: {on}
"""


def load(text: str):
    return parse_workflow(text, source=Path("flow.yaml"))


def problem(text: str) -> str:
    with pytest.raises(WorkflowError) as caught:
        load(text)
    return str(caught.value)


def test_a_bare_on_key_is_the_list_of_kinds_not_yaml_true():
    workflow = load(STEP.format(provider="openai", on="[overloaded, rate_limit]"))
    [target] = workflow.step("classify").fallback
    assert (target.provider, target.model, target.on) == ("openai", "gpt-4o-mini", ["overloaded", "rate_limit"])


def test_one_kind_may_be_written_alone_and_none_means_all():
    assert load(STEP.format(provider="openai", on="timeout")).step("classify").fallback[0].on == ["timeout"]
    text = STEP.replace("        on: {on}\n", "").format(provider="openai")
    assert load(text).step("classify").fallback[0].on == [
        "rate_limit", "overloaded", "server_error", "timeout", "connection"]


def test_an_unknown_provider_names_the_line_and_the_closest():
    text = problem(STEP.format(provider="opnai", on="[overloaded]"))
    assert "fallback[0] names provider 'opnai', which is not a provider" in text
    assert "file: flow.yaml:8" in text and "step: classify" in text and "field: fallback[0].provider" in text
    assert "did you mean 'openai'?" in text


def test_an_unknown_kind_names_the_line_and_the_closest():
    text = problem(STEP.format(provider="openai", on="[overload]"))
    assert "fallback[0].on lists 'overload', which is no kind of failure a call falls back on" in text
    assert "file: flow.yaml:10" in text and "did you mean 'overloaded'?" in text


def test_a_fallback_needs_its_own_model():
    text = problem(STEP.replace("        model: gpt-4o-mini\n", "").format(provider="openai", on="[overloaded]"))
    assert "Missing required key 'model'" in text and "field: fallback[0].model" in text


def test_config_fallbacks_are_keyed_by_provider():
    text = problem("name: x\nconfig:\n  fallbacks:\n    antropic: [{provider: openai, model: gpt-4o-mini}]\n"
                   "steps:\n  - {id: a, type: llm_call, model: claude-haiku-4-5, prompt: hi}\n")
    assert "config.fallbacks names provider 'antropic'" in text and "did you mean 'anthropic'?" in text
    assert "file: flow.yaml:4" in text


def test_config_fallbacks_reach_the_steps_of_their_provider_only():
    workflow = load("name: x\nconfig:\n  fallbacks:\n    anthropic: [{provider: openai, model: gpt-4o-mini}]\n"
                    "steps:\n  - {id: a, type: llm_call, model: claude-haiku-4-5, prompt: hi}\n"
                    "  - {id: b, type: llm_call, model: gpt-4o, prompt: hi}\n"
                    "  - {id: c, type: llm_call, model: claude-haiku-4-5, prompt: hi, fallback: []}\n")
    config = workflow.config
    assert [t.provider for t in fallbacks_of(workflow.step("a"), config, "claude-haiku-4-5")] == ["openai"]
    assert list(fallbacks_of(workflow.step("b"), config, "gpt-4o")) == []
    assert list(fallbacks_of(workflow.step("c"), config, "claude-haiku-4-5")) == []


@pytest.mark.parametrize("config", [
    "provider: [anthropic, openai]", "routes: {'claude*': [anthropic, openai]}",
    "providers: {anthropic: {fallback: openai}}",
])
def test_other_tools_ways_of_writing_a_chain_say_how_to_write_it_here(config):
    text = problem(f"name: x\nconfig: {{{config}}}\nsteps:\n  - {{id: a, type: llm_call, model: m, prompt: hi}}\n")
    assert "write the chain as config.fallbacks" in text


@pytest.mark.parametrize(("error", "kind"), [
    (ProviderError("overloaded_error: Overloaded", status=529), "overloaded"),
    (ProviderError("overloaded_error: Overloaded", status=503), "overloaded"),
    (ProviderError("slow down", status=429), "rate_limit"),
    (ProviderError("boom", status=500), "server_error"),
    (ProviderError("request timed out"), "timeout"),
    (ProviderError("connection failed"), "connection"),
    (ProviderError("bad request", status=400), None),
    (ProviderConfigError("no OPENAI_API_KEY"), None),
    (MidStreamError("the stream broke", status=None), None),
    (ValueError("not a provider's"), None),
])
def test_which_failures_a_fallback_may_take(error, kind):
    assert failure_kind(error) == kind


# -- a fallback gets the step's request with its own provider and model: the fields must fit it too -----------

def test_a_prefill_refused_by_the_fallbacks_provider_is_a_load_error_naming_the_fallback():
    text = problem(STEP.format(provider="openai", on="[overloaded]")
                   .replace('    prompt: "Label it"\n', '    prompt: "Label it"\n    prefill: "{"\n'))
    assert ("llm_call 'classify' (its fallback[0]: provider 'openai', model 'gpt-4o-mini') sets prefill, "
            "which provider 'openai' has no field for") in text
    assert "field: prefill" in text and "drop that fallback" in text


def test_a_stop_list_refused_by_a_config_fallback_on_the_responses_api_is_a_load_error():
    text = problem("name: x\nconfig:\n  providers: {openai: {api: responses}}\n"
                   "  fallbacks:\n    anthropic: [{provider: openai, model: gpt-4o-mini}]\n"
                   "steps:\n  - {id: a, type: llm_call, model: claude-haiku-4-5, prompt: hi, stop: [END]}\n")
    assert "(its config.fallbacks.anthropic[0]: provider 'openai', model 'gpt-4o-mini') sets stop" in text
    assert "which OpenAI's Responses API has no field for" in text


def test_thinking_without_a_budget_is_refused_when_the_fallback_is_claude():
    text = problem("name: x\nsteps:\n  - id: a\n    type: llm_call\n    model: gpt-5\n    prompt: hi\n"
                   "    thinking: {enabled: true, level: high}\n"
                   "    fallback: [{provider: anthropic, model: claude-sonnet-4-5}]\n")
    assert ("llm_call 'a' (its fallback[0]: provider 'anthropic', model 'claude-sonnet-4-5') enables thinking "
            "on Claude model 'claude-sonnet-4-5' without 'budget_tokens'") in text


def test_an_agents_thinking_budget_is_checked_against_its_fallback():
    text = problem("name: x\nagents:\n  helper:\n    model: gpt-5\n    thinking: {enabled: true, budget_tokens: 100}\n"
                   "steps:\n  - {id: a, type: agent, agent: helper, prompt: help,"
                   " fallback: [{provider: anthropic, model: claude-sonnet-4-5}]}\n")
    assert "agent step 'a' (its fallback[0]: provider 'anthropic', model 'claude-sonnet-4-5') sets a thinking " \
           "budget of 100 tokens" in text


def test_fields_every_fallback_takes_load():
    workflow = load(STEP.replace('    prompt: "Label it"\n', '    prompt: "Label it"\n    stop: [END]\n')
                    .format(provider="openai", on="[overloaded]"))
    assert workflow.step("classify").stop == ["END"]
