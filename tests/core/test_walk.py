"""post_order: every node once, after what it reaches, without recursion, through loops."""

from __future__ import annotations

from pytest_agentloom._core.walk import post_order


def test_children_come_before_their_parents_whatever_the_order_of_the_edges() -> None:
    graph = {"a": ["c", "b"], "b": ["c"], "c": []}
    assert list(post_order(graph, graph.__getitem__, key=str)) == ["c", "b", "a"]


def test_a_chain_longer_than_the_recursion_limit() -> None:
    graph = {i: [i + 1] for i in range(5000)} | {5000: []}
    assert next(iter(post_order([0], graph.__getitem__, key=int))) == 5000


def test_a_loop_ends_the_walk() -> None:
    graph = {"a": ["b"], "b": ["a"]}
    assert list(post_order(graph, graph.__getitem__, key=str)) == ["b", "a"]


def test_the_same_object_is_one_node() -> None:
    inner = [1]
    outer = [inner, inner, [inner]]
    seen = list(post_order([outer], lambda item: [c for c in item if isinstance(c, list)]))
    assert [id(item) for item in seen].count(id(inner)) == 1 and seen[-1] is outer
