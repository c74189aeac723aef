"""Redaction: keeping the secrets in a run's state out of everything the run saves.

Rules (README: Redaction):

- ``state_schema`` keys with ``redact: true`` are shell-style glob patterns,
  matched case-sensitively (:func:`fnmatch.fnmatchcase`) against each key's
  name and, for a nested key, its dotted path (``credentials.access_token``;
  list positions are left out of the dotted path, so ``users.password``
  matches the ``password`` of every item of ``users``).
- ``AGENTLOOM_REDACT_STATE_KEYS=api_key,*_token`` adds patterns to every run.
- A matching value is replaced by ``<REDACTED:sha256=…>``; a matching list or
  dictionary keeps its shape and has each value inside replaced. The marker is
  an HMAC-SHA256 of the value keyed with the project salt
  (:mod:`pytest_agentloom._redaction.salt`), cut to 16 hex digits: the same value
  always gives the same marker, and a short secret cannot be guessed back.
- Patterns match only the workflow's own data: the state, ``tool_args``,
  subworkflow ``input``, webhook ``headers`` and each step's ``output`` (whose
  ``steps.<id>.output`` copy is redacted whole when the output key matches).
  AgentLoom's own fields (``steps``, ``status``, ``max_tokens``, token usage,
  trace fields) are never matched, so ``*token*`` is a safe pattern.
- As a second line of defence, every string leaving the process is scrubbed of
  the secret values themselves (:meth:`Redactor.redact_text`): a prompt or a
  tool argument that embedded ``{state.api_key}`` shows the marker instead. The
  value of every ``*_API_KEY`` environment variable becomes ``<SCRUBBED>`` the
  same way, with or without patterns (a reply that repeats a key, a tool that
  prints one).
- A subworkflow inherits its parent's patterns (:meth:`Redactor.child`), and its own patterns apply
  to the parent too, so a child's secret returned to the parent stays redacted.

The state in memory is never changed: redaction always returns copies.
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .._core.plain import copy_plain, to_plain
from .._core.state_paths import parse_path
from ..engine._outcome.result import StepResult, WorkflowResult
from ..engine._outcome.trace import Trace, TraceEvent
from ..errors import UsageError
from .api_keys import API_KEY_MARKER, api_keys_from_env
from .salt import load_salt

if TYPE_CHECKING:
    from ..engine._format.model import Workflow

__all__ = [
    "MARKER_PATTERN",
    "MIN_SECRET_TEXT_LENGTH",
    "OWN_STATE_KEYS",
    "PATTERNS_ENV",
    "Redactor",
    "env_patterns",
    "make_marker",
]

PATTERNS_ENV = "AGENTLOOM_REDACT_STATE_KEYS"
MARKER_PATTERN = re.compile(r"<REDACTED:sha256=[0-9a-f]{16}>")
OWN_STATE_KEYS = ("steps", "_approval")
#: Secret values shorter than this are redacted where their key matches, but not searched for inside
#: other strings: replacing every "42" in every prompt would make traces unreadable.
MIN_SECRET_TEXT_LENGTH = 4


def make_marker(value: Any, *, salt: bytes) -> str:
    """The marker of ``value``: ``<REDACTED:sha256=`` + 16 hex digits of its salted HMAC + ``>``."""
    digest = hmac.new(salt, _canonical(value).encode("utf-8"), hashlib.sha256).hexdigest()
    return f"<REDACTED:sha256={digest[:16]}>"


def env_patterns(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Patterns from ``AGENTLOOM_REDACT_STATE_KEYS`` (comma-separated, blanks ignored)."""
    raw = (os.environ if env is None else env).get(PATTERNS_ENV, "")
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def _own_patterns(workflow: Workflow) -> list[str]:
    """``workflow``'s ``redact: true`` keys, then its subworkflows' (a child's secret stays one in the parent)."""
    own = [key for key, schema in workflow.state_schema.items() if schema.redact]
    for child in workflow.compiled.children.values():
        own.extend(_own_patterns(child))
    return own


_Parts = tuple[tuple[str, ...], Path | None, dict[str, str | None]]


def _parts(workflow: Workflow, inherited: tuple[str, ...], from_env: tuple[str, ...]) -> _Parts:
    """A redactor's patterns, the folder its salt is looked for from and the steps' outputs: worked out once
    per workflow object (a workflow given another ``source`` starts a new memo), inherited and
    environment patterns (see :meth:`Redactor.from_workflow`)."""
    made: dict[tuple[tuple[str, ...], tuple[str, ...]], _Parts] = workflow.memoized("redactor_parts", dict)
    key = (inherited, from_env)
    parts = made.get(key)
    if parts is None:
        patterns = (*inherited, *_own_patterns(workflow), *from_env)
        outputs = {step.id: step.output for step in workflow.steps}
        source = workflow.source
        parts = made[key] = (patterns, source.parent if source is not None else None, outputs)
    return parts


def _canonical(value: Any) -> str:
    """The text a value is hashed as: strings as themselves, anything else as canonical JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(to_plain(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class Redactor:
    """Applies one run's redaction patterns. Build it with :meth:`from_workflow`.

    ``salt`` keys the markers; without it the salt is read (or created) lazily,
    the first time a value is actually redacted, from ``AGENTLOOM_REDACTION_SALT``
    or ``.agentloom/salt`` in the project that holds ``salt_start``. A redactor
    with no patterns never reads a salt and changes nothing.
    """

    def __init__(
        self,
        patterns: Iterable[str] = (),
        *,
        salt: bytes | str | None = None,
        salt_start: Path | None = None,
        step_outputs: Mapping[str, str | None] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.patterns: tuple[str, ...] = tuple(dict.fromkeys(patterns))
        self._salt = salt.encode("utf-8") if isinstance(salt, str) else salt
        self._salt_start = salt_start
        self._env = env
        self.step_outputs: dict[str, str | None] = dict(step_outputs or {})
        #: ``*_API_KEY`` values of the environment: scrubbed from every string, patterns or not
        self.api_keys: tuple[str, ...] = tuple(api_keys_from_env(env))

    # -- building -------------------------------------------------------------------------------------------

    @classmethod
    def from_workflow(
        cls,
        workflow: Workflow,
        *,
        env: Mapping[str, str] | None = None,
        salt: bytes | str | None = None,
        inherited: Iterable[str] = (),
    ) -> Redactor:
        """Patterns of ``workflow``'s ``state_schema``, the environment, and a parent's ``inherited`` ones.

        Every run builds one of these, and the harness another for the requests it notes, so what
        comes from the definition (its patterns, its steps' outputs, the folder the salt is looked for
        from: a workflow given another ``source`` starts a new memo) is worked out once per workflow
        object and per set of environment patterns; what the environment holds (its patterns, its API
        keys) is read again on every call, and each redactor reads its own salt, so nothing a variable
        or the salt file changes is kept.
        """
        patterns, start, outputs = _parts(workflow, tuple(inherited), env_patterns(env))
        return cls(patterns, salt=salt, salt_start=start, step_outputs=outputs, env=env)

    @staticmethod
    def patterns_of(workflow: Workflow, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
        """The patterns :meth:`from_workflow` would give ``workflow``'s redactor, without building it: with
        none, nothing in a state is secret (:meth:`secret_values` is empty), so a caller may stop there."""
        return _parts(workflow, (), env_patterns(env))[0]

    def child(self, workflow: Workflow) -> Redactor:
        """The redactor of a subworkflow: its own patterns plus every pattern of this (parent) run."""
        return Redactor.from_workflow(workflow, env=self._env, salt=self._salt, inherited=self.patterns)

    @property
    def active(self) -> bool:
        """Whether any pattern is set; an inactive redactor returns its inputs unchanged (as copies)."""
        return bool(self.patterns)

    @property
    def salt(self) -> bytes:
        if self._salt is None:
            self._salt = load_salt(self._salt_start, env=self._env)
        elif not self._salt.strip():  # an HMAC keyed with nothing lets a short secret be guessed back
            raise UsageError("redaction_salt is empty: markers keyed with nothing could be reversed by guessing "
                             "short secrets.\nHow to fix: pass a long random salt, or leave redaction_salt out to "
                             "use the project's .agentloom/salt.")
        return self._salt

    def loaded_salt(self) -> bytes | None:
        """The salt if it was given or has been read, without reading it (``None`` otherwise)."""
        return self._salt if self.active else None

    # -- matching and markers -------------------------------------------------------------------------------

    def matches(self, name: str, path: str | None = None) -> bool:
        """Whether a key called ``name`` (at dotted ``path``, if nested) must be redacted."""
        for pattern in self.patterns:
            if fnmatch.fnmatchcase(name, pattern) or (path is not None and fnmatch.fnmatchcase(path, pattern)):
                return True
        return False

    def marker(self, value: Any) -> str:
        """``<REDACTED:sha256=…>`` for ``value``; the same value always gives the same marker.

        A value that already is a marker stays as it is, so redacting twice changes nothing.
        """
        if isinstance(value, str) and MARKER_PATTERN.fullmatch(value):
            return value
        return make_marker(value, salt=self.salt)

    def redact_value(self, value: Any) -> Any:
        """A whole value redacted: a scalar becomes its marker, containers keep their shape."""
        value = _as_data(value)
        if isinstance(value, Mapping):
            return {key: self.redact_value(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact_value(item) for item in value]
        return self.marker(value)

    # -- state ----------------------------------------------------------------------------------------------

    def redact_state(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``state`` with matching keys redacted, ``steps.<id>.output`` included.

        Strings elsewhere are scrubbed of the secret values found in ``state``.
        """
        secrets = self.secret_values(state)
        out: dict[str, Any] = {}
        for key, value in state.items():
            name = str(key)
            if name == "steps" and isinstance(value, Mapping):
                out[key] = self._redact_steps(value, secrets)
            elif name == "_approval":
                out[key] = self.redact_strings(value, secrets)
            elif self.active and self.matches(name):
                out[key] = self.redact_value(value)
            else:
                out[self._redact_key(key, secrets)] = self._walk(value, name, secrets)
        return out

    def redact_output(self, step_id: str, value: Any, secrets: list[str] | None = None) -> Any:
        """A step's output as saved: whole when the key it writes matches, else walked like state."""
        path = self.step_outputs.get(step_id)
        if path is not None and self.active:
            name, dotted = _output_names(path)
            if self.matches(name, dotted):
                return self.redact_value(value)
            return self._walk(value, dotted, secrets or [])
        return self._walk(value, None, secrets or [])

    def _redact_steps(self, steps: Mapping[str, Any], secrets: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for step_id, entry in steps.items():
            if isinstance(entry, Mapping):
                out[step_id] = {
                    field: self.redact_output(str(step_id), item, secrets) if field == "output"
                    else self.redact_strings(item, secrets)
                    for field, item in entry.items()
                }
            else:
                out[step_id] = self.redact_strings(entry, secrets)
        return out

    def _walk(self, value: Any, path: str | None, secrets: list[str]) -> Any:
        """Redact keys that match inside ``value`` (found at dotted ``path``); scrub every string."""
        value = _as_data(value)
        if isinstance(value, Mapping):
            out = {}
            for key, item in value.items():
                name = str(key)
                dotted = f"{path}.{name}" if path else name
                if self.active and self.matches(name, dotted):
                    out[self._redact_key(key, secrets)] = self.redact_value(item)
                else:
                    out[self._redact_key(key, secrets)] = self._walk(item, dotted, secrets)
            return out
        if isinstance(value, list | tuple):
            return [self._walk(item, path, secrets) for item in value]
        return self.redact_strings(value, secrets)

    def redact_mapping(self, mapping: Mapping[str, Any], secrets: list[str] | None = None) -> dict[str, Any]:
        """Workflow data keyed by the user (``tool_args``, ``input``, webhook headers), matched from its root."""
        walked = self._walk(dict(mapping), None, secrets or [])
        return walked if isinstance(walked, dict) else {}

    # -- raw values in text ---------------------------------------------------------------------------------

    def secret_values(self, state: Mapping[str, Any]) -> list[str]:
        """Every redacted value in ``state`` as text, longest first, for scrubbing raw text (cassettes).

        Strings are returned as they are; other scalars in their JSON form.
        Values shorter than :data:`MIN_SECRET_TEXT_LENGTH` are left out.
        """
        if not self.active:
            return []
        found: dict[str, None] = {}

        def collect(value: Any) -> None:
            value = _as_data(value)
            if isinstance(value, Mapping):
                for item in value.values():
                    collect(item)
            elif isinstance(value, list | tuple):
                for item in value:
                    collect(item)
            elif value is not None and not isinstance(value, bool):
                text = _canonical(value)
                if len(text) >= MIN_SECRET_TEXT_LENGTH and not MARKER_PATTERN.fullmatch(text):
                    found.setdefault(text)

        def visit(value: Any, path: str | None) -> None:
            value = _as_data(value)
            if isinstance(value, Mapping):
                for key, item in value.items():
                    name = str(key)
                    if path is None and name in OWN_STATE_KEYS:
                        continue
                    dotted = f"{path}.{name}" if path else name
                    if self.matches(name, dotted):
                        collect(item)
                    else:
                        visit(item, dotted)
            elif isinstance(value, list | tuple):
                for item in value:
                    visit(item, path)

        visit(state, None)
        for step_id, path in self.step_outputs.items():
            entry = (state.get("steps") or {}).get(step_id) if isinstance(state.get("steps"), Mapping) else None
            if path is not None and isinstance(entry, Mapping) and "output" in entry:
                name, dotted = _output_names(path)
                if self.matches(name, dotted):
                    collect(entry["output"])
        return sorted(found, key=lambda text: (-len(text), text))

    def redact_text(self, text: str, secrets: Iterable[str]) -> str:
        """``text`` with every occurrence of each secret replaced by that secret's marker, and of each API key
        of the environment by ``<SCRUBBED>`` (a model may repeat a key, a tool may print one)."""
        for secret in secrets:
            if secret and secret in text:
                text = text.replace(secret, self.marker(secret))
        for key in self.api_keys:
            if key in text:
                text = text.replace(key, API_KEY_MARKER)
        return text

    def redact_strings(self, value: Any, secrets: list[str]) -> Any:
        """A copy of ``value`` with :meth:`redact_text` applied to every string, dictionary keys included
        (a tool may key its result by a secret); keys are never matched against the patterns here."""
        value = _as_data(value)
        if isinstance(value, str):
            return self.redact_text(value, secrets) if secrets or self.api_keys else value
        if isinstance(value, Mapping):
            return {self._redact_key(key, secrets): self.redact_strings(item, secrets) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact_strings(item, secrets) for item in value]
        return value

    def _redact_key(self, key: Any, secrets: list[str]) -> Any:
        """A dictionary key with secret values replaced (string keys only: others cannot hold one)."""
        return self.redact_text(key, secrets) if (secrets or self.api_keys) and isinstance(key, str) else key

    # -- the workflow definition ----------------------------------------------------------------------------

    def redact_definition(self, definition: Mapping[str, Any], secrets: list[str]) -> dict[str, Any]:
        """A dumped workflow with its ``state:`` block, ``tool_args``, ``input`` and webhook headers redacted
        (those of a ``workflow_inline`` child too)."""
        out = dict(self.redact_strings(dict(definition), secrets))
        if isinstance(definition.get("state"), Mapping):
            # the file's own state: its key matching, plus the run's secrets
            out["state"] = self._walk_state_block(definition["state"], secrets)
        steps = []
        for raw in definition.get("steps") or []:
            step = dict(self.redact_strings(raw, secrets)) if isinstance(raw, Mapping) else raw
            if isinstance(raw, Mapping):
                for field in ("tool_args", "input"):
                    if isinstance(raw.get(field), Mapping):
                        step[field] = self.redact_mapping(raw[field], secrets)
                if isinstance(raw.get("workflow_inline"), Mapping):  # a child written in place: the same rules
                    step["workflow_inline"] = self.redact_definition(raw["workflow_inline"], secrets)
                notify = raw.get("notify")
                if isinstance(notify, Mapping) and isinstance(notify.get("headers"), Mapping):
                    step["notify"] = {**step["notify"], "headers": self.redact_mapping(notify["headers"], secrets)}
            steps.append(step)
        if "steps" in definition:
            out["steps"] = steps
        return out

    def _walk_state_block(self, block: Mapping[str, Any], secrets: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in block.items():
            name = str(key)
            out[key] = self.redact_value(value) if self.active and self.matches(name) else self._walk(
                value, name, secrets)
        return out

    # -- results and traces ---------------------------------------------------------------------------------

    def redact_result(self, result: WorkflowResult, secrets: list[str]) -> WorkflowResult:
        """The result as it may leave the process: state, step outputs, errors and trace redacted (copies)."""
        if not self.active and not self.api_keys:
            return _replaced(result, state=copy_plain(result.state))
        return _replaced(
            result,
            state=self.redact_state(result.state),
            steps={sid: self.redact_step(step, secrets) for sid, step in result.steps.items()},
            trace=self.redact_trace(result.trace, secrets),
        )

    def redact_step(self, result: StepResult, secrets: list[str]) -> StepResult:
        """A step's result with its output redacted like state, its error and reasoning scrubbed."""
        output = self.redact_output(result.step_id, result.output, secrets)
        error = self.redact_text(result.error, secrets) if result.error else result.error
        reasoning = result.reasoning_content
        if reasoning is not None and self.active:  # the reasoning text is redacted whenever the output is
            reasoning = self.redact_output(result.step_id, reasoning, secrets)
        return _replaced(result, output=output, error=error, reasoning_content=reasoning)

    def redact_trace(self, trace: Trace, secrets: list[str]) -> Trace:
        """A copy of ``trace`` with tool arguments matched by key and every string scrubbed of secret values."""
        events = []
        for event in trace:
            data = {}
            for key, value in event.data.items():
                if key == "args" and isinstance(value, Mapping):
                    data[key] = self.redact_mapping(value, secrets)
                else:
                    data[key] = self.redact_strings(value, secrets)
            events.append(TraceEvent(event.seq, event.time, event.kind, event.step_id, event.attempt, data))
        return Trace(events)

    def __repr__(self) -> str:
        return f"Redactor(patterns={list(self.patterns)!r})"


_Result = TypeVar("_Result", StepResult, WorkflowResult)


def _replaced(result: _Result, **changes: Any) -> _Result:
    """What ``dataclasses.replace(result, **changes)`` gives, without its walk over the fields.

    ``replace`` passes every field through ``__init__``; both result classes have only ``__init__``
    fields and no ``__post_init__``, so copying the attributes is the same and costs a fraction of
    it, once per run and once per step (tests compare the two).
    """
    copy = object.__new__(type(result))
    attributes = copy.__dict__
    attributes.update(result.__dict__)
    attributes.update(changes)
    return copy


def _output_names(path: str) -> tuple[str, str]:
    """The last key name and the dotted path (list positions dropped) of an ``output`` path."""
    try:
        segments = [segment for segment in parse_path(path) if isinstance(segment, str)]
    except ValueError:
        return path, path
    if not segments:
        return path, path
    return segments[-1], ".".join(segments)


def _as_data(value: Any) -> Any:
    """A pydantic instance (a structured output) as its fields, so patterns reach them as in a dictionary."""
    if not isinstance(value, type) and callable(getattr(value, "model_dump", None)):
        return value.model_dump(mode="json")
    return value
