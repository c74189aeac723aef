"""The sandbox rules of config.sandbox, through the four built-in tools."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pytest_agentloom.tools import BUILTIN_TOOL_NAMES, Sandbox, SandboxRefusal, Tool, builtin_tools
from pytest_agentloom.tools._sandbox import SandboxConfig


def tools(tmp_path: Path, **config: Any) -> dict[str, Tool]:
    return {made.name: made for made in builtin_tools(Sandbox(SandboxConfig(**config), base_dir=tmp_path))}


def call(tools_: dict[str, Tool], name: str, **arguments: Any) -> Any:
    return asyncio.run(tools_[name].invoke(arguments))


def refusal(tools_: dict[str, Tool], name: str, **arguments: Any) -> SandboxRefusal:
    with pytest.raises(SandboxRefusal) as info:
        call(tools_, name, **arguments)
    assert info.value.code == "sandbox_refused"
    assert "How to fix:" in str(info.value)
    return info.value


def test_the_four_built_ins_and_which_have_side_effects(tmp_path: Path) -> None:
    made = tools(tmp_path)
    assert tuple(made) == BUILTIN_TOOL_NAMES
    assert {name: t.side_effects for name, t in made.items()} == {
        "http_request": True, "shell_command": True, "file_read": False, "file_write": True}
    assert made["http_request"].parameters["required"] == ["url"]


# -- files --------------------------------------------------------------------------------------------------


def test_by_default_no_path_can_be_read_or_written(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    made = tools(tmp_path)
    assert refusal(made, "file_read", path="notes.txt").rule == "readable_paths"
    assert refusal(made, "file_write", path="out.txt", content="x").rule == "writable_paths"
    assert not (tmp_path / "out.txt").exists()


def test_reads_and_writes_inside_the_allowed_folders(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("policy v3")
    made = tools(tmp_path, readable_paths=["docs"], writable_paths=["out"])
    assert call(made, "file_read", path="docs/a.txt") == "policy v3"
    assert call(made, "file_write", path="out/sub/b.txt", content="hé") == {"path": "out/sub/b.txt", "bytes": 3}
    call(made, "file_write", path="out/sub/b.txt", content="!", append=True)
    assert (tmp_path / "out" / "sub" / "b.txt").read_text() == "hé!"
    assert call(made, "file_read", path="out/sub/b.txt") == "hé!"  # writable folders are readable too


def test_allowed_paths_is_the_older_name_of_writable_paths(tmp_path: Path) -> None:
    made = tools(tmp_path, allowed_paths=["out"])
    assert call(made, "file_write", path="out/x.txt", content="1")["bytes"] == 1


def test_dot_dot_and_symlinks_cannot_leave_an_allowed_folder(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "secret.txt").write_text("s3cret")
    (tmp_path / "docs" / "link.txt").symlink_to(tmp_path / "secret.txt")
    made = tools(tmp_path, readable_paths=["docs"], writable_paths=["docs"])
    assert refusal(made, "file_read", path="docs/../secret.txt").rule == "readable_paths"
    assert refusal(made, "file_read", path="docs/link.txt").rule == "readable_paths"
    assert refusal(made, "file_read", path=str(tmp_path / "secret.txt")).rule == "readable_paths"
    assert refusal(made, "file_write", path="docs/../evil.txt", content="x").rule == "writable_paths"


def test_max_write_bytes(tmp_path: Path) -> None:
    made = tools(tmp_path, writable_paths=["."], max_write_bytes=4)
    assert call(made, "file_write", path="ok.txt", content="1234")["bytes"] == 4
    error = refusal(made, "file_write", path="big.txt", content="12345")
    assert error.rule == "max_write_bytes"
    assert "writing 5 bytes is more than config.sandbox.max_write_bytes (4)" in str(error)
    assert not (tmp_path / "big.txt").exists()


# -- commands -----------------------------------------------------------------------------------------------


def test_commands_run_only_when_allowed(tmp_path: Path) -> None:
    made = tools(tmp_path)
    error = refusal(made, "shell_command", command="echo hi")
    assert error.rule == "allowed_commands"
    assert str(error) == (
        "sandbox refused shell_command: rule 'allowed_commands': 'echo' is not in config.sandbox.allowed_commands "
        "(allowed: none). How to fix: add 'echo' to config.sandbox.allowed_commands if the workflow may run it")


def test_an_allowed_command_runs_without_a_shell_in_the_workflow_folder(tmp_path: Path) -> None:
    made = tools(tmp_path, allowed_commands=["echo", "pwd"])
    assert call(made, "shell_command", command="echo 'a b' ; rm -rf x") == {
        "exit_code": 0, "stdout": "a b ; rm -rf x\n", "stderr": ""}
    assert call(made, "shell_command", command="pwd")["stdout"].strip() == str(tmp_path)


def test_a_disabled_sandbox_checks_nothing(tmp_path: Path) -> None:
    made = tools(tmp_path, enabled=False)
    result = call(made, "shell_command", command=f"{sys.executable} -c \"print(6 * 7)\"")
    assert result["stdout"] == "42\n"
    call(made, "file_write", path="anywhere.txt", content="x")
    assert call(made, "file_read", path="anywhere.txt") == "x"


# -- network ------------------------------------------------------------------------------------------------


@pytest.fixture
def local_server() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = f"got {self.path}".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = b"posted " + self.rfile.read(length)
            self.send_response(201)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_network_is_off_by_default(tmp_path: Path) -> None:
    assert refusal(tools(tmp_path), "http_request", url="https://example.org/").rule == "allow_network"


def test_allowed_domains_include_subdomains_only(tmp_path: Path) -> None:
    made = tools(tmp_path, allow_network=True, allowed_domains=["example.org"])
    error = refusal(made, "http_request", url="https://example.org.evil.test/")
    assert error.rule == "allowed_domains"
    assert refusal(made, "http_request", url="https://notexample.org/").rule == "allowed_domains"


def test_internal_targets_need_their_own_flag(tmp_path: Path) -> None:
    made = tools(tmp_path, allow_network=True)
    for url in ("http://127.0.0.1:9/", "http://localhost/", "http://10.0.0.8/", "http://169.254.169.254/latest",
                "http://100.100.100.200/latest/meta-data/", "http://[::ffff:100.64.0.1]/", "http://198.18.0.1/"):
        assert refusal(made, "http_request", url=url).rule == "allow_internal_targets"


IPV6_FORMS = ["::169.254.169.254", "::127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe",
              "64:ff9b:1::a9fe:a9fe", "2002:a9fe:a9fe::1", "2001:0:4136:e378:8000:63bf:5601:5601"]


@pytest.mark.parametrize("address", IPV6_FORMS)
def test_ipv6_forms_of_internal_ipv4_addresses_are_refused_as_written(tmp_path: Path, address: str) -> None:
    made = tools(tmp_path, allow_network=True)
    assert refusal(made, "http_request", url=f"http://[{address}]/latest/meta-data/").rule == "allow_internal_targets"


@pytest.mark.parametrize("address", IPV6_FORMS)
def test_ipv6_forms_of_internal_ipv4_addresses_are_refused_when_a_name_resolves_to_them(
        tmp_path: Path, address: str) -> None:
    sandbox = Sandbox(SandboxConfig(allow_network=True), base_dir=tmp_path)

    async def resolver(host: str, port: int) -> list[str]:
        return [address]

    with pytest.raises(SandboxRefusal) as info:
        asyncio.run(sandbox.check_resolved("https://metadata.example.org/latest/", resolver))
    assert info.value.rule == "allow_internal_targets" and address in str(info.value)


def test_a_name_resolving_into_carrier_grade_nat_is_refused(tmp_path: Path) -> None:
    sandbox = Sandbox(SandboxConfig(allow_network=True), base_dir=tmp_path)

    async def resolver(host: str, port: int) -> list[str]:
        return ["100.100.100.200"]

    with pytest.raises(SandboxRefusal, match="not a public address") as info:
        asyncio.run(sandbox.check_resolved("https://metadata.example.org/latest/meta-data/", resolver))
    assert info.value.rule == "allow_internal_targets"


def test_only_http_urls(tmp_path: Path) -> None:
    made = tools(tmp_path, enabled=False)
    assert refusal(made, "http_request", url="file:///etc/passwd").rule == "url"


def test_a_request_to_an_allowed_local_server(tmp_path: Path, local_server: str) -> None:
    made = tools(tmp_path, allow_network=True, allowed_domains=["127.0.0.1"], allow_internal_targets=True)
    assert call(made, "http_request", url=f"{local_server}/tickets/7") == {"status": 200, "body": "got /tickets/7"}
    assert call(made, "http_request", url=local_server, method="POST", body="x") == {"status": 201, "body": "posted x"}


def test_a_host_name_that_resolves_to_an_internal_address_is_refused(tmp_path: Path) -> None:
    sandbox = Sandbox(SandboxConfig(allow_network=True), base_dir=tmp_path)

    async def resolver(host: str, port: int) -> list[str]:
        return {"intranet.example.org": ["93.184.216.34", "10.1.2.3"], "mapped.example.org": ["::ffff:127.0.0.1"],
                "public.example.org": ["93.184.216.34"]}[host]

    for host, address in (("intranet.example.org", "10.1.2.3"), ("mapped.example.org", "::ffff:127.0.0.1")):
        with pytest.raises(SandboxRefusal) as info:
            asyncio.run(sandbox.check_resolved(f"https://{host}/x", resolver))
        assert info.value.rule == "allow_internal_targets"
        assert f"'{host}' resolves to {address}" in str(info.value)
    asyncio.run(sandbox.check_resolved("https://public.example.org/", resolver))
    allowed = Sandbox(SandboxConfig(allow_network=True, allow_internal_targets=True), base_dir=tmp_path)
    asyncio.run(allowed.check_resolved("https://intranet.example.org/", resolver))


def test_a_tool_step_with_a_built_in_follows_the_workflows_sandbox(tmp_path: Path) -> None:
    from pytest_agentloom import VirtualClock, run_workflow
    from pytest_agentloom.engine._format.loader import parse_workflow

    text = (
        "name: files\nconfig: {sandbox: {writable_paths: [out]}}\nsteps:\n"
        "  - {id: inside, type: tool, tool_name: file_write, tool_args: {path: out/a.txt, content: hi}}\n"
        "  - {id: outside, type: tool, tool_name: file_write, depends_on: [inside],\n"
        "     tool_args: {path: b.txt, content: hi}}\n"
    )
    workflow = parse_workflow(text, source=tmp_path / "files.yaml")
    result = run_workflow(workflow, clock=VirtualClock(), runs_dir=False)
    assert (tmp_path / "out" / "a.txt").read_text() == "hi"
    assert not (tmp_path / "b.txt").exists()
    assert result.steps["outside"].status == "failed"
    assert "sandbox refused file_write: rule 'writable_paths'" in result.steps["outside"].error



@pytest.mark.parametrize("speedups", ["1", "0"])
def test_the_built_ins_a_run_gets_follow_its_sandbox_and_folder(tmp_path: Path, speedups: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever ``run_tools`` keeps between runs, each run's built-ins check its own folder and settings; the
    settings cannot be changed in place (a changed copy is new settings)."""
    from pytest_agentloom.errors import UsageError
    from pytest_agentloom.tools import run_tools

    monkeypatch.setenv("AGENTLOOM_SPEEDUPS", speedups)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "docs").mkdir()
        (tmp_path / folder / "docs" / "n.txt").write_text(f"in {folder}")
    settings = SandboxConfig(readable_paths=["docs"])
    first, second = run_tools(settings, tmp_path / "a"), run_tools(settings, tmp_path / "a", {"mine": len})
    assert "mine" in second and "mine" not in first  # each run its own registry
    assert call(dict(first), "file_read", path="docs/n.txt") == "in a"
    assert call(dict(run_tools(settings, tmp_path / "b")), "file_read", path="docs/n.txt") == "in b"
    with pytest.raises(UsageError):
        settings.readable_paths.clear()
    with pytest.raises(ValidationError):
        settings.enabled = False
    closed = settings.model_copy(update={"readable_paths": []})
    assert refusal(dict(run_tools(closed, tmp_path / "a")), "file_read", path="docs/n.txt").rule == "readable_paths"
    opened = settings.model_copy(update={"enabled": False})
    assert call(dict(run_tools(opened, tmp_path / "a")), "file_write", path="w.txt", content="x")["bytes"] == 1
    assert call(dict(run_tools(settings, tmp_path / "a")), "file_read", path="docs/n.txt") == "in a"


# -- commands: what they run, with what environment --------------------------------------------------------


def test_an_allowed_name_never_runs_a_script_of_the_same_name_in_the_workflow_folder(tmp_path: Path) -> None:
    script = tmp_path / "bin" / "echo"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho pwned\n")
    script.chmod(0o755)
    made = tools(tmp_path, allowed_commands=["echo"])
    for command in ("bin/echo hi", "./bin/echo hi", f"{script} hi"):
        error = refusal(made, "shell_command", command=command)
        assert error.rule == "allowed_commands" and str(script) in str(error)
    assert call(made, "shell_command", command="echo hi")["stdout"] == "hi\n"  # the echo on PATH
    allowed_script = tools(tmp_path, allowed_commands=["bin/echo"])  # allowed by its own path: it runs
    assert call(allowed_script, "shell_command", command="./bin/echo")["stdout"] == "pwned\n"
    assert refusal(allowed_script, "shell_command", command="echo hi").rule == "allowed_commands"


def test_a_command_that_is_not_found_is_refused_before_anything_runs(tmp_path: Path) -> None:
    error = refusal(tools(tmp_path, allowed_commands=["no-such-program-x"]), "shell_command",
                    command="no-such-program-x")
    assert "was not found" in str(error)


def test_commands_get_a_minimal_environment_without_api_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-shell-0123456789")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-not-for-commands")
    monkeypatch.setenv("TICKET_QUEUE", "support")
    made = tools(tmp_path, allowed_commands=["printenv", "echo"], shell_env=["TICKET_QUEUE"])
    printed = call(made, "shell_command", command="printenv")["stdout"]
    assert "sk-canary-shell" not in printed and "tok-not-for-commands" not in printed
    assert "TICKET_QUEUE=support" in printed and "PATH=" in printed
    assert call(made, "shell_command", command="printenv OPENAI_API_KEY")["exit_code"] == 1
    # a key that reaches the output another way is scrubbed like everywhere else
    echoed = call(made, "shell_command", command="echo key=sk-canary-shell-0123456789")
    assert echoed["stdout"] == "key=<SCRUBBED>\n"
    disabled = tools(tmp_path, enabled=False)  # the environment stays minimal with the sandbox off
    assert "sk-canary-shell" not in call(disabled, "shell_command", command="printenv")["stdout"]


def test_an_api_key_cannot_be_passed_to_commands_through_shell_env() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="OPENAI_API_KEY holds an API key"):
        SandboxConfig(shell_env=["OPENAI_API_KEY"])


def test_arguments_of_an_allowed_command_are_outside_the_path_rules(tmp_path: Path) -> None:
    """Documented (SandboxConfig; docs/running-workflows.md): readable_paths does not reach a command's arguments."""
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("outside")
    try:
        made = tools(tmp_path, allowed_commands=["cat"], readable_paths=["data"])
        assert call(made, "shell_command", command=f"cat {outside}")["stdout"] == "outside"
        assert refusal(made, "file_read", path=str(outside)).rule == "readable_paths"
    finally:
        outside.unlink()


def test_http_request_connects_only_to_the_address_it_checked_dns_rebinding(
        tmp_path: Path, local_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check sees a public address; the connection, a moment later, would get 127.0.0.1: refused there."""
    from pytest_agentloom._core import addresses as addresses_module
    from pytest_agentloom.tools import _sandbox as sandbox_module

    async def public(host: str, port: int) -> list[str]:
        return ["93.184.216.34"]

    async def inside(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    monkeypatch.setattr(sandbox_module, "resolve_host", public)
    monkeypatch.setattr(addresses_module, "resolve_host", inside)
    port = local_server.rsplit(":", 1)[1]
    made = tools(tmp_path, allow_network=True)
    error = refusal(made, "http_request", url=f"http://rebind.example.org:{port}/tickets/7")
    assert error.rule == "allow_internal_targets" and "resolves to 127.0.0.1" in str(error)
    monkeypatch.setattr(addresses_module, "resolve_host", public)  # an honest answer goes through the same path
    monkeypatch.setattr(sandbox_module, "resolve_host", inside)
    opened = tools(tmp_path, allow_network=True, allow_internal_targets=True)
    assert call(opened, "http_request", url=f"{local_server}/tickets/7")["status"] == 200
