"""The trace keeps appended events as tuples and makes TraceEvent objects when it is read."""

from __future__ import annotations

from pytest_agentloom.engine._outcome.trace import Trace, TraceEvent


def test_events_are_numbered_in_order_however_often_the_trace_is_read() -> None:
    trace = Trace()
    trace.append(0.0, "run_start", workflow="w")
    trace.append(0.1234567, "step_start", "a", type="llm_call")
    assert len(trace) == 2
    first_read = list(trace)
    trace.merge([(5.5, "provider_call", "a", 1, {"model": "m"}), (6.0, "retry", "a", 2, {})], start=5.0)
    trace.append(2.0, "run_end", status="success")

    assert list(trace)[:2] == first_read
    assert [(e.seq, e.time, e.kind, e.step_id, e.attempt, e.data) for e in trace] == [
        (1, 0.0, "run_start", None, None, {"workflow": "w"}),
        (2, 0.123457, "step_start", "a", None, {"type": "llm_call"}),
        (3, 0.5, "provider_call", "a", 1, {"model": "m"}),
        (4, 1.0, "retry", "a", 2, {}),
        (5, 2.0, "run_end", None, None, {"status": "success"}),
    ]
    assert len(trace) == 5 and trace[-1].kind == "run_end"


def test_a_trace_equals_one_built_from_its_events() -> None:
    trace = Trace()
    trace.append(1.0, "layer_start", layer=1, steps=["a"])
    rebuilt = Trace([TraceEvent(1, 1.0, "layer_start", None, None, {"layer": 1, "steps": ["a"]})])

    assert trace == rebuilt
    assert trace.to_list() == rebuilt.to_list()
    assert trace.events("layer_start") == list(rebuilt)


def test_appends_and_merged_buffers_keep_their_order_and_numbering_across_reads() -> None:
    trace = Trace()
    trace.merge([], start=1.0)
    assert len(trace) == 0 and list(trace) == []
    trace.append(0.5, "layer_start", layer=1)
    trace.merge([(2.0000004, "step_start", "a", None, {})], start=1.0)  # 1.0000004 s into the run
    trace.append(1.5, "state_write", "a", path="x")
    assert len(trace) == 3
    assert [(e.seq, e.time, e.kind) for e in trace] == [(1, 0.5, "layer_start"), (2, 1.0, "step_start"),
                                                       (3, 1.5, "state_write")]
    trace.merge([(3.25, "step_end", "a", 1, {"status": "success"})], start=1.0)
    trace.append(2.5, "run_end")
    assert len(trace) == 5
    assert [(e.seq, e.time, e.kind) for e in trace][3:] == [(4, 2.25, "step_end"), (5, 2.5, "run_end")]
    assert trace[3].data == {"status": "success"} and trace.step_ids() == ["a"]


def test_merge_takes_any_iterable_of_buffered_events() -> None:
    trace = Trace()
    trace.merge(iter([(1.5, "step_start", "a", None, {})]), start=1.0)
    assert len(trace) == 1 and [(e.time, e.kind) for e in trace] == [(0.5, "step_start")]


def test_asking_for_one_kind_or_the_steps_that_ran_gives_the_same_as_a_made_trace_however_far_it_is_made() -> None:
    """``events(kind)`` and ``step_ids()`` asked at any point agree with a made trace."""
    trace = Trace()
    trace.append(0.0, "run_start")
    trace.merge([(1.0, "step_start", "a", None, {}), (1.5, "template_warning", "a", None, {"field": "prompt"})],
                start=1.0)
    assert trace.events("template_warning", step="a")[0].seq == 3  # a pending kind: numbered as when made
    trace.merge([(2.0, "step_start", "b", None, {}), (2.5, "step_end", "b", 1, {})], start=1.0)
    assert trace.events("tool_call") == [] and trace.step_ids() == ["a", "b"]  # "b" not made yet
    trace.append(3.0, "template_warning", "c", field="output")
    trace.append(3.5, "step_start", "c")
    warned = [(e.seq, e.step_id) for e in trace.events("template_warning")]
    steps = trace.step_ids()
    made = Trace(list(trace))
    assert warned == [(e.seq, e.step_id) for e in made.events("template_warning")] == [(3, "a"), (6, "c")]
    assert steps == made.step_ids() == ["a", "b", "c"] and trace.to_list() == made.to_list()
