"""The sandbox of the built-in tools: ``config.sandbox``, checked before anything runs.

Closed unless opened: with the defaults, ``shell_command`` runs nothing,
``file_read`` and ``file_write`` touch no path and ``http_request`` reaches no
host. Each refusal is a :class:`SandboxRefusal` whose ``rule`` names the
setting that refused and whose message says how to open it. Paths are
resolved (``..`` and symbolic links included) before they are compared, so a
path cannot walk out of an allowed folder. ``http_request`` refuses every
address that is not public (:func:`~pytest_agentloom._core.addresses.is_internal_address`:
private, loopback, link-local, carrier-grade NAT, reserved, multicast...),
written as such or resolved from a host name, unless ``allow_internal_targets``
is true; requests connect only to an address that was checked
(:meth:`Sandbox.http_transport`), which closes DNS rebinding.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .._core.addresses import is_internal_address, is_internal_host, is_ip_literal, public_only_transport, resolve_host
from .._core.readonly import read_only
from .._redaction.api_keys import is_api_key_name
from ..errors import SandboxRefusal
from ._beneath import open_beneath
from ._commands import (
    EVERYDAY,
    FOLDER_CODE,
    RUNS_PROGRAMS,
    command_names,
    copy_of,
    folder_options,
    needs_opt_in,
    normalized,
    refused_use,
    runs_programs_variable,
)

__all__ = ["META_PROGRAMS", "SHELL_ENV", "Sandbox", "SandboxConfig", "SandboxRefusal"]

#: The environment variables ``shell_command`` passes on by default (when set); ``sandbox.shell_env`` adds names.
SHELL_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TEMP", "TMP", "SYSTEMROOT", "PATHEXT")

Scheme = Literal["http", "https"]
_SCHEMES: tuple[Scheme, ...] = ("http", "https")

#: Programs that run other programs (every kind of :data:`._commands.RUNS_PROGRAMS`): ``allowed_commands``
#: alone does not let them run, as upstream's list; kept under its old name.
META_PROGRAMS = frozenset(name for members in RUNS_PROGRAMS.values() for name in members)


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

    ``allowed_commands`` entries and the command's program are compared as
    absolute paths, each found as it would run (a bare name on ``PATH``, a path
    from the workflow's folder). ``shell_command`` is outside the path rules:
    the *arguments* of an allowed program are not checked against
    ``readable_paths`` or ``writable_paths`` (``cat /etc/hostname`` runs when
    ``cat`` is allowed), so allow only programs whose every use is fine.
    Commands get a minimal environment (:data:`SHELL_ENV` plus ``shell_env``),
    with or without the sandbox, and never a ``*_API_KEY`` variable.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)  # part of a workflow, which cannot change

    def model_post_init(self, context: Any, /) -> None:
        for name in type(self).model_fields:
            value = getattr(self, name, None)  # None: a field model_construct was not given
            if type(value) is list:  # defaults included: they are not validated
                object.__setattr__(self, name, read_only(value))  # the frozen model's own field, set once

    enabled: bool = True
    allowed_commands: list[str] = Field(default_factory=list)
    readable_paths: list[str] = Field(default_factory=list)
    writable_paths: list[str] = Field(default_factory=list)
    allowed_paths: list[str] = Field(default_factory=list)
    allow_network: bool = False
    allowed_domains: list[str] = Field(default_factory=list)
    max_write_bytes: int = Field(default=1_000_000, ge=0)
    #: environment variables passed to ``shell_command`` besides :data:`SHELL_ENV` (never a ``*_API_KEY``)
    shell_env: list[str] = Field(default_factory=list)
    #: approval-gate webhooks (and other engine HTTP) may reach private, loopback and link-local addresses
    allow_internal_targets: bool = False
    #: upstream's: approval-gate webhooks only may reach loopback and private networks (never link-local
    #: or a cloud metadata address: :func:`pytest_agentloom._core.addresses.is_local_network_address`)
    allow_internal_webhook_targets: bool = False
    #: upstream's: the URL schemes http_request may use (only http and https exist here)
    allowed_schemes: list[Scheme] = Field(default_factory=lambda: list(_SCHEMES))
    #: upstream's: programs that can run other programs (sh, python, env, ...) run only when also listed here
    danger_opt_in: list[str] = Field(default_factory=list)

    @field_validator("shell_env")
    @classmethod
    def _no_api_keys(cls, names: list[str]) -> list[str]:
        keys = [name for name in names if is_api_key_name(name)]
        if keys:
            raise ValueError(f"{', '.join(keys)} holds an API key, which commands never get: remove it from "
                             "shell_env (pass what the command needs as an argument, or use a tool of your own)")
        return names

    @model_validator(mode="after")
    def _no_program_variables(self) -> SandboxConfig:
        named = [name for name in self.shell_env if runs_programs_variable(name) and name not in self.danger_opt_in]
        if named:
            raise ValueError(f"{', '.join(named)} can make a command run another program (git, a pager, an editor, "
                             "the loader...): list it in danger_opt_in too if commands really need it")
        return self


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

    def command_env(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment ``shell_command`` runs programs with: :data:`SHELL_ENV` plus ``shell_env``, if set."""
        source = os.environ if environ is None else environ
        names = [*SHELL_ENV, *self.config.shell_env]
        return {name: source[name] for name in names if name in source and not is_api_key_name(name)}

    def check_command(self, argv: Sequence[str], environ: Mapping[str, str] | None = None, *,
                      cwd: Path | None = None) -> list[str]:
        """``argv`` with its program as an absolute path, once that path is one of ``allowed_commands``.

        The program is found as the operating system would run it (a name on ``PATH``, a path against the
        workflow's folder, where commands run), and so is each allowed entry: ``echo`` allows the ``echo``
        found on ``PATH``, never a ``bin/echo`` of the workflow. The checked path is the one run.
        """
        if not argv:
            raise SandboxRefusal("shell_command", "allowed_commands", "the command is empty", "give a command")
        path = self.command_env(environ).get("PATH")
        program = self._program(argv[0], path)
        if not self.enabled:
            return [program or argv[0], *argv[1:]]
        if program is None:
            raise SandboxRefusal("shell_command", "allowed_commands",
                                 f"'{argv[0]}' was not found (on PATH, or from the workflow's folder)",
                                 "check the command's name, and give it as it is allowed")
        allowed = self.config.allowed_commands
        if program not in {self._program(entry, path) for entry in allowed}:
            shown = f"'{argv[0]}'" if Path(argv[0]).name == argv[0] else f"'{argv[0]}' ({program})"
            raise SandboxRefusal(
                "shell_command", "allowed_commands",
                f"{shown} is not in config.sandbox.allowed_commands (allowed: {', '.join(allowed) or 'none'})",
                f"add '{argv[0]}' to config.sandbox.allowed_commands if the workflow may run it",
            )
        names = command_names(argv[0], program)
        if not names & {normalized(os.path.basename(entry)) for entry in self.config.danger_opt_in}:
            self._check_danger(argv, program, names, path)
            self._check_folder_code(argv, names, cwd or self.base_dir)
        return [program, *argv[1:]]

    def _check_danger(self, argv: Sequence[str], program: str, names: set[str], path: str | None) -> None:
        """Refuse a program that runs other programs (or is asked to), unless ``danger_opt_in`` lists it.

        The policy is :mod:`._commands` (docs/sandbox.md has the table). A program inside
        ``writable_paths`` is refused whatever its name: ``file_write`` could replace what it holds.
        """
        writable = self.roots([*self.config.writable_paths, *self.config.allowed_paths])
        inside = [where for where in ((Path(program), Path(os.path.realpath(program))) if writable else ())
                  if any(where.is_relative_to(root) for root in writable)]
        if inside:
            raise SandboxRefusal(
                "shell_command", "writable_paths",
                f"'{argv[0]}' ({inside[-1]}) is inside config.sandbox.writable_paths, so file_write could change "
                "what it runs", "keep programs outside writable_paths (or list it in danger_opt_in)")
        found = needs_opt_in(names) or self._copy(argv[0], program, names, path) or refused_use(names, argv[1:])
        if found is not None:
            name, why = found
            raise SandboxRefusal("shell_command", "danger_opt_in", why,
                                 f"add '{name}' to config.sandbox.danger_opt_in as well, if the workflow really "
                                 "needs it (docs/sandbox.md lists what needs it)")

    def _check_folder_code(self, argv: Sequence[str], names: set[str], cwd: Path) -> None:
        """Refuse ``git`` or ``make`` working in a folder inside ``writable_paths``: they run what the folder
        says (a repository's config and hooks, a Makefile's recipes), which ``file_write`` could write."""
        runs_folder = sorted(names & FOLDER_CODE)
        if not runs_folder:
            return
        writable = self.roots([*self.config.writable_paths, *self.config.allowed_paths])
        folders = [cwd, *(cwd / value for value in folder_options(argv[1:]))]
        for folder in folders:
            resolved = folder.resolve()
            if any(resolved.is_relative_to(root) for root in writable):
                raise SandboxRefusal(
                    "shell_command", "writable_paths",
                    f"'{runs_folder[0]}' would work in {resolved}, inside config.sandbox.writable_paths, and run what "
                    "that folder says (git: its repository's config and hooks; make: its Makefile), which "
                    "file_write could write", f"run {runs_folder[0]} in a folder outside writable_paths, or add "
                    f"'{runs_folder[0]}' to config.sandbox.danger_opt_in")

    def _copy(self, written: str, program: str, names: set[str], path: str | None) -> tuple[str, str] | None:
        """The refusal of a renamed copy (or hard link) of a program that runs programs, judged by its bytes."""
        if names & EVERYDAY.keys():
            return None
        twin = copy_of(program, path)
        if twin is None:
            return None
        return normalized(os.path.basename(written)), (
            f"'{written}' is a copy of '{twin}', which can run any other program or expression, so "
            "allowed_commands alone does not let it run")

    def _program(self, command: str, path: str | None) -> str | None:
        """The absolute path ``command`` runs (``..`` removed, links kept: a multi-call binary stays apart)."""
        if os.sep in command or (os.altsep is not None and os.altsep in command):
            candidate = self.base_dir / Path(command).expanduser()
            return os.path.abspath(candidate) if candidate.is_file() else None
        found = shutil.which(command, path=path if path is not None else os.defpath)
        return os.path.abspath(found) if found is not None else None

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

    def open_checked(self, path: str | os.PathLike[str], target: Path, *, tool: str, append: bool = False) -> int:
        """A file descriptor of ``target`` (checked by :meth:`check_write`, or :meth:`check_read` for
        ``file_read``), opened beneath the allowed folder holding it with no link followed
        (:func:`._beneath.open_beneath`): a folder swapped for a link after the check fails the open
        with a :class:`SandboxRefusal`, instead of sending the write (or the read) outside.
        """
        writing = tool == "file_write"
        flags = (os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)) if writing \
            else os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
        rule = "writable_paths" if writing else "readable_paths"
        if not self.enabled:
            if writing:
                target.parent.mkdir(parents=True, exist_ok=True)
            return os.open(target, flags, 0o666)
        entries = [*self.config.writable_paths, *self.config.allowed_paths]
        roots = [root for root in self.roots(entries if writing else [*self.config.readable_paths, *entries])
                 if target.is_relative_to(root)]
        root = max(roots, key=lambda folder: len(folder.parts))  # check_* found one
        if writing:
            root.mkdir(parents=True, exist_ok=True)  # the allowed folder itself, as the settings name it
        try:
            return open_beneath(root, target.relative_to(root).parts, flags, make_folders=writing)
        except OSError as link:
            if link.errno != errno.ELOOP or link.filename is None:
                raise
            raise SandboxRefusal(
                tool, rule, f"'{path}' changed after it was checked: its part '{link.filename}' is now a symbolic "
                "link (or not a folder), which the sandbox never follows", "write to (or read) a path whose "
                "folders stay real folders",
            ) from None

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
                raise self.internal_refusal(host, address)

    def internal_refusal(self, host: str, address: str) -> SandboxRefusal:
        """The refusal of ``host`` resolving to the internal ``address``."""
        return SandboxRefusal(
            "http_request", "allow_internal_targets",
            f"'{host}' resolves to {address}, which is not a public address (private, loopback, "
            "link-local, carrier-grade NAT or another special-purpose range)",
            "set config.sandbox.allow_internal_targets: true if the workflow may reach local services",
        )

    def http_transport(self, **options: Any) -> Any:
        """The httpx transport requests go through: it connects only to the public addresses it checked
        (:func:`~pytest_agentloom._core.addresses.public_only_transport`); ``None`` (httpx's own) when the
        sandbox is off or internal targets are allowed."""
        if not self.enabled or self.config.allow_internal_targets:
            return None
        return public_only_transport(self.internal_refusal, **options)

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
                f"'{host}' is not a public address (private, loopback, link-local, carrier-grade NAT or another "
                "special-purpose range)",
                "set config.sandbox.allow_internal_targets: true if the workflow may reach local services",
            )


def _shown(roots: list[Path]) -> str:
    return ", ".join(str(root) for root in roots) or "none"
