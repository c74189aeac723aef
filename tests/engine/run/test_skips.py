"""Skips after a failure name the nearest failed ancestor, decided in one pass over the graph."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentloom import VirtualClock, run_workflow
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.engine._run.skips import nearest_failed


class CountingGraph(Mapping[str, Sequence[str]]):
    """A dependency graph that counts every lookup of a step's dependencies."""

    def __init__(self, graph: dict[str, list[str]]) -> None:
        self.graph = graph
        self.lookups = 0

    def __getitem__(self, step_id: str) -> list[str]:
        self.lookups += 1
        return self.graph[step_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self.graph)

    def __len__(self) -> int:
        return len(self.graph)


def breadth_first(graph: Mapping[str, Sequence[str]], step_id: str, failed: set[str]) -> str | None:
    """The search the engine did per step before: the first failed step breadth first up the dependencies."""
    seen: set[str] = set()
    todo = list(graph[step_id])
    while todo:
        dep = todo.pop(0)
        if dep in failed:
            return dep
        if dep not in seen:
            seen.add(dep)
            todo.extend(graph[dep])
    return None


def test_a_10000_step_chain_visits_each_step_a_bounded_number_of_times() -> None:
    steps = [f"s{index}" for index in range(10_000)]
    graph = CountingGraph({step: ([steps[index - 1]] if index else []) for index, step in enumerate(steps)})

    nearest = nearest_failed(graph, steps[1:], {"s0"})

    assert all(nearest[step] == (index, "s0") for index, step in enumerate(steps) if index)
    assert graph.lookups <= 3 * len(steps)  # a search per step looked up 50,000,000


@st.composite
def dags(draw: st.DrawFn) -> tuple[dict[str, list[str]], set[str]]:
    """A graph of up to 12 steps, each depending on some earlier ones (in any order), some of them failed."""
    size = draw(st.integers(1, 12))
    graph: dict[str, list[str]] = {}
    for index in range(size):
        earlier = [f"s{other}" for other in range(index)]
        deps = draw(st.lists(st.sampled_from(earlier), unique=True, max_size=4)) if earlier else []
        graph[f"s{index}"] = deps
    failed = set(draw(st.lists(st.sampled_from(sorted(graph)), unique=True, max_size=3)))
    return graph, failed


@settings(max_examples=300, deadline=None)
@given(dags())
def test_the_nearest_failed_ancestor_is_the_one_a_breadth_first_search_finds(
        case: tuple[dict[str, list[str]], set[str]]) -> None:
    graph, failed = case
    pending = [step for step in graph if step not in failed]

    nearest = nearest_failed(graph, pending, failed)

    for step in pending:
        found = nearest[step]
        assert (found[1] if found else None) == breadth_first(graph, step, failed)


def test_a_10000_step_chain_whose_first_step_fails_skips_every_other_step_naming_it() -> None:
    lines = ["name: long-chain", "steps:", "  - {id: s0, type: tool, tool_name: boom}"]
    lines += [f"  - {{id: s{index}, type: tool, tool_name: ok, depends_on: [s{index - 1}]}}"
              for index in range(1, 10_000)]
    workflow = parse_workflow("\n".join(lines) + "\n")

    def boom() -> None:
        raise ValueError("broken")

    result = run_workflow(workflow, tools={"boom": boom, "ok": lambda: 1}, clock=VirtualClock())

    assert result.failed_step == "s0"
    skipped = [step for step in result.steps.values() if step.step_id != "s0"]
    assert len(skipped) == 9_999
    assert {(step.status.value, step.error_code, step.error) for step in skipped} == {
        ("skipped", "dependency_failed", "depends on failed step 's0'")}
