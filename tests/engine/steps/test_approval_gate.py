"""approval_gate: pause, checkpoint, resume with a decision, timeouts on the injected clock, webhooks.

Webhooks go to a real HTTP server on 127.0.0.1 (allowed through
``config.sandbox.allow_internal_targets``); refusals never open a connection.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pytest_agentloom import VirtualClock, resume_workflow, run_workflow
from pytest_agentloom._redaction.redactor import make_marker
from pytest_agentloom._redaction.salt import load_salt
from pytest_agentloom.engine._persist.checkpoints import load_checkpoint

#: these workflows (and upstream's, and the docs' one-step fragments) have gates whose decision no router
#: reads, on purpose; the warning itself is tested in tests/engine/format/test_unread_gates.py
pytestmark = pytest.mark.filterwarnings("ignore::pytest_agentloom.UnreadDecisionWarning")

SALT = "approval-tests"
CANARY = "sk-canary-7f3a9c2e11"

FLOW = """\
name: deploy
state:
  api_key: {canary}
  service: billing
state_schema:
  api_key: {{redact: true}}
config:
  sandbox: {{allow_internal_targets: {internal}}}
steps:
  - id: plan
    type: tool
    tool_name: plan
    tool_args: {{service: "{{state.service}}", token: "{{state.api_key}}"}}
    output: plan
  - id: gate
    type: approval_gate
    depends_on: [plan]
    message: Deploy billing?
    output: decision
{gate_extra}
  - id: route
    type: router
    depends_on: [gate]
    conditions:
      - {{expression: "decision == 'approved'", target: deploy}}
    default: cancel
  - {{id: deploy, type: tool, tool_name: deploy, tool_args: {{service: "{{state.service}}"}}, output: result}}
  - {{id: cancel, type: tool, tool_name: cancel, output: result}}
"""


def write_flow(tmp_path: Path, gate_extra: str = "", internal: bool = False) -> Path:
    path = tmp_path / "flow.yaml"
    path.write_text(FLOW.format(canary=CANARY, gate_extra=gate_extra, internal=str(internal).lower()))
    return path


TOOLS = {
    "plan": lambda service, token: f"plan for {service}",
    "deploy": lambda service: f"deployed {service}",
    "cancel": lambda: "cancelled",
}


def run(path: Path, tmp_path: Path, **kwargs: Any):
    kwargs.setdefault("clock", VirtualClock())
    return run_workflow(path, tools=TOOLS, runs_dir=tmp_path / "runs", redaction_salt=SALT,
                        wall_clock=lambda: 1_700_000_000.0, run_id="run-approval", **kwargs)


def resume(result: Any, tmp_path: Path, **kwargs: Any):
    kwargs.setdefault("clock", VirtualClock())
    return resume_workflow(result, tools=TOOLS, runs_dir=tmp_path / "runs", redaction_salt=SALT,
                           wall_clock=lambda: 1_700_000_100.0, **kwargs)


def test_gate_pauses_the_run_and_saves_a_redacted_checkpoint(tmp_path):
    result = run(write_flow(tmp_path), tmp_path)
    assert (result.status.value, result.reason.value) == ("paused", "awaiting_approval")
    assert result.paused_step == "gate"
    assert result.steps["gate"].status.value == "paused"
    assert "deploy" not in result.steps and "cancel" not in result.steps
    checkpoint = load_checkpoint(result.checkpoint_path)
    assert checkpoint.to_document() == result.checkpoint
    assert checkpoint.to_document()["format_version"] == 1
    assert checkpoint.status == "paused"
    assert checkpoint.paused_step == "gate"
    assert checkpoint.completed_steps == ("plan",)
    assert checkpoint.run_id == "run-approval"
    marker = make_marker(CANARY, salt=SALT.encode())
    assert checkpoint.state["api_key"] == marker
    definition = checkpoint.workflow.definition
    assert definition is not None and definition["state"]["api_key"] == marker
    assert definition["steps"][0]["tool_args"]["token"] == "{state.api_key}"
    assert CANARY not in result.checkpoint_path.read_text()
    assert result.checkpoint_path.parent == tmp_path / "runs" / "checkpoints"


@pytest.mark.parametrize(("decision", "chosen", "expected"), [
    (True, "deploy", "deployed billing"),
    ("rejected", "cancel", "cancelled"),
])
def test_resume_with_a_decision_writes_output_and_approval_key_and_continues(tmp_path, decision, chosen, expected):
    paused = run(write_flow(tmp_path), tmp_path)
    result = resume(paused, tmp_path, decision=decision)
    word = "approved" if decision is True else "rejected"
    assert result.status.value == "success"
    assert result.state["decision"] == word
    assert result.state["_approval"] == {"gate": word}
    assert result.state["steps"]["gate"] == {"output": word, "status": "success"}
    assert result.steps[chosen].output == expected
    assert result.state["result"] == expected
    assert result.trace.step_ids() == ["gate", "route", chosen]  # plan is not run again
    assert load_checkpoint(paused.checkpoint_path).status == "success"  # settled: cannot resume twice


def test_both_endings_as_canonical_json(tmp_path):
    approved = resume(run(write_flow(tmp_path), tmp_path), tmp_path, decision="approved")
    first = approved.to_json()
    again = resume(run(write_flow(tmp_path), tmp_path), tmp_path, decision="approved")
    assert again.to_json() == first
    rejected = resume(run(write_flow(tmp_path), tmp_path), tmp_path, decision="rejected")
    assert json.loads(rejected.to_json())["steps"]["cancel"]["status"] == "success"
    assert CANARY not in first and CANARY not in rejected.to_json()


def test_resume_without_a_decision_stays_paused(tmp_path):
    paused = run(write_flow(tmp_path), tmp_path)
    still = resume(paused, tmp_path)
    assert still.status.value == "paused" and still.paused_step == "gate"
    assert [e.kind for e in still.trace.events("approval_waiting")] == ["approval_waiting"]
    final = resume(still, tmp_path, decision=True)
    assert final.ok


def test_a_finished_run_cannot_be_resumed(tmp_path):
    paused = run(write_flow(tmp_path), tmp_path)
    resume(paused, tmp_path, decision=True)
    from pytest_agentloom import AgentloomError

    with pytest.raises(AgentloomError, match="only paused or interrupted runs can be resumed"):
        resume(paused.checkpoint_path, tmp_path, decision=True)


@pytest.mark.parametrize(("on_timeout", "status", "decision"), [
    ("approve", "success", "approved"),
    ("reject", "success", "rejected"),
    ("fail", "failed", None),
])
def test_timeout_decides_on_the_injected_clock(tmp_path, on_timeout, status, decision):
    flow = write_flow(tmp_path, gate_extra=f"    timeout_seconds: 3600\n    on_timeout: {on_timeout}")
    paused = run(flow, tmp_path, clock=VirtualClock(100.0))
    early = resume(paused, tmp_path, clock=VirtualClock(100.0 + 3599))
    assert early.status.value == "paused"  # not yet: the timeout has not passed
    late = resume(early, tmp_path, clock=VirtualClock(100.0 + 3600), decision="rejected")
    assert late.status.value == status
    if decision:
        assert late.state["_approval"]["gate"] == decision
        assert late.trace.events("approval_timeout")[0].data["ignored_decision"] == "rejected"
    else:
        assert late.steps["gate"].error_code == "approval_timeout"
        assert "timed out" in late.steps["gate"].error


# -- webhooks -------------------------------------------------------------------------------------------------


class _Hook(BaseHTTPRequestHandler):
    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        self.received.append({"path": self.path, "headers": dict(self.headers),
                              "body": self.rfile.read(length).decode()})
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def hook_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    received: ClassVar[list[dict[str, Any]]] = []
    handler = type("Hook", (_Hook,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()


def notify(url: str) -> str:
    return (
        "    notify:\n"
        f"      url: {url}\n"
        "      headers: {X-Auth: \"{state.api_key}\"}\n"
        "      body_template: '{{\"text\": \"approve {state.service}? key={state.api_key}\"}}'"
    )


def test_webhook_posts_a_rendered_redacted_body_to_a_local_server(tmp_path, hook_server):
    url, received = hook_server
    result = run(write_flow(tmp_path, gate_extra=notify(url), internal=True), tmp_path)
    assert result.status.value == "paused"
    assert len(received) == 1
    call = received[0]
    marker = make_marker(CANARY, salt=SALT.encode())
    assert json.loads(call["body"]) == {"text": f"approve billing? key={marker}"}
    assert call["headers"]["Content-Type"] == "application/json"
    assert call["headers"]["X-Auth"] == CANARY  # the receiver's credential is sent as is...
    saved = result.checkpoint_path.read_text()
    assert CANARY not in saved  # ...but never saved: headers are redacted in the checkpoint
    assert "{state.api_key}" in saved
    webhook = result.trace.events("webhook")[0]
    assert webhook.data == {"url": url, "ok": True, "status": 204}


def test_resuming_does_not_notify_again(tmp_path, hook_server):
    url, received = hook_server
    paused = run(write_flow(tmp_path, gate_extra=notify(url), internal=True), tmp_path)
    resume(paused, tmp_path, decision=True)
    assert len(received) == 1


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:9/hook",
    "http://localhost:9/hook",
    "http://10.1.2.3/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://[::1]:9/hook",
    "http://192.168.0.10/hook",
    "http://100.100.100.200/latest/meta-data/",
    "http://[::169.254.169.254]/latest/meta-data",  # IPv4-compatible
    "http://[::127.0.0.1]:9/hook",
    "http://[::ffff:169.254.169.254]/latest/meta-data",  # IPv4-mapped
    "http://[64:ff9b::a9fe:a9fe]/latest/meta-data",  # NAT64
    "http://[64:ff9b:1::a9fe:a9fe]/latest/meta-data",  # local-use NAT64
    "http://[2002:a9fe:a9fe::1]/latest/meta-data",  # 6to4
    "http://[2001:0:4136:e378:8000:63bf:5601:5601]/hook",  # Teredo, client 169.254.169.254
])
def test_internal_webhook_targets_are_refused_without_the_sandbox_flag(tmp_path, url):
    result = run(write_flow(tmp_path, gate_extra=notify(url)), tmp_path)
    assert result.status.value == "failed"
    assert result.steps["gate"].error_code == "webhook_refused"
    assert "allow_internal_targets" in result.steps["gate"].error


@pytest.mark.parametrize("address", ["::169.254.169.254", "::ffff:127.0.0.1", "64:ff9b::a9fe:a9fe",
                                     "64:ff9b:1::7f00:1", "2002:a9fe:a9fe::1", "2001:0:4136:e378:8000:63bf:5601:5601"])
def test_a_webhook_name_resolving_to_an_ipv6_form_of_an_internal_address_is_refused(tmp_path, monkeypatch, address):
    from pytest_agentloom.engine._steps import approval_gate as gate_module

    async def resolved(host, port):
        return [address]

    monkeypatch.setattr(gate_module, "resolve_host", resolved)
    result = run(write_flow(tmp_path, gate_extra=notify("http://hooks.example.org/hook")), tmp_path)
    assert result.steps["gate"].error_code == "webhook_refused"
    assert address in result.steps["gate"].error


def test_a_webhook_connects_only_to_the_address_it_checked_dns_rebinding(tmp_path, hook_server, monkeypatch):
    from pytest_agentloom._core import addresses as addresses_module
    from pytest_agentloom.engine._steps import approval_gate as gate_module

    async def public(host, port):
        return ["93.184.216.34"]

    async def inside(host, port):
        return ["127.0.0.1"]

    monkeypatch.setattr(gate_module, "resolve_host", public)  # the check
    monkeypatch.setattr(addresses_module, "resolve_host", inside)  # the connection, a moment later
    url, received = hook_server
    rebinding = url.replace("127.0.0.1", "hooks.example.org")
    result = run(write_flow(tmp_path, gate_extra=notify(rebinding)), tmp_path)
    assert result.steps["gate"].error_code == "webhook_refused"
    assert "127.0.0.1" in result.steps["gate"].error and received == []


def test_non_http_webhook_urls_are_refused(tmp_path):
    result = run(write_flow(tmp_path, gate_extra=notify("file:///etc/passwd"), internal=True), tmp_path)
    assert result.steps["gate"].error_code == "webhook_refused"


def test_a_webhook_that_answers_an_error_fails_the_gate(tmp_path):
    class NotFound(_Hook):
        def do_POST(self) -> None:
            self.send_response(404)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        bad = f"http://127.0.0.1:{server.server_address[1]}/hook"
        result = run(write_flow(tmp_path, gate_extra=notify(bad), internal=True), tmp_path)
    finally:
        server.shutdown()
        server.server_close()
    assert result.steps["gate"].error_code == "webhook_failed"
    assert "HTTP 404" in result.steps["gate"].error


# -- through the agentloom fixture: result.checkpoint, agentloom.resume, snapshots, assert_no_secrets ------------

FIXTURE_CANARY = "sk-canary-fixture-4242"
RELEASE_TOOLS = {
    "plan": lambda service, token: f"plan for {service}",
    "ship": lambda service: f"shipped {service}",
    "stop": lambda: "stopped",
}


@pytest.mark.parametrize("approve", [True, False], ids=["approved", "rejected"])
def test_fixture_pauses_inspects_checkpoint_resumes_and_snapshots_the_ending(agentloom, approve):
    paused = agentloom.run("approval/release.yaml", tools=RELEASE_TOOLS)
    paused.assert_status("paused", "awaiting_approval")
    checkpoint = paused.checkpoint
    assert checkpoint["paused_step"] == "gate" and checkpoint["completed_steps"] == ["plan"]
    assert checkpoint["state"]["api_key"].startswith("<REDACTED:sha256=")
    assert checkpoint["workflow"]["definition"]["state"]["api_key"] == checkpoint["state"]["api_key"]
    assert paused.checkpoint_path.is_relative_to(agentloom.tmp_path)

    ended = agentloom.resume(paused, approve=approve)
    ended.assert_status("success")
    ended.assert_steps("gate", "route", "ship" if approve else "stop")
    assert ended.state["_approval"] == {"gate": "approved" if approve else "rejected"}
    assert paused.ran_workflow is None and ended.ran_workflow is None  # the file's shared workflow: out of reach
    agentloom.assert_snapshot(ended)
    agentloom.assert_no_secrets(FIXTURE_CANARY)


def test_assert_no_secrets_names_the_file_and_position(agentloom):
    result = agentloom.run("approval/release.yaml", tools=RELEASE_TOOLS)
    leak = agentloom.tmp_path / "leak.txt"
    leak.write_text("fine\nkey=sk-canary-fixture-4242\n")
    with pytest.raises(AssertionError) as info:
        agentloom.assert_no_secrets(FIXTURE_CANARY)
    message = str(info.value)
    assert f"{leak}: 'sk-c…' at line 2, column 5" in message
    assert str(result.checkpoint_path) not in message  # the checkpoint itself is clean


def test_two_gates_in_one_layer_are_decided_one_resume_at_a_time(tmp_path):
    path = tmp_path / "two.yaml"
    path.write_text("""\
name: two
steps:
  - {id: legal, type: approval_gate, output: legal_ok}
  - {id: finance, type: approval_gate, output: finance_ok}
  - {id: done, type: tool, tool_name: cancel, depends_on: [legal, finance], output: result}
""")
    paused = run(path, tmp_path)
    assert paused.paused_step == "legal"
    assert paused.checkpoint["pending_approval"]["step_id"] == "legal"
    assert [s.status.value for s in paused.steps.values()] == ["paused", "paused"]
    second = resume(paused, tmp_path, decision=True)
    assert second.paused_step == "finance" and second.state["_approval"] == {"legal": "approved"}
    final = resume(second, tmp_path, decision=False)
    assert final.ok
    assert final.state["_approval"] == {"legal": "approved", "finance": "rejected"}
    assert final.state["result"] == "cancelled"


def test_fixture_resume_warns_about_a_redacted_key_and_state_puts_it_back(agentloom, caplog):
    import logging

    secret = "sk-canary-keyed-5150"
    got: list[str] = []
    keyed_tools = {"ship": lambda key: got.append(key) or "shipped"}
    with caplog.at_level(logging.WARNING, logger="pytest_agentloom.resume"):
        agentloom.resume(agentloom.run("approval/keyed.yaml", tools=keyed_tools), approve=True)
    assert got == [make_marker(secret, salt=load_salt(agentloom.path("approval")))]  # the marker, not the key
    assert [r.getMessage().split(": ", 1)[1].split(",")[0] for r in caplog.records] == [
        "step 'ship' reads state key 'api_key'"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="pytest_agentloom.resume"):
        restored = agentloom.resume(agentloom.run("approval/keyed.yaml", tools=keyed_tools), approve=True,
                                    state={"api_key": secret})
    restored.assert_status("success")
    assert got[-1] == secret and caplog.records == []
    agentloom.assert_no_secrets(secret)
