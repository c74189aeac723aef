"""Redaction: keeping the secrets in a run's state out of everything the run saves.

Rules (docs/redaction.md: Redaction):

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
  value of every credential variable of the environment (:mod:`.api_keys`)
  becomes ``<SCRUBBED>`` the same way, with or without patterns (a reply that
  repeats a key, a tool that prints one). Each value is replaced in each of its
  encoded forms (raw, JSON-escaped, URL-encoded, base64).
- A subworkflow inherits its parent's patterns (the engine's ``child_redactor``, in
  :mod:`pytest_agentloom.engine._format.redaction_patterns`), and its own patterns apply to the parent
  too, so a child's secret returned to the parent stays redacted.

The state in memory is never changed: redaction always returns copies.
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .._core.plain import to_plain
from .._core.state_paths import parse_path
from ..errors import UsageError, render_message
from .api_keys import api_keys_from_env
from .policy import POLICY, RedactionPolicy
from .salt import load_salt
from .sorted_json import resorted

__all__ = [
    "MARKER_PATTERN",
    "OWN_STATE_KEYS",
    "PATTERNS_ENV",
    "Redactor",
    "env_patterns",
    "make_marker",
]

PATTERNS_ENV = "AGENTLOOM_REDACT_STATE_KEYS"
OWN_STATE_KEYS = ("steps", "_approval")
#: the policy's marker pattern under its older name (defined in :mod:`.policy`, nowhere else)
MARKER_PATTERN = POLICY.marker_pattern


def make_marker(value: Any, *, salt: bytes, policy: RedactionPolicy = POLICY) -> str:
    """The marker of ``value`` as ``policy`` spells it (``<REDACTED:sha256=`` + 16 hex digits of its salted
    HMAC + ``>``)."""
    return policy.marker(_canonical(value), salt=salt)


def env_patterns(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Patterns from ``AGENTLOOM_REDACT_STATE_KEYS`` (comma-separated, blanks ignored)."""
    raw = (os.environ if env is None else env).get(PATTERNS_ENV, "")
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def _canonical(value: Any) -> str:
    """The text a value is hashed as: strings as themselves, anything else as canonical JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(to_plain(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class Redactor:
    """Applies one run's redaction patterns; the engine builds one per run from its workflow.

    (The engine's ``redactor_for`` reads the patterns, step outputs and salt folder of a workflow.)

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
        policy: RedactionPolicy = POLICY,
        key_variables: Iterable[str] = (),
    ) -> None:
        given = salt.encode("utf-8") if isinstance(salt, str) else salt
        #: the rules, this run's patterns and the salt if given: everything the redactor applies
        self.policy = policy.for_run(patterns, given)
        self.patterns: tuple[str, ...] = self.policy.patterns
        self._salt = given  # the policy's salt, or the project's once read (lazily: no patterns, no salt file)
        self._salt_start = salt_start
        self._env = env
        self.step_outputs: dict[str, str | None] = dict(step_outputs or {})
        #: the variables the workflow names as holding keys (``api_key_env``), whatever they are called
        self.key_variables: tuple[str, ...] = tuple(dict.fromkeys(key_variables))
        #: credential values of the environment (``*_API_KEY``, ``*_TOKEN``, ..., and ``key_variables``):
        #: scrubbed from every string, patterns or not
        self.api_keys: tuple[str, ...] = tuple(api_keys_from_env(env, self.key_variables))
        #: every encoded form of every API key, longest key first, and each secret's forms (see redact_text)
        self._key_forms = tuple(form for key in self.api_keys for form in self.policy.encoded_forms(key))
        self._secret_forms: dict[str, tuple[str, ...]] = {}

    def with_definition(self, patterns: Iterable[str], *, salt_start: Path | None,
                        step_outputs: Mapping[str, str | None], key_variables: Iterable[str] = ()) -> Redactor:
        """A redactor of other patterns and step outputs (a subworkflow's) with this one's environment, salt
        and key variables (plus ``key_variables``)."""
        return Redactor(patterns, salt=self._salt, salt_start=salt_start, step_outputs=step_outputs, env=self._env,
                        policy=self.policy, key_variables=(*self.key_variables, *key_variables))

    @property
    def env(self) -> Mapping[str, str] | None:
        """The environment this redactor reads its API keys and patterns from (``None``: the process's)."""
        return self._env

    @property
    def active(self) -> bool:
        """Whether any pattern is set; an inactive redactor returns its inputs unchanged (as copies)."""
        return bool(self.patterns)

    @property
    def salt(self) -> bytes:
        if self._salt is None:
            self._salt = load_salt(self._salt_start, env=self._env)
        elif not self._salt.strip():  # an HMAC keyed with nothing lets a short secret be guessed back
            raise UsageError(render_message(
                    "redaction_salt is empty: markers keyed with nothing could be reversed by guessing "
                    "short secrets.",
                    hint="pass a long random salt, or leave redaction_salt out to "
                         "use the project's .agentloom/salt."))
        return self._salt

    def loaded_salt(self) -> bytes | None:
        """The salt if it was given or has been read, without reading it (``None`` otherwise)."""
        return self._salt if self.active else None

    # -- matching and markers -------------------------------------------------------------------------------

    def too_short(self, state: Mapping[str, Any]) -> list[str]:
        """The dotted paths of redacted text values in ``state`` too short to be searched for in other text
        (1 to ``min_secret_text_length - 1`` characters): such a value would be redacted where its key is,
        but stay raw in a prompt or an output that embeds it, so a run refuses them (:func:`check_secret_lengths`).
        Empty text (nothing to leak) and non-text values (numbers, true/false) are not counted."""
        if not self.active:
            return []
        shortest = self.policy.min_secret_text_length
        return [path for path, value in self._redacted_leaves(state)
                if isinstance(value, str) and 0 < len(value) < shortest and not self.policy.is_marker(value)]

    def _redacted_leaves(self, state: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
        """Each scalar under a redacted key of ``state``, with its dotted path (the run's own keys left out):
        what both :meth:`too_short` and :meth:`secret_values` look at."""

        def visit(value: Any, path: str | None) -> Iterator[tuple[str, Any]]:
            value = _as_data(value)
            if isinstance(value, Mapping):
                for key, item in value.items():
                    name = str(key)
                    if path is None and name in OWN_STATE_KEYS:
                        continue
                    dotted = f"{path}.{name}" if path else name
                    yield from (_leaves(item, dotted) if self.matches(name, dotted) else visit(item, dotted))
            elif isinstance(value, list | tuple):
                for item in value:
                    yield from visit(item, path)

        return visit(state, None)

    def check_secret_lengths(self, state: Mapping[str, Any], *, given_as: str = "state= (--state)") -> None:
        """Refuse (:class:`~pytest_agentloom.errors.UsageError`) a state whose redacted text values include one
        shorter than the policy's ``min_secret_text_length`` (4 characters), naming the key: it could not be
        scrubbed from prompts and outputs that embed it without replacing every such short text everywhere."""
        short = self.too_short(state)
        if not short:
            return
        shortest = self.policy.min_secret_text_length
        others = f" (also: {', '.join(repr(path) for path in short[1:4])})" if len(short) > 1 else ""
        raise UsageError(render_message(
            f"state key '{short[0]}' is redacted (state_schema redact: true or {PATTERNS_ENV}) but its value is "
            f"shorter than {shortest} characters: so short a value cannot be scrubbed from the prompts and outputs "
            f"that embed it{others}.",
            hint=f"give it a value of {shortest} characters or more in {given_as} (a dummy secret in CI such as "
                 f"'dummy-token'), or leave it empty"))

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
        if isinstance(value, str) and self.policy.is_marker(value):
            return value
        return make_marker(value, salt=self.salt, policy=self.policy)

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
        Values shorter than the policy's ``min_secret_text_length`` are left out.
        """
        if not self.active:
            return []
        found: dict[str, None] = {}

        def keep(leaves: Iterator[tuple[str, Any]]) -> None:
            for _, value in leaves:
                if value is not None and not isinstance(value, bool):
                    text = _canonical(value)
                    if self.policy.searched_in_text(text):
                        found.setdefault(text)

        keep(self._redacted_leaves(state))
        for step_id, path in self.step_outputs.items():
            entry = (state.get("steps") or {}).get(step_id) if isinstance(state.get("steps"), Mapping) else None
            if path is not None and isinstance(entry, Mapping) and "output" in entry:
                name, dotted = _output_names(path)
                if self.matches(name, dotted):
                    keep(_leaves(entry["output"], dotted))
        return sorted(found, key=lambda text: (-len(text), text))

    def redact_text(self, text: str, secrets: Iterable[str]) -> str:
        """``text`` with every occurrence of each secret replaced by that secret's marker, and of each API key
        of the environment by ``<SCRUBBED>`` (a model may repeat a key, a tool may print one).

        Each value is replaced in every one of its :meth:`~.policy.RedactionPolicy.encoded_forms` (raw
        first, then JSON-escaped, URL-encoded, base64): a model echoing a secret inside a tool call's
        ``arguments`` writes it JSON-escaped. A JSON text with sorted keys is sorted again after
        (:func:`.sorted_json.resorted`), so a secret used as a key gives the same bytes in record and replay.
        """
        secrets = tuple(secrets)
        replaced = self._replaced(text, secrets)
        if replaced is text:
            return text
        return resorted(text, replaced, lambda part: self._replaced(part, secrets))

    def _replaced(self, text: str, secrets: Iterable[str]) -> str:
        """``text`` with each secret's and API key's forms replaced (itself when none is in it)."""
        known = self._secret_forms
        for secret in secrets:
            forms = known.get(secret)
            if forms is None:
                forms = known[secret] = self.policy.encoded_forms(secret)
            for form in forms:
                if form in text:
                    text = text.replace(form, self.marker(secret))
        for form in self._key_forms:
            if form in text:
                text = text.replace(form, self.policy.api_key_marker)
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

    def __repr__(self) -> str:
        return f"Redactor(patterns={list(self.patterns)!r})"


def _output_names(path: str) -> tuple[str, str]:
    """The last key name and the dotted path (list positions dropped) of an ``output`` path."""
    try:
        segments = [segment for segment in parse_path(path) if isinstance(segment, str)]
    except ValueError:
        return path, path
    if not segments:
        return path, path
    return segments[-1], ".".join(segments)


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Each scalar inside ``value`` with its dotted path below ``path`` (``a.b``, ``a[0]``)."""
    value = _as_data(value)
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}[{index}]")
    else:
        yield path, value


def _as_data(value: Any) -> Any:
    """A pydantic instance (a structured output) as its fields, so patterns reach them as in a dictionary."""
    if not isinstance(value, type) and callable(getattr(value, "model_dump", None)):
        return value.model_dump(mode="json")
    return value
