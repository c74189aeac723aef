"""The layer loop without a state copy per layer, and the ready set that replaced the scan of pending steps.

Two kinds of checks. Isolation: each step of a layer reads the state as the layer
started, even though the steps now read the run's own state (no snapshot), and
nothing a step or a tool is handed, returns or keeps can change the state behind
the run's back. Scheduling: on random graphs with routers, the layers, the skips
and their order are exactly those of the old algorithm (scan every pending step in
file order, re-scan after each skip), written out again here as the reference.
"""

from __future__ import annotations

import asyncio
import json
import random
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_agentloom import Scripted, VirtualClock, Workflow, WorkflowResult, resume_workflow, run_workflow
from pytest_agentloom._core.clock import derived_run_id
from pytest_agentloom._core.plain import to_plain
from pytest_agentloom.engine._entry.run_workflow import state_json
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.engine._run import loop as run_module
from pytest_agentloom.engine._run.dispatch import STEP_RUNNERS


def flow(text: str) -> Workflow:
    return parse_workflow(textwrap.dedent(text))


def statuses(result: WorkflowResult) -> dict[str, str]:
    return {step_id: step.status.value for step_id, step in result.steps.items()}


# --------------------------------------------------------------------------- isolation


SIBLINGS = """
name: siblings
state: {items: [1, 2, 3], config: {mode: safe}}
steps:
  - {id: vandal, type: tool, tool_name: vandal, tool_args: {items: state.items, config: state.config}}
  - {id: reader, type: tool, tool_name: reader, tool_args: {items: state.items, config: state.config}}
  - {id: after, type: tool, tool_name: reader, tool_args: {items: state.items, config: state.config},
     depends_on: [vandal, reader]}
"""


@pytest.mark.parametrize("vandal_yields", [0, 3], ids=["vandal-first", "reader-first"])
def test_a_step_that_mutates_what_it_was_handed_cannot_reach_a_sibling_or_the_state(vandal_yields: int) -> None:
    async def vandal(items: list[int], config: dict[str, str]) -> str:
        for _ in range(vandal_yields):
            await asyncio.sleep(0)
        items.append(99)
        items[0] = -1
        config["mode"] = "broken"
        return "done"

    async def reader(items: list[int], config: dict[str, str]) -> dict[str, Any]:
        for _ in range(3 - vandal_yields):
            await asyncio.sleep(0)
        return {"items": list(items), "mode": config["mode"]}

    result = run_workflow(flow(SIBLINGS), tools={"vandal": vandal, "reader": reader}, clock=VirtualClock(),
                          runs_dir=False)

    assert result.ok
    assert result.steps["reader"].output == {"items": [1, 2, 3], "mode": "safe"}
    assert result.steps["after"].output == {"items": [1, 2, 3], "mode": "safe"}
    assert result.state["items"] == [1, 2, 3] and result.state["config"] == {"mode": "safe"}


def test_a_value_a_tool_returns_and_keeps_is_copied_into_the_state() -> None:
    kept: list[Any] = []

    def make() -> dict[str, Any]:
        value = {"rows": [1, 2]}
        kept.append(value)
        return value

    workflow = flow(
        """
        name: keeps
        steps:
          - {id: make, type: tool, tool_name: make, output: table}
          - {id: extend, type: tool, tool_name: extend, output: table.extra, depends_on: [make]}
        """
    )
    result = run_workflow(workflow, tools={"make": make, "extend": lambda: "more"}, clock=VirtualClock(),
                          runs_dir=False)
    kept[0]["rows"].append(3)  # the tool changes what it returned, after the run

    assert result.state["table"] == {"rows": [1, 2], "extra": "more"}
    # steps.<id>.output has its own copy: the later write into 'table' does not show there
    assert result.state["steps"]["make"]["output"] == {"rows": [1, 2]}
    assert result.steps["make"].output == {"rows": [1, 2, 3]}  # the result keeps the tool's own object
    assert result.unredacted_state is not None and result.unredacted_state["table"]["rows"] == [1, 2]


def test_a_step_cannot_write_to_the_top_level_of_the_state_it_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    captured: list[Any] = []

    def spying(runner: Any) -> Any:
        async def spy(step: Any, ctx: Any) -> Any:
            captured.append(ctx.state)
            return await runner(step, ctx)
        return spy

    monkeypatch.setattr(run_module, "STEP_RUNNERS", {kind: spying(runner) for kind, runner in STEP_RUNNERS.items()})
    workflow = flow(
        """
        name: read-only
        config: {model: gpt-4o}
        state: {topic: tides}
        steps:
          - {id: ask, type: llm_call, prompt: "About {state.topic}", output: answer}
        """
    )

    result = run_workflow(workflow, provider=Scripted({"ask": "fine"}), clock=VirtualClock(), runs_dir=False)

    assert result.state["answer"] == "fine"
    assert captured[0]["topic"] == "tides"
    with pytest.raises(TypeError):
        captured[0]["topic"] = "changed"


def test_a_subworkflow_child_cannot_change_the_parents_state_through_its_input(tmp_path: Path) -> None:
    (tmp_path / "child.yaml").write_text(textwrap.dedent(
        """
        name: child
        state: {}
        steps:
          - {id: poke, type: tool, tool_name: poke, tool_args: {}, output: "items[0]"}
        """))
    (tmp_path / "parent.yaml").write_text(textwrap.dedent(
        """
        name: parent
        state: {items: [1, 2]}
        steps:
          - {id: sub, type: subworkflow, workflow: child.yaml, input: {items: state.items}, output: child}
          - {id: twin, type: tool, tool_name: grow, tool_args: {items: state.items}, output: twin}
        """))
    tools = {"grow": lambda items: [*items, 3], "poke": lambda: "poked"}

    result = run_workflow(tmp_path / "parent.yaml", tools=tools, clock=VirtualClock(), runs_dir=False)

    assert result.ok, {k: v.error for k, v in result.steps.items() if v.error}
    assert result.state["items"] == [1, 2]
    assert result.state["child"]["items"] == ["poked", 2]  # written in place into the child's own copy
    assert result.state["twin"] == [1, 2, 3]


def test_identical_runs_give_identical_bytes_with_routers_subworkflows_and_siblings(tmp_path: Path) -> None:
    (tmp_path / "child.yaml").write_text(textwrap.dedent(
        """
        name: child
        config: {model: gpt-4o}
        steps:
          - {id: pick, type: router, conditions: [{expression: "len(seed) > 2", target: long}], default: short}
          - {id: long, type: llm_call, prompt: "Long {state.seed}", output: out}
          - {id: short, type: llm_call, prompt: "Short {state.seed}", output: out}
        """))
    (tmp_path / "parent.yaml").write_text(textwrap.dedent(
        """
        name: parent
        config: {model: gpt-4o}
        state: {seed: abc}
        steps:
          - {id: a, type: llm_call, prompt: "A {state.seed}", output: a}
          - {id: b, type: tool, tool_name: slow, tool_args: {x: state.seed}, output: b}
          - {id: sub, type: subworkflow, workflow: child.yaml, input: {seed: state.seed}, output: child}
          - {id: join, type: llm_call, prompt: "{state.a} {state.b} {state.child.out}", depends_on: [a, b, sub]}
        """))

    def once(yields: int) -> str:
        async def slow(x: str) -> str:
            for _ in range(yields):
                await asyncio.sleep(0)
            return x.upper()

        provider = Scripted({"a": "from a", "sub/long": "long one", "sub/short": "short one", "join": "joined"})
        return run_workflow(tmp_path / "parent.yaml", provider=provider, tools={"slow": slow},
                            clock=VirtualClock(), runs_dir=False).to_json()

    assert once(0) == once(7) == once(0)


# --------------------------------------------------------------------------- scheduling against the old scan


def reference_schedule(spec: dict[str, Any], choices: dict[str, str]) -> tuple[list[list[str]], list[str]]:
    """Layers and skips as the engine decided them before the ready set: a fresh scan after every skip.

    Every step succeeds; a router chooses ``choices[router]``.
    """
    order = [step["id"] for step in spec["steps"]]
    graph = {step["id"]: list(dict.fromkeys(step.get("depends_on", []))) for step in spec["steps"]}
    routers_of: dict[str, list[str]] = {}
    for step in spec["steps"]:
        if step["type"] == "router":
            for target in router_targets(step):
                routers_of.setdefault(target, []).append(step["id"])
                if step["id"] not in graph[target]:
                    graph[target].append(step["id"])
    results: dict[str, str] = {}  # step id -> "success" | "skipped"
    layers: list[list[str]] = []
    skips: list[str] = []

    def skip(step_id: str) -> None:
        results[step_id] = "skipped"
        skips.append(step_id)

    def skip_if_unchosen(step_id: str) -> bool:
        passed_over = False
        for router in routers_of.get(step_id, ()):
            if router not in results:
                return False
            if results[router] == "success":
                if choices[router] == step_id:
                    return False
                passed_over = True
        if passed_over:
            skip(step_id)
        return passed_over

    def next_layer(pending: list[str]) -> list[str]:
        layer = []
        for step_id in pending:
            deps = graph[step_id]
            if not all(dep in results for dep in deps):
                continue
            if skip_if_unchosen(step_id):
                return []
            if deps and all(results[dep] == "skipped" for dep in deps):
                skip(step_id)
                return []
            layer.append(step_id)
        return layer

    while pending := [step_id for step_id in order if step_id not in results]:
        layer = next_layer(pending)
        if not layer:
            continue
        layers.append(layer)
        for step_id in layer:
            results[step_id] = "success"
            step = spec["steps"][order.index(step_id)]
            if step["type"] == "router":
                for target in router_targets(step):
                    if target != choices[step_id] and target not in results:
                        skip_if_unchosen(target)
    return layers, skips


def router_targets(step: dict[str, Any]) -> list[str]:
    return [condition["target"] for condition in step["conditions"]] + [step["default"]]


def random_workflow(seed: int) -> tuple[dict[str, Any], dict[str, str]]:
    """A random graph: dependencies on earlier steps of a hidden order, routers, file order shuffled."""
    rng = random.Random(seed)
    size = rng.randint(2, 14)
    ids = [f"s{index}" for index in range(size)]
    steps: list[dict[str, Any]] = []
    choices: dict[str, str] = {}
    for index, step_id in enumerate(ids):
        earlier = ids[:index]
        deps = rng.sample(earlier, k=rng.randint(0, min(3, len(earlier))))
        later = ids[index + 1:]
        if len(later) >= 2 and rng.random() < 0.3:
            first, second = rng.sample(later, k=2)
            pick = rng.choice([first, second])
            choices[step_id] = pick
            steps.append({"id": step_id, "type": "router", "depends_on": deps,
                          "conditions": [{"expression": f"'{pick}' == '{first}'", "target": first}],
                          "default": second})
        else:
            steps.append({"id": step_id, "type": "tool", "tool_name": "noop", "depends_on": deps})
    rng.shuffle(steps)  # the file order is not the order of the graph
    return {"name": f"random-{seed}", "steps": steps}, choices


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=10**6))
@example(1127)  # a skip makes a step ready that comes before one already in the layer
def test_layers_and_skips_match_the_old_scan_on_random_graphs_with_routers(seed: int) -> None:
    spec, choices = random_workflow(seed)
    expected_layers, expected_skips = reference_schedule(spec, choices)

    result = run_workflow(parse_workflow(yaml.safe_dump(spec)), tools={"noop": lambda: "ok"}, clock=VirtualClock(),
                          runs_dir=False)

    assert [event.data["steps"] for event in result.trace.events("layer_start")] == expected_layers
    assert [event.step_id for event in result.trace.events("step_skip")] == expected_skips
    assert sorted(result.steps) == sorted(step["id"] for step in spec["steps"])


def test_a_router_passing_over_a_branch_skips_its_descendants_and_runs_the_join() -> None:
    workflow = flow(
        """
        name: branches
        state: {kind: bug}
        steps:
          - {id: join, type: tool, tool_name: noop, depends_on: [fix_done, doc_done]}
          - {id: doc_done, type: tool, tool_name: noop, depends_on: [doc]}
          - {id: fix_done, type: tool, tool_name: noop, depends_on: [fix]}
          - {id: route, type: router, conditions: [{expression: "kind == 'bug'", target: fix}], default: doc}
          - {id: fix, type: tool, tool_name: noop}
          - {id: doc, type: tool, tool_name: noop}
        """
    )
    result = run_workflow(workflow, tools={"noop": lambda: "ok"}, clock=VirtualClock(), runs_dir=False)

    assert statuses(result) == {"join": "success", "doc_done": "skipped", "fix_done": "success", "route": "success",
                                "fix": "success", "doc": "skipped"}
    assert [e.data["steps"] for e in result.trace.events("layer_start")] == [["route"], ["fix"], ["fix_done"],
                                                                             ["join"]]
    assert [e.step_id for e in result.trace.events("step_skip")] == ["doc", "doc_done"]


def test_a_run_resumed_after_a_pause_runs_each_remaining_step_once_in_its_layer(tmp_path: Path) -> None:
    workflow_path = tmp_path / "gate.yaml"
    workflow_path.write_text(textwrap.dedent(
        """
        name: gated
        steps:
          - {id: prepare, type: tool, tool_name: noop}
          - {id: side, type: tool, tool_name: noop}
          - {id: gate, type: approval_gate, message: "Go?", depends_on: [prepare], output: decision}
          - {id: route, type: router, depends_on: [gate],
             conditions: [{expression: "decision == 'approved'", target: ship}], default: stop}
          - {id: ship, type: tool, tool_name: noop}
          - {id: stop, type: tool, tool_name: noop}
          - {id: after_side, type: tool, tool_name: noop, depends_on: [side]}
          - {id: done, type: tool, tool_name: noop, depends_on: [ship, stop, after_side]}
        """))
    tools = {"noop": lambda: "ok"}
    options: dict[str, Any] = {"tools": tools, "runs_dir": tmp_path / "runs", "redaction_salt": b"s",
                               "wall_clock": lambda: 1_700_000_000.0}

    paused = run_workflow(workflow_path, clock=VirtualClock(), **options)
    assert paused.status.value == "paused"
    assert [e.data["steps"] for e in paused.trace.events("layer_start")] == [["prepare", "side"],
                                                                             ["gate", "after_side"]]

    finished = resume_workflow(paused, decision="approved", clock=VirtualClock(), **options)

    assert finished.status.value == "success", statuses(finished)
    layers = [e.data["steps"] for e in finished.trace.events("layer_start")]
    assert layers == [["gate"], ["route"], ["ship"], ["done"]]
    assert [e.step_id for e in finished.trace.events("step_skip")] == ["stop"]
    started = [e.step_id for e in finished.trace.events("step_start")]
    assert len(started) == len(set(started))


# --------------------------------------------------------------------------- the derived run id's fast path


@pytest.mark.parametrize("overrides", [{}, {"topic": "new"}, {"added": {"b": [1, 2.5, None], "a": "é"}},
                                       {"nested": {"z": 1, "a": {"y": True}}}, {"weird": float("nan")}])
def test_the_initial_state_json_is_what_encoding_the_whole_state_gives(overrides: dict[str, Any]) -> None:
    workflow = flow(
        """
        name: ids
        state: {topic: tides, nested: {b: 2, a: [3, {d: 1, c: 0}]}, "with space": 1, Zed: null}
        steps:
          - {id: a, type: tool, tool_name: noop}
        """
    )
    whole = json.dumps(to_plain({**workflow.state, **overrides}), sort_keys=True)

    assert state_json(workflow, overrides) == whole
    assert state_json(workflow, overrides) == whole  # again, from the memo
    first = run_workflow(workflow, state=overrides, tools={"noop": lambda: "ok"}, clock=VirtualClock(),
                         runs_dir=False)
    assert first.run_id == derived_run_id(
        json.dumps(workflow.model_dump(mode="json"), sort_keys=True, default=str), whole)
