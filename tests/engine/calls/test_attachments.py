"""Attachments (docs) through the engine: what the model receives, and every rule that fails the step first."""

from __future__ import annotations

import base64
import hashlib
import json
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pytest_agentloom import Scripted, VirtualClock, run_workflow
from pytest_agentloom.engine._calls.attachments import MAX_BYTES
from pytest_agentloom.engine._format.loader import load_workflow, parse_workflow
from pytest_agentloom.errors import WorkflowError

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
PDF = b"%PDF-1.4\n" + b"0" * 40
OPEN = "sandbox: {enabled: false, allow_network: true, allow_internal_targets: true}"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def workflow_file(folder: Path, attachments: list[dict[str, Any]], *, config: str = OPEN, conversation: str = "",
                  prompt: str | None = "Describe it.") -> Path:
    lines = ["name: att", "config:", "  model: gpt-4o", f"  {config}", "steps:", "  - id: ask", "    type: llm_call"]
    if prompt is not None:
        lines.append(f"    prompt: {json.dumps(prompt)}")
    if conversation:
        lines.append(f"    conversation: {conversation}")
    lines.append(f"    attachments: {json.dumps(attachments)}")
    path = folder / "flow.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def run(path: Path, state: dict[str, Any] | None = None, provider: Scripted | None = None):
    provider = provider or Scripted({"ask": "a receipt"})
    result = run_workflow(load_workflow(path), provider=provider, state=state or {}, clock=VirtualClock())
    return result, provider


def parts(provider: Scripted):
    [call] = provider.requests
    return call.request.messages[-1].attachments


# --------------------------------------------------------------------------- a local server (127.0.0.1 only)


class _Files(BaseHTTPRequestHandler):
    routes: ClassVar[dict[str, tuple[int, dict[str, str], bytes]]] = {}

    def do_GET(self) -> None:
        status, headers, body = self.routes.get(self.path, (404, {}, b"missing"))
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, dict[str, tuple[int, dict[str, str], bytes]]]]:
    routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
    handler = type("Files", (_Files,), {"routes": routes})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", routes
    finally:
        httpd.shutdown()
        httpd.server_close()


# --------------------------------------------------------------------------- source kinds


def test_a_relative_file_is_read_from_the_workflow_folder_not_the_cwd(tmp_path, monkeypatch):
    (tmp_path / "invoices").mkdir()
    (tmp_path / "invoices" / "may.pdf").write_bytes(PDF)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result, provider = run(workflow_file(tmp_path, [{"type": "pdf", "source": "invoices/may.pdf"}]))
    assert result.status == "success", result.steps["ask"].error
    [part] = parts(provider)
    assert (part.kind, part.media_type, part.data, part.size) == ("pdf", "application/pdf", PDF, len(PDF))
    [call] = provider.requests
    assert call.messages[-1]["attachments"] == [
        {"type": "pdf", "media_type": "application/pdf", "size": len(PDF), "sha256": digest(PDF)}
    ]


def test_source_is_a_template(tmp_path):
    (tmp_path / "r.jpg").write_bytes(PNG)
    result, provider = run(workflow_file(tmp_path, [{"source": "{state.file}"}]), state={"file": "r.jpg"})
    assert result.status == "success", result.steps["ask"].error
    assert parts(provider)[0].media_type == "image/jpeg"  # by extension


def test_a_data_url_is_decoded_and_its_own_type_wins(tmp_path):
    source = "data:image/webp;base64," + base64.b64encode(PNG).decode()
    result, provider = run(workflow_file(tmp_path, [{"source": source, "media_type": "image/png"}]))
    assert result.status == "success", result.steps["ask"].error
    [part] = parts(provider)
    assert (part.media_type, part.data) == ("image/webp", PNG)


def test_a_long_base64_string_is_sent_as_is_with_its_media_type(tmp_path):
    text = base64.b64encode(PNG * 3).decode()
    result, provider = run(workflow_file(tmp_path, [{"source": text, "media_type": "image/gif"}]))
    assert result.status == "success", result.steps["ask"].error
    [part] = parts(provider)
    assert (part.media_type, part.base64()) == ("image/gif", text)


def test_a_base64_string_without_media_type_fails(tmp_path):
    text = base64.b64encode(PNG * 3).decode()
    result, provider = run(workflow_file(tmp_path, [{"source": text}]))
    assert result.steps["ask"].error_code == "attachment_invalid"
    assert "media_type" in result.steps["ask"].error and provider.requests == []


def test_a_download_follows_redirects_and_guesses_from_content_type(tmp_path, server):
    base, routes = server
    routes["/start"] = (302, {"Location": "/file"}, b"")
    routes["/file"] = (200, {"Content-Type": "image/jpeg"}, PNG)
    result, provider = run(workflow_file(tmp_path, [{"source": f"{base}/start"}]))
    assert result.status == "success", result.steps["ask"].error
    [part] = parts(provider)
    assert (part.media_type, part.data) == ("image/jpeg", PNG)
    [event] = result.trace.events("attachments", step="ask")
    assert event.data["items"] == [{"type": "image", "media_type": "image/jpeg", "size": len(PNG),
                                    "sha256": digest(PNG)}]


def test_more_than_five_redirects_fail(tmp_path, server):
    base, routes = server
    for hop in range(7):
        routes[f"/r{hop}"] = (302, {"Location": f"/r{hop + 1}"}, b"")
    result, _ = run(workflow_file(tmp_path, [{"source": f"{base}/r0"}]))
    assert result.steps["ask"].error_code == "attachment_invalid"
    assert "redirected more than 5 times" in result.steps["ask"].error


def test_fetch_provider_sends_the_url(tmp_path):
    result, provider = run(workflow_file(tmp_path, [{"source": "https://93.184.215.14/cat.png", "fetch": "provider"}]))
    assert result.status == "success", result.steps["ask"].error
    [part] = parts(provider)
    assert (part.url, part.data, part.media_type) == ("https://93.184.215.14/cat.png", None, "image/png")


def test_fetch_provider_takes_images_only_and_the_loader_says_so(tmp_path):
    with pytest.raises(WorkflowError, match="fetch: provider takes images only"):
        load_workflow(workflow_file(tmp_path, [{"type": "pdf", "source": "https://93.184.215.14/a.pdf",
                                                "fetch": "provider"}]))


# --------------------------------------------------------------------------- limits and contradictions


def test_over_twenty_megabytes_fails_before_the_call(tmp_path):
    (tmp_path / "big.png").write_bytes(b"\0" * (MAX_BYTES + 1))
    result, provider = run(workflow_file(tmp_path, [{"source": "big.png"}]))
    assert result.steps["ask"].error_code == "attachment_invalid"
    assert "20 MB" in result.steps["ask"].error and provider.requests == []


def test_a_download_over_the_limit_fails(tmp_path, server, monkeypatch):
    monkeypatch.setattr("pytest_agentloom.engine._calls.attachments.MAX_BYTES", 100)
    base, routes = server
    routes["/big.png"] = (200, {}, b"\0" * 101)
    result, _ = run(workflow_file(tmp_path, [{"source": f"{base}/big.png"}]))
    assert "over the 20 MB limit" in result.steps["ask"].error


def test_a_written_media_type_contradicting_type_fails_at_load(tmp_path):
    with pytest.raises(WorkflowError, match="contradicts type 'image'") as caught:
        load_workflow(workflow_file(tmp_path, [{"source": "a.png", "media_type": "application/pdf"}]))
    assert caught.value.step_id == "ask"


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        pytest.param("a.pdf", "image", id="by-extension"),
        pytest.param("data:image/png;base64," + base64.b64encode(PNG).decode(), "audio", id="data-url-type"),
    ],
)
def test_a_guessed_media_type_contradicting_type_fails_the_step(tmp_path, source, kind):
    (tmp_path / "a.pdf").write_bytes(PDF)
    result, provider = run(workflow_file(tmp_path, [{"type": kind, "source": source}]))
    assert result.steps["ask"].error_code == "attachment_invalid"
    assert f"contradicts type '{kind}'" in result.steps["ask"].error and provider.requests == []


def test_a_missing_file_names_step_and_attachment(tmp_path):
    result, _ = run(workflow_file(tmp_path, [{"source": "nope.png"}]))
    assert "llm_call 'ask' attachments[0]" in result.steps["ask"].error
    assert "How to fix" in result.steps["ask"].error


# --------------------------------------------------------------------------- addresses and the sandbox


@pytest.mark.parametrize("fetch", ["local", "provider"])
@pytest.mark.parametrize("url", ["http://127.0.0.1:9/a.png", "http://10.0.0.8/a.png", "http://169.254.169.254/a.png",
                                 "http://localhost/a.png", "http://100.100.100.200/latest/meta-data/a.png"])
def test_internal_addresses_are_refused_with_either_fetch(tmp_path, url, fetch):
    config = "sandbox: {enabled: false, allow_network: true}"
    result, provider = run(workflow_file(tmp_path, [{"source": url, "fetch": fetch}], config=config))
    assert result.steps["ask"].error_code == "attachment_refused"
    assert "allow_internal_targets" in result.steps["ask"].error and provider.requests == []


def test_a_redirect_into_an_internal_address_is_refused(tmp_path, server, monkeypatch):
    base, routes = server
    routes["/hop"] = (302, {"Location": "http://10.1.2.3/x.png"}, b"")
    # the first hop is local (allowed for the test server), the second is checked again and refused
    from pytest_agentloom._core import addresses as addresses_module
    from pytest_agentloom.tools import _sandbox as sandbox_module

    real_address, real_host = sandbox_module.is_internal_address, sandbox_module.is_internal_host
    for module in (sandbox_module, addresses_module):  # the checks, and the transport that connects
        monkeypatch.setattr(module, "is_internal_address", lambda host: host != "127.0.0.1" and real_address(host))
        monkeypatch.setattr(module, "is_internal_host", lambda host: host != "127.0.0.1" and real_host(host))
    config = "sandbox: {enabled: false, allow_network: true}"
    result, _ = run(workflow_file(tmp_path, [{"source": f"{base}/hop"}], config=config))
    assert result.steps["ask"].error_code == "attachment_refused"
    assert "10.1.2.3" in result.steps["ask"].error


def test_allow_network_false_refuses_downloads_even_with_the_sandbox_disabled(tmp_path, server):
    base, routes = server
    routes["/a.png"] = (200, {}, PNG)
    config = "sandbox: {enabled: false, allow_network: false, allow_internal_targets: true}"
    result, _ = run(workflow_file(tmp_path, [{"source": f"{base}/a.png"}], config=config))
    assert result.steps["ask"].error_code == "attachment_refused"
    assert "allow_network" in result.steps["ask"].error


def test_allowed_domains_restrict_downloads_even_with_the_sandbox_disabled(tmp_path, server):
    base, _ = server
    config = ("sandbox: {enabled: false, allow_network: true, allow_internal_targets: true, "
              "allowed_domains: [example.org]}")
    result, _ = run(workflow_file(tmp_path, [{"source": f"{base}/a.png"}], config=config))
    assert result.steps["ask"].error_code == "attachment_refused"
    assert "allowed_domains" in result.steps["ask"].error


def test_with_the_sandbox_enabled_a_file_must_be_under_readable_paths(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.png").write_bytes(PNG)
    (tmp_path / "out.png").write_bytes(PNG)
    config = "sandbox: {enabled: true, readable_paths: [in]}"
    ok, _ = run(workflow_file(tmp_path, [{"source": "in/a.png"}], config=config))
    assert ok.status == "success", ok.steps["ask"].error
    refused, provider = run(workflow_file(tmp_path, [{"source": "in/../out.png"}], config=config))
    assert refused.steps["ask"].error_code == "attachment_refused"
    assert "readable_paths" in refused.steps["ask"].error and provider.requests == []


# --------------------------------------------------------------------------- conversations and redaction


def test_in_a_conversation_attachments_go_with_this_turn_only_and_are_not_stored(tmp_path):
    (tmp_path / "a.png").write_bytes(PNG)
    path = workflow_file(tmp_path, [{"source": "a.png"}], conversation="chat")
    provider = Scripted({"ask": "a cat"})
    result, _ = run(path, state={"chat": {"messages": [{"role": "user", "content": "hi"},
                                                       {"role": "assistant", "content": "hello"}]}},
                    provider=provider)
    assert result.status == "success", result.steps["ask"].error
    sent = provider.requests[0].request.messages
    assert [len(message.attachments) for message in sent] == [0, 0, 1]
    stored = result.state["chat"]["messages"]
    assert all("attachments" not in message for message in stored)
    assert PNG.hex() not in json.dumps(stored)


def test_a_conversation_step_without_a_prompt_sends_no_attachments(tmp_path):
    (tmp_path / "a.png").write_bytes(PNG)
    path = workflow_file(tmp_path, [{"source": "a.png"}], conversation="chat", prompt=None)
    result, provider = run(path, state={"chat": {"messages": [{"role": "user", "content": "hi"}]}})
    assert result.status == "success", result.steps["ask"].error
    assert all(not message.attachments for message in provider.requests[0].request.messages)


def test_bytes_never_reach_the_result_or_the_trace(tmp_path):
    secret = b"TOP-SECRET-BYTES" * 8
    (tmp_path / "a.png").write_bytes(secret)
    path = workflow_file(tmp_path, [{"source": "a.png"}], config=OPEN + "\n  capture_prompts: true")
    result, _ = run(path)
    assert result.status == "success", result.steps["ask"].error
    dumped = result.to_json() + json.dumps([event.data for event in result.trace.events()], default=str)
    for form in (secret.decode(), base64.b64encode(secret).decode()):
        assert form not in dumped
    assert digest(secret) in dumped


def test_the_loader_takes_attachment_fields():
    workflow = parse_workflow(textwrap.dedent("""
        name: a
        steps:
          - id: ask
            type: llm_call
            model: gpt-4o
            prompt: hi
            attachments:
              - source: x.png
              - {type: audio, source: y.wav, media_type: audio/wav, fetch: local}
    """))
    kinds = [spec.type for spec in workflow.steps[0].attachments]
    assert kinds == ["image", "audio"]


def test_a_name_that_resolves_inside_when_connecting_is_refused_dns_rebinding(tmp_path, server, monkeypatch):
    base, routes = server
    routes["/a.png"] = (200, {}, PNG)
    rebinding_to_the_server(monkeypatch)
    port = base.rsplit(":", 1)[1]
    config = "sandbox: {enabled: false, allow_network: true}"
    result, provider = run(workflow_file(tmp_path, [{"source": f"http://files.example.org:{port}/a.png"}],
                                         config=config))
    assert result.steps["ask"].error_code == "attachment_refused"
    assert "resolves to 127.0.0.1" in result.steps["ask"].error and provider.requests == []


def rebinding_to_the_server(monkeypatch) -> None:
    """The check resolves a public address; the connection, a moment later, gets 127.0.0.1 (the test server)."""
    from pytest_agentloom._core import addresses as addresses_module
    from pytest_agentloom.tools import _sandbox as sandbox_module

    async def public(host, port):
        return ["93.184.216.34"]

    async def inside(host, port):
        return ["127.0.0.1"]

    monkeypatch.setattr(sandbox_module, "resolve_host", public)
    monkeypatch.setattr(addresses_module, "resolve_host", inside)
