"""Recorded results of tools with side effects, for replay.

While a cassette records, every call of a tool with side effects (the
built-ins ``file_write``, ``shell_command``, ``http_request``, and any tool
registered with ``side_effects=True``) runs for real and its result is kept.
While a cassette replays, such a tool does not run: the recorded result of the
first unused call with the same tool and the same arguments is returned (an
exception is raised again with the same type name and message). A call the
recording doesn't have raises :class:`ToolReplayMissError`, which fails the
step like an unmatched model request: it is not handed to the model as a tool
error. ``allow_real`` (``True``, or names of tools) lets those tools run for
real during replay.

With ``append`` (the cassette's ``new_episodes`` mode) the recording keeps its
calls: a call it has is replayed (not run), a call it lacks runs and is added.
:meth:`ToolTape.unused_message` names the recorded calls a replay never used
(the workflow no longer makes them), which fails the test like unused cassette
interactions; tools allowed to run for real are left out of it.

The tape is a YAML file next to the cassette (``<cassette>.tools.yaml``) with
``format_version`` 1 and one entry per call: ``tool``, ``arguments``, and
``result`` or ``error`` (``type``, ``message``, ``code``). ``redact`` (the
cassette's scrubber) takes secret values out of the file; calls are matched
on their scrubbed arguments, so a recorded marker matches the real value.

Matching sees a redacted value as "a redacted value", not as its digest: the
arguments are scrubbed as data (keys too), every marker made alike, and only
then sorted. So a replay with a dummy secret (a CI job without the real one)
matches the call recorded with the real secret, and a secret used as a key
sorts the same in record and replay. ``AGENTLOOM_SECRET_MARKERS=exact`` makes
matching compare the digests too, for a test that must tell two secrets apart.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from .._core.arguments import bad_argument
from .._core.files import write_text_atomic
from .._core.yaml_io import read_yaml_file
from .._redaction.http_traffic import redact_data
from .._redaction.policy import POLICY
from ..errors import (
    STEP_FAILURES,
    ArtifactError,
    DataReadError,
    ToolDriftError,
    ToolError,
    ToolReplayMissError,
    render_message,
)
from ..tools._registry import Tool, ToolRegistry, as_tool

__all__ = ["TAPE_FORMAT_VERSION", "ToolReplayMissError", "ToolTape", "tape_path"]

TAPE_FORMAT_VERSION = 1


def tape_path(cassette: str | os.PathLike[str]) -> Path:
    """Where the tool results of a cassette live: ``flow.yaml`` -> ``flow.tools.yaml``."""
    path = Path(cassette)
    return path.with_name(f"{path.stem}.tools.yaml")


def _key(name: str, arguments: Mapping[str, Any], redact: Callable[[str], str], *, exact: bool = False) -> str:
    """What a call is matched on: the tool, and its arguments scrubbed as data (keys included), markers made
    alike unless ``exact``, then sorted: the same text whether the secret was raw (the run) or a marker
    (the file), and whichever secret a marker stands for."""
    scrubbed = redact_data(_plain(arguments), redact)
    return f"{name}:{json.dumps(scrubbed if exact else POLICY.alike(scrubbed), sort_keys=True, separators=(',', ':'))}"


def _plain(value: Any) -> Any:
    from .._core.plain import to_plain

    return to_plain(value)


def _allowed(path: object, *, allow_real: object, redact: object, **flags: object) -> bool | frozenset[str]:
    """``allow_real`` as the tape keeps it, once :class:`ToolTape`'s arguments are checked: refused where they
    were written, not when the tape is read or saved much later."""
    if not isinstance(path, (str, os.PathLike)):
        raise bad_argument("ToolTape()", "path", path, "a file path (a string or a pathlib.Path)")
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise bad_argument("ToolTape()", name, value, "True or False")
    if redact is not None and not callable(redact):
        raise bad_argument("ToolTape()", "redact", redact, "a function from text to text, or None")
    if isinstance(allow_real, bool):
        return allow_real
    names = tuple(allow_real) if isinstance(allow_real, Iterable) and not isinstance(allow_real, (str, bytes)) else None
    if names is None or not all(isinstance(name, str) for name in names):
        raise bad_argument("ToolTape()", "allow_real", allow_real,
                           "True or False, or a list of the names of the tools that may run for real")
    return frozenset(names)


class ToolTape:
    """One test's recorded tool results: ``wrap`` a registry, run, then ``save`` (when recording)."""

    def __init__(self, path: str | os.PathLike[str], *, recording: bool,
                 allow_real: bool | Iterable[str] = False, redact: Callable[[str], str] | None = None,
                 append: bool = False) -> None:
        allowed = _allowed(path, recording=recording, allow_real=allow_real, redact=redact, append=append)
        self.path = Path(path)
        self.redact = redact or (lambda text: text)  # secrets out of the file, and out of the matching
        self.recording = recording
        self.append = append and recording
        self.allow_real = allowed
        self.entries: list[dict[str, Any]] = self._load() if (self.append or not recording) else []
        self.loaded_count = len(self.entries)  # the calls that came from the file (the rest were recorded now)
        self._used: set[int] = set()
        self.recorded: list[dict[str, Any]] = []
        #: tools run for real over a replay *and compared with the recording* (``--agentloom-live-tools``):
        #: the first result that differs fails its step with a :class:`ToolDriftError`
        self.compare: frozenset[str] = frozenset()
        self._calls: dict[str, int] = {}  # calls of each compared tool so far

    def _load(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        fix = "re-record the test with --agentloom-record (which replaces the file), or restore it from git."
        try:
            data = read_yaml_file(self.path)
        except DataReadError as exc:
            raise ArtifactError("Tool recording", f"{exc.problem}{exc.at_line}", file=str(self.path),
                                hint=fix) from None
        if not isinstance(data, dict):
            raise ArtifactError("Tool recording", f"it holds a {type(data).__name__}, not a mapping with "
                                "'format_version' and 'calls'", file=str(self.path), hint=fix)
        version = data.get("format_version")
        if version != TAPE_FORMAT_VERSION:
            raise ToolReplayMissError(
                render_message(f"Tool recording {self.path} has format_version {version!r}; this version reads "
                               f"{TAPE_FORMAT_VERSION}.",
                               hint="re-record the test with --agentloom-record.")
            )
        calls = data.get("calls") or []
        bad = _bad_call(calls)
        if bad:
            raise ArtifactError("Tool recording", bad, file=str(self.path), hint=fix)
        return list(calls)

    def runs_for_real(self, name: str) -> bool:
        if self.recording or name in self.compare:
            return True
        return self.allow_real is True or (isinstance(self.allow_real, frozenset) and name in self.allow_real)

    def wrap(self, tools: Mapping[str, Any]) -> ToolRegistry:
        """The same tools, those with side effects going through this tape."""
        wrapped = ToolRegistry()
        for name, value in tools.items():
            made = as_tool(value, name)
            wrapped.register(self._wrap(made) if made.side_effects else made)
        return wrapped

    def wrap_run_tools(self, workflow: Any, tools: Any = None) -> ToolRegistry:
        """A run's tools as the runner would register them (the built-ins bound to ``workflow``'s sandbox,
        then ``tools``), those with side effects going through this tape."""
        from ..tools._builtins import builtin_tools
        from ..tools._sandbox import Sandbox

        registry = ToolRegistry(builtin_tools(Sandbox(workflow.config.sandbox, base_dir=workflow.base_dir)))
        registry.update(tools or {})
        return self.wrap(registry)

    def _wrap(self, made: Tool) -> Tool:
        async def through_tape(**arguments: Any) -> Any:
            if self.append and (index := self._match(made.name, arguments)) is not None:
                return self._use(index)  # already recorded: replayed, not run again
            if not self.recording and made.name in self.compare:
                return await self._compared(made, arguments)
            if self.runs_for_real(made.name):
                return await self._record(made, arguments)
            return self._replay(made.name, arguments)

        return Tool(name=made.name, function=through_tape, description=made.description,
                    parameters=made.parameters, side_effects=True)

    async def _record(self, made: Tool, arguments: dict[str, Any]) -> Any:
        entry: dict[str, Any] = {"tool": made.name, "arguments": _plain(arguments)}
        try:
            value = await made.invoke(arguments)
        except Exception as exc:
            entry["error"] = {"type": type(exc).__name__, "message": str(exc),
                              "code": exc.code if isinstance(exc, STEP_FAILURES) else None}
            self._keep(entry)
            raise
        entry["result"] = _plain(value)
        self._keep(entry)
        return value

    async def _compared(self, made: Tool, arguments: dict[str, Any]) -> Any:
        """Run the tool for real and hold its result against the recorded call with these arguments."""
        index = self._match(made.name, arguments)
        calls = self._calls[made.name] = self._calls.get(made.name, 0) + 1
        try:
            value = await made.invoke(arguments)
        except Exception as exc:
            real: dict[str, Any] = {"error": {"type": type(exc).__name__, "message": str(exc)}}
        else:
            real = {"result": _plain(value)}
        if index is None:
            raise self._drift(made.name, calls, arguments, None, real)
        self._used.add(index)
        entry = self.entries[index]
        recorded = ({"error": {key: entry["error"].get(key) for key in ("type", "message")}} if "error" in entry
                    else {"result": entry.get("result")})
        if POLICY.alike(redact_data(real, self.redact)) != POLICY.alike(redact_data(recorded, self.redact)):
            raise self._drift(made.name, calls, arguments, recorded, real)
        if "error" in real:
            raise _replayed_error(entry["error"])
        return value

    def _drift(self, name: str, call: int, arguments: Mapping[str, Any], recorded: dict[str, Any] | None,
               real: dict[str, Any]) -> ToolDriftError:
        """The first divergence: where (step, model turn, call), and a short diff of recorded -> real."""
        from .._core.diffs import path_diff
        from .._core.step_notes import running_step, tool_call_place

        step, place = running_step.get(), tool_call_place.get()
        where = [f"step '{step}'" if step else "outside a step"]
        if place is not None:
            where.append(f"turn {place[0]}")
        where.append(f"call {call} of '{name}'" + (f" ({place[1]})" if place is not None else ""))
        shown = self.redact(json.dumps(_plain(arguments), sort_keys=True))
        if recorded is None:
            details = ["  the recording has no call to it with these arguments"]
        else:
            details = ["  recorded -> real:", *(f"    {line}" for line in path_diff(
                redact_data(recorded, self.redact), redact_data(real, self.redact)))]
        return ToolDriftError(render_message(
            f"Tool '{name}' ran for real and returned something else than its recording ({', '.join(where)}): "
            f"the replay stops here, before the next model turn goes off the cassette.",
            [("arguments", shown), ("recording", _shown_path(self.path))], details=details,
            hint="if the tool's new result is intended, re-record the test with --agentloom-record; "
                 "otherwise the tool changed: fix it"))

    def _keep(self, entry: dict[str, Any]) -> None:
        if self.recording:
            self.entries.append(entry)
        self.recorded.append(entry)

    def _match(self, name: str, arguments: dict[str, Any]) -> int | None:
        """The first unused call from the file with this tool and these arguments."""
        exact = POLICY.exact_markers()
        wanted = _key(name, arguments, self.redact, exact=exact)  # recorded arguments were scrubbed: compare alike
        for index, entry in enumerate(self.entries[:self.loaded_count]):
            if index not in self._used and _key(entry["tool"], entry.get("arguments") or {}, self.redact,
                                                exact=exact) == wanted:
                return index
        return None

    def _use(self, index: int) -> Any:
        self._used.add(index)
        entry = self.entries[index]
        if "error" in entry:
            raise _replayed_error(entry["error"])
        return entry["result"]

    def _replay(self, name: str, arguments: dict[str, Any]) -> Any:
        index = self._match(name, arguments)
        if index is not None:
            return self._use(index)
        same_tool = [entry.get("arguments") for entry in self.entries if entry["tool"] == name]
        shown = self.redact(json.dumps(_plain(arguments), sort_keys=True))
        raise ToolReplayMissError(
            render_message(
                f"Tool '{name}' has side effects, and the recording has no call to it with these arguments, "
                f"so it was not run: {shown}\n"
                f"  recording: {self.path}\n"
                f"  recorded calls to '{name}': {json.dumps(same_tool, sort_keys=True) if same_tool else 'none'}",
                hint="re-record the test with --agentloom-record, or let the tool run for real during "
                     "replay (allow_real).")
        )

    def unused(self) -> list[dict[str, Any]]:
        """Calls from the file that no run used, except those of tools that ran for real instead."""
        return [entry for index, entry in enumerate(self.entries[:self.loaded_count])
                if index not in self._used and (self.recording or not self.runs_for_real(entry["tool"]))]

    def unused_message(self, test: str = "", how_to_record: str = "") -> str | None:
        """Why a replay that left recorded tool calls unused should fail, or ``None`` when all were used."""
        unused = self.unused()
        if not unused:
            return None
        shown = [f"    {entry['tool']} {self.redact(json.dumps(entry.get('arguments') or {}, sort_keys=True))}"
                 for entry in unused[:10]]
        if len(unused) > 10:
            shown.append(f"    ... and {len(unused) - 10} more")
        who = f"Test {test}" if test else "The run"
        fix = f"re-record the test: {how_to_record}" if how_to_record else "re-record the test with --agentloom-record"
        return render_message(
            f"{who} did not make {len(unused)} of the {self.loaded_count} recorded tool calls with side effects: "
            "the workflow now calls these tools fewer times, or with other arguments, than when it was recorded.",
            [("recording", self.path)], details=["  unused:", *shown], hint=f"if the change is intended, {fix}.",
        )

    def save(self) -> Path | None:
        """Write the recording atomically (only when recording something)."""
        text = self.pending_text()
        if text is None:
            return None
        write_text_atomic(self.path, text, durable=True)
        return self.path

    def pending_text(self) -> str | None:
        """The scrubbed text :meth:`save` would write now, or ``None`` when it would write nothing."""
        if not self.recording or not self.entries:
            return None
        import yaml

        calls = redact_data(self.entries, self.redact)  # as data first: YAML may fold a multi-line value
        text = yaml.safe_dump({"format_version": TAPE_FORMAT_VERSION, "calls": calls}, sort_keys=False,
                              allow_unicode=True)
        return self.redact(text)


def _bad_call(calls: Any) -> str | None:
    """What is wrong with a tape's ``calls`` (``None`` when each is ``{tool, arguments, result | error}``)."""
    if not isinstance(calls, list):
        return f"'calls' is a {type(calls).__name__}, not a list"
    for number, call in enumerate(calls, 1):
        if not isinstance(call, dict) or not isinstance(call.get("tool"), str):
            return f"call {number} is not a mapping with a 'tool' name"
        if not isinstance(call.get("arguments") or {}, dict):
            return f"call {number}: 'arguments' is not a mapping"
        if "error" in call and not isinstance(call["error"], dict):
            return f"call {number}: 'error' is not a mapping"
        if "error" not in call and "result" not in call:
            return f"call {number} has neither 'result' nor 'error'"
    return None


def _replayed_error(error: Mapping[str, Any]) -> Exception:
    if error.get("code"):
        return ToolError(str(error.get("message", "")), code=str(error["code"]))
    kind = type(str(error.get("type") or "ToolError"), (Exception,), {})
    return kind(str(error.get("message", "")))


def _shown_path(path: Path) -> str:
    """``path`` relative to the current folder when it is under it (a message's path, short), else whole."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)
