"""The keys of upstream agentloom's main branch, with the meaning docs/compatibility.md gives them.

``config.on_step_failure``, ``config.strict_outputs``, ``subworkflow.isolated_state`` and
``sandbox.allow_internal_webhook_targets``. Webhooks go to a real HTTP server on 127.0.0.1;
refusals never open a connection.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from pytest_agentloom import Scripted, VirtualClock, error, run_workflow
from pytest_agentloom.engine._format.lint import findings
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.errors import WorkflowError

#: these workflows (and upstream's, and the docs' one-step fragments) have gates whose decision no router
#: reads, on purpose; the warning itself is tested in tests/engine/format/test_unread_gates.py
pytestmark = pytest.mark.filterwarnings("ignore::pytest_agentloom.UnreadDecisionWarning")


def run(workflow: Any, **options: Any):
    options.setdefault("clock", VirtualClock())
    return run_workflow(workflow, runs_dir=False, **options)


# -- sandbox.allow_internal_webhook_targets ----------------------------------------------------------------------


class _Hook(BaseHTTPRequestHandler):
    received: list[str]

    def do_POST(self) -> None:
        self.received.append(self.rfile.read(int(self.headers.get("Content-Length", 0))).decode())
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def hook_server() -> Iterator[tuple[int, list[str]]]:
    received: list[str] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Hook", (_Hook,), {"received": received}))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], received
    finally:
        server.shutdown()
        server.server_close()


def gate_flow(url: str, sandbox: str) -> Any:
    return parse_workflow(
        f"name: hooks\nconfig: {{sandbox: {{{sandbox}}}}}\n"
        f"steps:\n  - {{id: gate, type: approval_gate, message: ship?, notify: {{url: '{url}'}}}}\n")


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::ffff:127.0.0.1]"])
def test_the_webhook_opt_in_reaches_a_loopback_server(hook_server, host):
    port, received = hook_server
    result = run(gate_flow(f"http://{host}:{port}/hook", "allow_internal_webhook_targets: true"))
    assert result.status.value == "paused", result.steps["gate"].error
    assert len(received) == 1
    assert result.trace.events("webhook")[0].data["status"] == 204


def test_without_the_opt_in_the_same_server_is_refused(hook_server):
    port, received = hook_server
    result = run(gate_flow(f"http://127.0.0.1:{port}/hook", "enabled: true"))
    assert result.steps["gate"].error_code == "webhook_refused"
    assert "allow_internal_webhook_targets: true" in result.steps["gate"].error
    assert received == []


@pytest.mark.parametrize("url", [
    "http://169.254.169.254/latest/meta-data/",  # AWS, Google Cloud, Azure, ...: link-local
    "http://169.254.170.2/v2/credentials",  # ECS task credentials: link-local
    "http://[fe80::1]/hook",
    "http://[::ffff:169.254.169.254]/latest/meta-data/",
    "http://100.100.100.200/latest/meta-data/",  # Alibaba Cloud, inside carrier-grade NAT
    "http://[fd00:ec2::254]/latest/meta-data/",  # AWS over IPv6, inside unique local
    "http://0.0.0.0:9/hook",
    "http://224.0.0.1/hook",
])
def test_the_webhook_opt_in_never_opens_metadata_or_link_local_addresses(url):
    result = run(gate_flow(url, "allow_internal_webhook_targets: true"))
    error = result.steps["gate"].error
    assert result.steps["gate"].error_code == "webhook_refused"
    assert "allow_internal_webhook_targets does not open" in error


def test_a_name_resolving_to_a_metadata_address_is_refused_at_connect_time(hook_server, monkeypatch):
    from pytest_agentloom._core import addresses as addresses_module
    from pytest_agentloom.engine._steps import approval_gate as gate_module

    async def private(host, port):
        return ["10.0.0.5"]

    async def metadata(host, port):
        return ["169.254.169.254"]

    monkeypatch.setattr(gate_module, "resolve_host", private)  # the check sees a private address
    monkeypatch.setattr(addresses_module, "resolve_host", metadata)  # the connection, a moment later
    port, received = hook_server
    result = run(gate_flow(f"http://hooks.internal:{port}/hook", "allow_internal_webhook_targets: true"))
    assert result.steps["gate"].error_code == "webhook_refused"
    assert "169.254.169.254" in result.steps["gate"].error and received == []


def test_the_webhook_opt_in_does_not_open_http_request(hook_server):
    port, _ = hook_server
    flow = parse_workflow(
        "name: fetch\nconfig: {sandbox: {allow_network: true, allow_internal_webhook_targets: true}}\n"
        f"steps:\n  - {{id: get, type: tool, tool_name: http_request, tool_args: {{url: 'http://127.0.0.1:{port}/'}}}}\n")
    result = run(flow)
    assert result.status.value == "failed"
    assert result.steps["get"].error_code == "sandbox_refused"


# -- subworkflow.isolated_state ----------------------------------------------------------------------------------

ISOLATED = """\
name: parent
config: {{model: m}}
state: {{topic: tides, private_notes: keep out}}
steps:
  - id: nested
    type: subworkflow
    {isolated}
    input: {{subject: "{{state.topic}}"}}
    {child}
    output: child_result
"""
INLINE_CHILD = ("workflow_inline: {name: classifier, config: {model: m}, state: {threshold: 0.75}, "
                "steps: [{id: classify, type: llm_call, prompt: 'Classify {state.subject}', output: label}]}")


@pytest.mark.parametrize(("isolated", "sees_parent"), [("isolated_state: true", False),
                                                        ("isolated_state: false", True), ("", True)])
def test_isolated_state_starts_an_inline_child_from_its_own_state_and_input(isolated, sees_parent):
    flow = parse_workflow(ISOLATED.format(isolated=isolated, child=INLINE_CHILD))
    result = run(flow, provider=Scripted({"nested/classify": "calm"}))
    child_state = result.state["child_result"]
    assert child_state["label"] == "calm" and child_state["subject"] == "tides" and child_state["threshold"] == 0.75
    assert ("private_notes" in child_state) is sees_parent
    assert ("topic" in child_state) is sees_parent


def test_isolated_state_false_makes_a_workflow_file_child_inherit(tmp_path):
    (tmp_path / "child.yaml").write_text(
        "name: child\nconfig: {model: m}\n"
        "steps: [{id: classify, type: llm_call, prompt: 'Classify {state.subject}', output: label}]\n")
    for isolated, sees_parent in (("", False), ("isolated_state: false", True), ("isolated_state: true", False)):
        (tmp_path / "flow.yaml").write_text(ISOLATED.format(isolated=isolated, child="workflow: child.yaml"))
        result = run(tmp_path / "flow.yaml", provider=Scripted({"nested/classify": "calm"}))
        assert ("private_notes" in result.state["child_result"]) is sees_parent, isolated


def test_isolated_state_with_return_keys_hands_back_only_those():
    flow = parse_workflow(ISOLATED.format(isolated="isolated_state: true\n    return_keys: [label]",
                                          child=INLINE_CHILD))
    assert run(flow, provider=Scripted({"nested/classify": "calm"})).state["child_result"] == {"label": "calm"}


def test_validate_warns_about_a_parent_key_an_isolated_child_reads():
    # the child reads its input too: an input key the child does not use is a load error of its own
    child = INLINE_CHILD.replace("Classify {state.subject}", "Classify {state.subject} with {state.private_notes}")
    found = findings(parse_workflow(ISOLATED.format(isolated="isolated_state: true", child=child)))
    assert [(f.step_id, "private_notes" in f.message) for f in found] == [("nested/classify", True)]
    assert findings(parse_workflow(ISOLATED.format(isolated="isolated_state: false", child=child))) == []


# -- config.strict_outputs ----------------------------------------------------------------------------------------

CLASH = """\
name: clash
config: {{model: m{strict}}}
steps:
  - {{id: tone, type: llm_call, prompt: a, output: label}}
  - {{id: topic, type: llm_call, prompt: b, output: label}}
  - {{id: refine, type: llm_call, prompt: c, output: label, depends_on: [tone, topic]}}
"""


def test_strict_outputs_refuses_two_side_by_side_steps_writing_one_output():
    with pytest.raises(WorkflowError) as caught:
        parse_workflow(CLASH.format(strict=", strict_outputs: true"))
    assert caught.value.step_id == "topic" and caught.value.field == "output"
    assert "steps 'tone' and 'topic' both write output 'label'" in str(caught.value)
    assert "depends_on: [tone]" in str(caught.value)


def test_without_strict_outputs_validate_warns_and_the_run_keeps_the_later_write():
    flow = parse_workflow(CLASH.format(strict=""))
    warned = [(f.severity, f.step_id, f.field) for f in findings(flow)]
    assert warned == [("warning", "topic", "output")]  # refine overwrites both on purpose: no warning
    result = run(flow.with_config(strict_outputs=False), provider=Scripted({"tone": "calm", "topic": "tides",
                                                                            "refine": "final"}))
    assert result.state["label"] == "final"
    alone = parse_workflow(CLASH.format(strict="").replace(
        "  - {id: refine, type: llm_call, prompt: c, output: label, depends_on: [tone, topic]}\n", ""))
    assert run(alone, provider=Scripted({"tone": "calm", "topic": "tides"})).state["label"] == "tides"


def test_a_chain_of_overwrites_and_exclusive_router_branches_are_not_clashes():
    chain = "\n".join(f"  - {{id: s{n}, type: llm_call, prompt: p, output: out"
                      f"{', depends_on: [s' + str(n - 1) + ']' if n else ''}}}" for n in range(300))
    parse_workflow(f"name: chain\nconfig: {{model: m, strict_outputs: true}}\nsteps:\n{chain}\n")
    routed = parse_workflow(
        "name: routed\nconfig: {model: m, strict_outputs: true}\nstate: {kind: q}\nsteps:\n"
        "  - {id: route, type: router, conditions: [{expression: \"kind == 'q'\", target: answer}], "
        "default: general}\n"
        "  - {id: answer, type: llm_call, prompt: a, output: response}\n"
        "  - {id: general, type: llm_call, prompt: b, output: response}\n")
    assert findings(routed) == []


def test_strict_outputs_is_checked_in_an_inline_child_too():
    with pytest.raises(WorkflowError, match="both write output 'x'"):
        parse_workflow(
            "name: p\nconfig: {model: m}\nsteps:\n  - id: sub\n    type: subworkflow\n    workflow_inline:\n"
            "      name: c\n      config: {model: m, strict_outputs: true}\n"
            "      steps: [{id: a, type: llm_call, prompt: a, output: x},\n"
            "              {id: b, type: llm_call, prompt: b, output: x}]\n")


# -- config.on_step_failure ---------------------------------------------------------------------------------------

BRANCHES = """\
name: branches
config: {{model: m{mode}}}
steps:
  - {{id: fetch, type: llm_call, prompt: fetch, output: page}}
  - {{id: summarize, type: llm_call, prompt: "sum {{state.page}}", output: summary, depends_on: [fetch]}}
  - {{id: publish, type: llm_call, prompt: "pub {{state.summary}}", output: post, depends_on: [summarize]}}
  - {{id: weather, type: llm_call, prompt: weather, output: forecast}}
  - {{id: digest, type: llm_call, prompt: "digest {{state.forecast}}", output: digest, depends_on: [weather]}}
"""
REPLIES = {"fetch": error(400, "bad request"), "summarize": "s", "publish": "p", "weather": "sunny", "digest": "d"}


def statuses(result) -> dict[str, tuple[str, str | None]]:
    return {sid: (step.status.value, step.error_code) for sid, step in result.steps.items()}


def test_by_default_a_failed_step_stops_the_run_after_its_layer():
    result = run(parse_workflow(BRANCHES.format(mode="")), provider=Scripted(dict(REPLIES)))
    assert statuses(result) == {
        "fetch": ("failed", "provider_error"), "summarize": ("skipped", "dependency_failed"),
        "publish": ("skipped", "dependency_failed"), "weather": ("success", None), "digest": ("skipped", "run_failed"),
    }


def test_skip_downstream_skips_only_what_depends_on_the_failed_step():
    result = run(parse_workflow(BRANCHES.format(mode=", on_step_failure: skip_downstream")),
                 provider=Scripted(dict(REPLIES)))
    assert statuses(result) == {
        "fetch": ("failed", "provider_error"), "summarize": ("skipped", "dependency_failed"),
        "publish": ("skipped", "dependency_failed"), "weather": ("success", None), "digest": ("success", None),
    }
    assert result.steps["publish"].error == "depends on failed step 'fetch'"  # the nearest failed ancestor
    assert result.status.value == "failed" and result.failed_step == "fetch"
    assert result.state["digest"] == "d"


def test_continue_runs_the_dependents_against_the_state_as_it_is():
    result = run(parse_workflow(BRANCHES.format(mode=", on_step_failure: continue")),
                 provider=Scripted(dict(REPLIES)))
    assert {sid: status for sid, (status, _) in statuses(result).items()} == {
        "fetch": "failed", "summarize": "success", "publish": "success", "weather": "success", "digest": "success"}
    assert result.status.value == "failed" and result.failed_step == "fetch" and result.reason.value == "step_failed"
    assert "page" not in result.state and result.state["post"] == "p"


def test_under_continue_a_failed_router_chooses_none_of_its_targets():
    flow = parse_workflow(
        "name: r\nconfig: {model: m, on_step_failure: continue}\nsteps:\n"
        "  - {id: route, type: router, conditions: [{expression: \"state.missing.deep == 1\", target: a}]}\n"
        "  - {id: a, type: llm_call, prompt: a}\n  - {id: b, type: llm_call, prompt: b}\n")
    result = run(flow, provider=Scripted({"a": "x", "b": "y"}))
    assert statuses(result)["route"][0] == "failed"
    assert statuses(result)["a"] == ("skipped", "not_chosen") and statuses(result)["b"] == ("success", None)


def test_an_unknown_on_step_failure_value_names_the_values():
    with pytest.raises(WorkflowError) as caught:
        parse_workflow(BRANCHES.format(mode=", on_step_failure: ignore"))
    assert caught.value.field == "config.on_step_failure"
    assert "'stop', 'skip_downstream' or 'continue'" in str(caught.value)
