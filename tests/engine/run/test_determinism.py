"""Same inputs, same bytes: to_json() and the trace never depend on timing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from pytest_agentloom import Scripted, VirtualClock, Workflow, error, reply, run_workflow
from pytest_agentloom._core.clock import current_clock
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.engine._outcome.trace import EVENT_KINDS

WIDTH = 20


def fan_out() -> Workflow:
    """A prompt step, 20 parallel branches (llm_call and async tools alternating), a join, a router."""
    lines = [
        "name: fan-out",
        "config: {model: gpt-4o-mini, retry: {max_retries: 2, backoff_seconds: 0.5}}",
        "state: {topic: tides, items: [1, 2, 3]}",
        "steps:",
        "  - {id: plan, type: llm_call, prompt: 'Plan {state.topic} {state.missing}', output: plan}",
    ]
    branches = []
    for index in range(WIDTH):
        step_id = f"b{index:02d}"
        branches.append(step_id)
        if index % 2:
            lines.append(
                f"  - {{id: {step_id}, type: tool, tool_name: work, depends_on: [plan],"
                f" tool_args: {{n: {index}, plan: state.plan, items: state.items}}, output: 'results.{step_id}'}}"
            )
        else:
            lines.append(
                f"  - {{id: {step_id}, type: llm_call, depends_on: [plan],"
                f" prompt: 'Part {index} of {{state.plan}}', output: 'results.{step_id}'}}"
            )
    lines.append(f"  - {{id: join, type: tool, tool_name: join, depends_on: [{', '.join(branches)}],"
                 " tool_args: {results: state.results}, output: summary}")
    lines.append("  - {id: route, type: router, depends_on: [join],"
                 " conditions: [{expression: \"summary.count > 10\", target: big}], default: small}")
    lines.append("  - {id: big, type: tool, tool_name: join, tool_args: {results: state.summary}}")
    lines.append("  - {id: small, type: tool, tool_name: join, tool_args: {results: state.summary}}")
    return parse_workflow("\n".join(lines) + "\n")


def script() -> Scripted:
    """Replies for the fan-out: some branches fail with retryable errors first."""
    replies: dict[str, Any] = {"plan": reply("the plan", input_tokens=50, output_tokens=20)}
    for index in range(0, WIDTH, 2):
        step_id = f"b{index:02d}"
        answer = reply(f"part {index}", input_tokens=10 * index, output_tokens=index)
        if index % 4 == 0:
            replies[step_id] = [error(429, "slow down"), error(None, "reset"), answer]
        elif index % 3 == 0:
            replies[step_id] = [error(503), answer]
        else:
            replies[step_id] = answer
    return Scripted(replies)


def tools(order: Callable[[int], int]) -> dict[str, Any]:
    """Async tools whose n-th call yields ``order(n)`` times, so they finish in an order set by the test."""

    async def work(n: int, plan: str, items: list[int]) -> dict[str, Any]:
        for _ in range(order(n)):
            await asyncio.sleep(0)
        await current_clock().sleep(n / 10)
        return {"n": n, "plan": plan, "sum": sum(items)}

    def join(results: Any) -> dict[str, Any]:
        return {"count": len(results), "keys": sorted(results)} if isinstance(results, dict) else {"count": 0}

    return {"work": work, "join": join}


def run_fan_out(order: Callable[[int], int]):
    finished: list[int] = []
    registry = tools(order)
    inner = registry["work"]

    async def work(**kwargs: Any) -> Any:
        value = await inner(**kwargs)
        finished.append(kwargs["n"])
        return value

    registry["work"] = work
    result = run_workflow(fan_out(), provider=script(), tools=registry, clock=VirtualClock(), state={"extra": 1})
    return result, finished


def test_fan_out_with_retries_and_async_tools_is_byte_identical_whatever_the_finishing_order() -> None:
    first, first_order = run_fan_out(lambda n: n)
    second, second_order = run_fan_out(lambda n: WIDTH - n)

    assert first_order != second_order  # the tools really finished in different orders
    assert first_order == sorted(first_order) and second_order == sorted(second_order, reverse=True)
    assert first.status == "success", {k: v.error for k, v in first.steps.items() if v.error}
    assert first.to_json() == second.to_json()
    assert first.to_json(indent=2) == second.to_json(indent=2)
    assert first.state["summary"] == {"count": WIDTH, "keys": [f"b{i:02d}" for i in range(WIDTH)]}
    assert first.steps["b00"].attempts == 3 and first.steps["b06"].attempts == 2
    assert first.steps["big"].status == "success" and first.steps["small"].status == "skipped"


def test_to_json_is_canonical_json() -> None:
    result, _ = run_fan_out(lambda n: 0)

    text = result.to_json()
    data = json.loads(text)

    assert text == json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert set(data) == {"workflow", "run_id", "status", "reason", "failed_step", "state", "steps", "usage",
                         "cost_usd", "trace"}
    assert list(data["steps"]) == sorted(data["steps"])
    assert data["cost_usd"] == result.cost_usd


def test_the_trace_has_one_event_per_decision_in_a_stable_order() -> None:
    result, _ = run_fan_out(lambda n: n % 3)

    kinds = [event.kind for event in result.trace]
    issue_kinds = {"run_start", "layer_start", "step_start", "provider_call", "retry", "tool_call", "router_choice",
                   "template_warning", "state_write", "step_skip", "step_end", "run_end"}
    assert issue_kinds <= set(EVENT_KINDS)
    assert set(kinds) == issue_kinds
    assert kinds[0] == "run_start" and kinds[-1] == "run_end"
    assert [event.seq for event in result.trace] == list(range(1, len(kinds) + 1))
    times = [event.time for event in result.trace if event.kind == "layer_start"]
    assert times == sorted(times)
    # per step: start, then its calls and retries, then its writes, then its end
    for step_id in ("plan", "b00", "b01", "join"):
        own = [event.kind for event in result.trace.events(step=step_id)]
        assert own[0] == "step_start" and own[-1] == "step_end"
        assert own.index("state_write") > max(i for i, k in enumerate(own) if k in ("provider_call", "tool_call"))
    retries = result.trace.events("retry", step="b00")
    assert [(e.attempt, e.data["status"], e.data["delay"]) for e in retries] == [(1, 429, 0.5), (2, None, 1.0)]
    [call] = result.trace.events("provider_call", step="b00")
    assert (call.attempt, call.time) == (3, 1.5)
    assert call.data["model"] == "gpt-4o-mini" and call.data["finish_reason"] == "stop"
    assert result.trace.events("template_warning")[0].data["field"] == "state.missing"
    assert [e.step_id for e in result.trace.events("router_choice")] == ["route"]
    assert [e.step_id for e in result.trace.events("step_skip")] == ["small"]


def test_the_trace_reads_as_lines() -> None:
    result, _ = run_fan_out(lambda n: 0)

    lines = result.trace.lines().splitlines()

    assert lines[0].startswith("[  1] t=0 run_start workflow='fan-out'")
    assert lines[-1].endswith("run_end status='success' reason='completed'")


def test_a_chain_gives_the_same_bytes_every_time() -> None:
    text = "name: chain\nconfig: {model: gpt-4o}\nsteps:\n" + "".join(
        f"  - {{id: s{i}, type: llm_call, prompt: 'Step {i}: {{state.steps.s{i - 1}.output}}',"
        f" depends_on: [s{i - 1}]}}\n" if i else "  - {id: s0, type: llm_call, prompt: 'Start'}\n"
        for i in range(10)
    )
    workflow = parse_workflow(text)

    def once() -> str:
        provider = Scripted({f"s{i}": reply(f"out {i}", input_tokens=i, output_tokens=1) for i in range(10)})
        return run_workflow(workflow, provider=provider, clock=VirtualClock()).to_json()

    assert once() == once()
