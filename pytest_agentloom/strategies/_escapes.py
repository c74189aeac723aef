"""Escape attempts: arguments of the built-in tools that try to get out of the workflow's sandbox.

A generated script gives a step that offers a built-in tool some calls that a careless model (or a prompt
injection) would make: paths out of the allowed folders, programs that are not allowed or that run other
programs, internal and cloud-metadata addresses. :func:`escape_attempts` lists, simplest first, only those
the workflow's own sandbox refuses (asked when the strategy is made), so a correct built-in runs none of
them: ``http_request`` never connects anywhere (the sandbox refuses before any connection, and no address
here is an external host), and with the default closed sandbox nothing runs at all. If a bug lets one
through anyway, it does little harm: a read of ``/etc/passwd``, ``id``, a small new file named
``agentloom-fuzz-escape.txt`` (never an existing file).
"""

from __future__ import annotations

from typing import Any

from ..tools import Sandbox
from ._sandbox_check import refusal_due

__all__ = ["ESCAPE_FILE", "escape_attempts"]

#: the file an escaping ``file_write`` would create: a new name, so a sandbox bug clobbers nothing
ESCAPE_FILE = "agentloom-fuzz-escape.txt"

#: (never a key or the environment: a sandbox bug the search finds must not put a secret in the test's output)
_READS = ("/etc/passwd", "../outside.txt", "../../../../../../../../etc/passwd")
_WRITES = (f"../{ESCAPE_FILE}", f"/tmp/{ESCAPE_FILE}", f"../../../../../../../../tmp/{ESCAPE_FILE}")
#: programs not allowed, or that run another program (sh -c, env, xargs, an interpreter), or read a secret
_COMMANDS = ("id", "sh -c id", "env id", "xargs id", "python3 -c 'print(1)'", "cat /etc/passwd", "/bin/sh -c id")
#: internal, loopback and metadata addresses, written as IP literals or localhost: refused without DNS
_URLS = ("http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:1/", "http://10.0.0.1/",
         "http://localhost:1/", "http://[::1]:1/", "http://0.0.0.0:1/", "file:///etc/passwd")


def escape_attempts(tool: str, sandbox: Sandbox) -> list[dict[str, Any]]:
    """Arguments of the built-in ``tool`` that ``sandbox`` refuses, simplest first (empty for another tool)."""
    config = sandbox.config
    if tool == "file_read":
        roots = [*config.readable_paths, *config.writable_paths, *config.allowed_paths]
        made = [{"path": path} for path in (*_READS, *_beside(sandbox, roots, "outside.txt"))]
    elif tool == "file_write":
        roots = [*config.writable_paths, *config.allowed_paths]
        made = [{"path": path, "content": "x"} for path in (*_WRITES, *_beside(sandbox, roots, ESCAPE_FILE))]
    elif tool == "shell_command":
        allowed = [entry for entry in config.allowed_commands if entry.strip()]
        made = [{"command": command} for command in _COMMANDS]
        made += [{"command": f"env {entry}"} for entry in allowed[:1]]  # an allowed program, run by one that isn't
        made.append({"command": allowed[0] if allowed else "ls", "cwd": "/"})
    elif tool == "http_request":
        made = [{"url": url} for url in _URLS]
    else:
        return []
    return _refused(sandbox, tool, made)


def _beside(sandbox: Sandbox, entries: list[str], name: str) -> list[str]:
    """Paths that leave each allowed folder: up out of it as written, and into a sibling whose name starts the
    same (``/srv/data_sibling`` next to ``/srv/data``: a check that compares paths as text lets it through)."""
    paths: list[str] = []
    for entry, root in zip(entries[:2], sandbox.roots(entries[:2]), strict=True):
        paths += [f"{entry.rstrip('/')}/../{name}", f"{root}_sibling/{name}"]
    return paths


def _refused(sandbox: Sandbox, tool: str, attempts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The attempts ``sandbox`` refuses, each once: one it allows is no escape (and ``http_request`` must never
    be generated a call its sandbox would let connect)."""
    kept: list[dict[str, Any]] = []
    for arguments in attempts:
        if arguments not in kept and refusal_due(sandbox, tool, arguments) is not None:
            kept.append(arguments)
    return kept
