"""The embed step: texts from state paths in, one vector per text out, retried by the llm_call table."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from pytest_agentloom import Scripted, VirtualClock, Workflow, embedding, error, run_workflow
from pytest_agentloom._core.types import EmbedRequest
from pytest_agentloom.engine._format.loader import parse_workflow


def flow(inputs: str, *, extra: str = "", config: str = "{}") -> Workflow:
    return parse_workflow(textwrap.dedent(f"""\
        name: emb
        config: {config}
        state: {{docs: [alpha, beta], question: "why?", count: 3}}
        steps:
          - id: vec
            type: embed
            model: text-embedding-3-small
            inputs: {inputs}
            output: vectors
        """) + "".join(f"    {line}\n" for line in extra.splitlines() if line.strip()))


def run(workflow: Workflow, provider: Any, **kwargs: Any) -> Any:
    return run_workflow(workflow, provider=provider, clock=VirtualClock(), **kwargs)


def failure(result: Any) -> str:
    assert result.failed_step is not None, result.status
    return str(result.steps[result.failed_step].error)


def test_a_list_path_sends_its_texts_in_order_and_writes_one_vector_each() -> None:
    provider = Scripted({"vec": embedding([[0.1, 0.2], [0.3, 0.4]], input_tokens=4)})
    result = run(flow("state.docs"), provider)
    assert result.status.value == "success", result.failed_step
    assert result.state["vectors"] == [[0.1, 0.2], [0.3, 0.4]]
    [call] = provider.calls("vec")
    assert call.texts == ["alpha", "beta"] and call.model == "text-embedding-3-small" and call.messages == []
    event = next(e for e in result.trace.events() if e.kind == "provider_call")
    assert event.data["operation"] == "embed" and event.data["input_tokens"] == 4
    assert event.data["priced"] is True and event.data["cost_usd"] == pytest.approx(4 * 0.02 / 1_000_000)


def test_several_paths_are_concatenated_and_a_single_string_gives_a_list_of_one_vector() -> None:
    provider = Scripted({"vec": embedding([[1.0], [2.0], [3.0]])})
    result = run(flow("[question, state.docs]"), provider)
    assert provider.calls("vec")[0].texts == ["why?", "alpha", "beta"]
    assert result.state["vectors"] == [[1.0], [2.0], [3.0]]
    single = Scripted({"vec": embedding([[0.5, 0.5]])})
    assert run(flow("question"), single).state["vectors"] == [[0.5, 0.5]]


def test_a_missing_path_fails_at_once_naming_it_without_a_call() -> None:
    provider = Scripted({"vec": embedding([[0.0]])})
    result = run(flow("[docs, state.nothing_here]"), provider)
    assert result.status.value == "failed"
    message = failure(result)
    assert "inputs[1]" in message and "'state.nothing_here'" in message and "How to fix" in message
    assert provider.requests == []


def test_a_value_that_is_not_text_fails_naming_it() -> None:
    result = run(flow("count"), Scripted({"vec": embedding([[0.0]])}))
    assert result.status.value == "failed" and "'count' holds int, not text" in failure(result)


def test_a_429_is_retried_with_backoff_and_a_400_is_not() -> None:
    provider = Scripted({"vec": [error(429, "slow down"), embedding([[0.1], [0.2]])]})
    result = run(flow("docs"), provider)
    assert result.status.value == "success" and result.steps["vec"].attempts == 2
    assert [call.attempt for call in provider.calls("vec")] == [1, 2]
    assert [e.data["delay"] for e in result.trace.events() if e.kind == "retry"] == [1.0]
    refused = Scripted({"vec": [error(400, "bad model"), embedding([[0.1], [0.2]])]})
    failed = run(flow("docs"), refused)
    assert failed.status.value == "failed" and "not retryable" in failure(failed) and len(refused.requests) == 1


def test_a_vector_count_that_does_not_match_the_texts_fails() -> None:
    result = run(flow("docs"), Scripted({"vec": embedding([[0.1]])}))
    assert result.status.value == "failed" and "2 texts were sent but 1 vectors came back" in failure(result)


def test_the_model_comes_from_config_embedding_model_never_from_config_model() -> None:
    workflow = parse_workflow(textwrap.dedent("""\
        name: emb
        config: {model: gpt-4o, embedding_model: text-embedding-3-large}
        state: {q: hi}
        steps: [{id: vec, type: embed, inputs: q, output: v}]
        """))
    provider = Scripted({"vec": embedding([[1.0]])})
    assert run(workflow, provider).status.value == "success"
    assert provider.calls("vec")[0].model == "text-embedding-3-large"
    bare = parse_workflow("name: e\nconfig: {model: gpt-4o}\nstate: {q: hi}\n"
                          "steps: [{id: v, type: embed, inputs: q}]\n")
    result = run(bare, Scripted({"v": embedding([[1.0]])}))
    assert result.status.value == "failed" and "config.embedding_model" in failure(result)


def test_a_provider_without_embed_is_refused_clearly() -> None:
    class ChatOnly:
        name = "chat-only"

        async def complete(self, request: Any) -> Any:
            raise AssertionError("not called")

    result = run(flow("docs"), ChatOnly())
    assert result.status.value == "failed"
    assert "provider chat-only cannot embed" in failure(result) and "How to fix" in failure(result)


def test_a_callable_script_sees_the_request_and_runs_are_deterministic() -> None:
    def vectors(request: EmbedRequest) -> Any:
        return embedding([[float(len(text)), float(request.attempt)] for text in request.texts])

    first = run(flow("docs"), Scripted({"vec": vectors}))
    second = run(flow("docs"), Scripted({"vec": vectors}))
    assert first.state["vectors"] == [[5.0, 1.0], [4.0, 1.0]]
    assert first.state == second.state
    assert [(e.kind, e.data) for e in first.trace.events()] == [(e.kind, e.data) for e in second.trace.events()]


def test_a_chat_reply_scripted_for_an_embed_step_is_an_error_naming_the_fix() -> None:
    result = run(flow("docs"), Scripted({"vec": "some text"}))
    assert result.status.value == "failed" and "embedding([[0.1, 0.2]])" in failure(result)


@pytest.mark.parametrize(("inputs", "expected"), [
    ('"{state.docs}"', "inputs are state paths, not templates: write 'state.docs', not '{state.docs}'"),
    ('"docs..x"', "invalid state path 'docs..x'"),
])
def test_inputs_that_are_templates_or_bad_paths_fail_at_load(inputs: str, expected: str) -> None:
    from pytest_agentloom.errors import WorkflowError

    with pytest.raises(WorkflowError) as caught:
        flow(inputs)
    assert expected in str(caught.value) and "step: vec" in str(caught.value) and "field: inputs" in str(caught.value)
