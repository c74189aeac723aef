"""The sandbox of the built-in tools: ``config.sandbox``, checked before anything runs.

Closed unless opened: with the defaults, ``shell_command`` runs nothing,
``file_read`` and ``file_write`` touch no path and ``http_request`` reaches no
host. Each refusal is a :class:`SandboxRefusal` whose ``rule`` names the
setting that refused and whose message says how to open it. Paths are
resolved (``..`` and symbolic links included) before they are compared, so a
path cannot walk out of an allowed folder. ``http_request`` refuses private,
loopback, link-local, reserved and multicast addresses, written as such or
resolved from a host name, unless ``allow_internal_targets`` is true.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from ..core.addresses import is_internal_address, is_internal_host, is_ip_literal, resolve_host
from ..errors import SandboxRefusal

__all__ = ["META_PROGRAMS", "Sandbox", "SandboxConfig", "SandboxRefusal"]

Scheme = Literal["http", "https"]
_SCHEMES: tuple[Scheme, ...] = ("http", "https")

#: Programs that run other programs: as upstream does, ``allowed_commands`` alone does not let them run.
META_PROGRAMS = frozenset({
    "env", "sh", "bash", "zsh", "fish", "ksh", "dash", "xargs", "python", "python3", "node", "perl", "ruby",
    "php", "lua", "awk", "eval", "source", ".", "exec", "nc", "ncat", "socat", "ssh",
})


class SandboxConfig(BaseModel):
    """What the built-in tools may touch (``config.sandbox``). Closed unless opened here.

    With ``enabled: false`` nothing is checked. Otherwise ``shell_command``
    runs only the programs in ``allowed_commands``; ``file_read`` reads only
    under ``readable_paths`` (and the writable ones); ``file_write`` writes
    only under ``writable_paths`` (``allowed_paths`` is the same list under
    its older name), at most ``max_write_bytes`` per call; ``http_request``
    needs ``allow_network`` and, when ``allowed_domains`` is not empty, a
    host in it (subdomains included). Relative paths are resolved against
    the workflow file's folder.
    """

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    allowed_commands: list[str] = Field(default_factory=list)
    readable_paths: list[str] = Field(default_factory=list)
    writable_paths: list[str] = Field(default_factory=list)
    allowed_paths: list[str] = Field(default_factory=list)
    allow_network: bool = False
    allowed_domains: list[str] = Field(default_factory=list)
    max_write_bytes: int = Field(default=1_000_000, ge=0)
    #: approval-gate webhooks (and other engine HTTP) may reach private, loopback and link-local addresses
    allow_internal_targets: bool = False
    #: upstream's: the URL schemes http_request may use (only http and https exist here)
    allowed_schemes: list[Scheme] = Field(default_factory=lambda: list(_SCHEMES))
    #: upstream's: programs that can run other programs (sh, python, env, ...) run only when also listed here
    danger_opt_in: list[str] = Field(default_factory=list)


class Sandbox:
    """``config.sandbox`` with the workflow's folder, as checks the built-in tools call."""

    def __init__(self, config: SandboxConfig | None = None, *, base_dir: str | os.PathLike[str] | None = None) -> None:
        self.config = config or SandboxConfig()
        self.base_dir = Path(base_dir) if base_dir is not None else Path.cwd()

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    def roots(self, entries: Sequence[str]) -> list[Path]:
        """The folders ``entries`` name, resolved like any path of the workflow."""
        return [self.resolve(entry) for entry in entries]

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """``path`` made absolute against the workflow's folder, with ``..`` and links resolved."""
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            candidate = self.base_dir / candidate
        return candidate.resolve()

    def check_command(self, argv: Sequence[str]) -> None:
        if not self.enabled:
            return
        if not argv:
            raise SandboxRefusal("shell_command", "allowed_commands", "the command is empty", "give a command")
        program = Path(argv[0]).name
        allowed = self.config.allowed_commands
        if program not in allowed and argv[0] not in allowed:
            shown = ", ".join(allowed) or "none"
            raise SandboxRefusal(
                "shell_command", "allowed_commands",
                f"'{program}' is not in config.sandbox.allowed_commands (allowed: {shown})",
                f"add '{program}' to config.sandbox.allowed_commands if the workflow may run it",
            )
        if program in META_PROGRAMS and program not in self.config.danger_opt_in:
            raise SandboxRefusal(
                "shell_command", "danger_opt_in",
                f"'{program}' can run any other program, so allowed_commands alone does not let it run",
                f"add '{program}' to config.sandbox.danger_opt_in as well, if the workflow really needs it",
            )

    def check_read(self, path: str | os.PathLike[str], tool: str = "file_read") -> Path:
        target = self.resolve(path)
        if not self.enabled:
            return target
        roots = self.roots([*self.config.readable_paths, *self.config.writable_paths, *self.config.allowed_paths])
        if not any(target.is_relative_to(root) for root in roots):
            raise SandboxRefusal(
                tool, "readable_paths",
                f"'{path}' is outside config.sandbox.readable_paths ({_shown(roots)})",
                "add its folder to config.sandbox.readable_paths",
            )
        return target

    def check_write(self, path: str | os.PathLike[str], size: int) -> Path:
        target = self.resolve(path)
        if not self.enabled:
            return target
        roots = self.roots([*self.config.writable_paths, *self.config.allowed_paths])
        if not any(target.is_relative_to(root) for root in roots):
            raise SandboxRefusal(
                "file_write", "writable_paths",
                f"'{path}' is outside config.sandbox.writable_paths ({_shown(roots)})",
                "add its folder to config.sandbox.writable_paths (allowed_paths is the same list)",
            )
        if size > self.config.max_write_bytes:
            raise SandboxRefusal(
                "file_write", "max_write_bytes",
                f"writing {size} bytes is more than config.sandbox.max_write_bytes ({self.config.max_write_bytes})",
                "write less, or raise config.sandbox.max_write_bytes",
            )
        return target

    async def check_resolved(self, url: str, resolve: Any = None) -> None:
        """Refuse a host *name* that resolves to an internal address, unless internal targets are allowed."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower().rstrip(".")
        if not self.enabled or self.config.allow_internal_targets or not host or is_ip_literal(host):
            return
        try:
            addresses = await (resolve or resolve_host)(host, parts.port or (443 if parts.scheme == "https" else 80))
        except OSError as exc:
            raise SandboxRefusal("http_request", "url", f"'{host}' could not be resolved ({exc})",
                                 "check the host name") from None
        for address in addresses:
            if is_internal_address(address):
                raise SandboxRefusal(
                    "http_request", "allow_internal_targets",
                    f"'{host}' resolves to {address}, a private, loopback or link-local address",
                    "set config.sandbox.allow_internal_targets: true if the workflow may reach local services",
                )

    def check_url(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SandboxRefusal("http_request", "url", f"'{url}' is not an http(s) URL with a host",
                                 "use a full URL such as https://example.org/path")
        if not self.enabled:
            return
        schemes = self.config.allowed_schemes
        if parts.scheme not in schemes:
            raise SandboxRefusal(
                "http_request", "allowed_schemes",
                f"'{parts.scheme}' is not in config.sandbox.allowed_schemes ({', '.join(schemes) or 'none'})",
                f"use {' or '.join(schemes) or 'https'}, or add '{parts.scheme}' to allowed_schemes",
            )
        host = parts.hostname.lower().rstrip(".")
        if not self.config.allow_network:
            raise SandboxRefusal(
                "http_request", "allow_network", f"network access is off, so '{host}' can't be reached",
                "set config.sandbox.allow_network: true (and list hosts in allowed_domains)",
            )
        domains = [domain.lower().strip(".") for domain in self.config.allowed_domains]
        if domains and not any(host == domain or host.endswith("." + domain) for domain in domains):
            raise SandboxRefusal(
                "http_request", "allowed_domains",
                f"'{host}' is not in config.sandbox.allowed_domains ({', '.join(domains)})",
                f"add '{host}' to config.sandbox.allowed_domains",
            )
        if is_internal_host(host) and not self.config.allow_internal_targets:
            raise SandboxRefusal(
                "http_request", "allow_internal_targets",
                f"'{host}' is a private, loopback or link-local address",
                "set config.sandbox.allow_internal_targets: true if the workflow may reach local services",
            )


def _shown(roots: list[Path]) -> str:
    return ", ".join(str(root) for root in roots) or "none"
