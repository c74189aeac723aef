"""Expected values in assertions on what a run recorded, where secrets are redacted.

A run's trace, outputs and state hold ``<REDACTED:sha256=…>`` markers, never the secrets. An assertion such as
``result.assert_tool_calls([("lookup", {"token": ...})])`` therefore compares with markers:

- :func:`redacted` is the expected value of a redacted one: ``redacted("helpdesk_token")`` stands for the marker
  of the state key ``helpdesk_token`` (so the call must have got that very secret), ``redacted()`` for any marker;
- an expected value that *is* one of the run's secrets (the test passed the real token) is compared as its
  marker, and a secret inside a longer expected text (``"Bearer <token>"``) is replaced the way the run replaced
  it in what it recorded; so a failure message shows markers, never the value.

:func:`resolve_expected` does both, given the run's redacted and unredacted final states; it is called by the
checks behind ``WorkflowResult.assert_tool_calls`` and ``assert_output``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import UsageError, render_message
from .policy import POLICY

__all__ = ["Redacted", "redacted", "resolve_expected"]


class Redacted:
    """The expected value of a redacted value: see :func:`redacted`. Unresolved, it equals any marker."""

    __slots__ = ("path",)

    def __init__(self, path: str | None = None) -> None:
        if path is not None and (not isinstance(path, str) or not path.strip()):
            raise UsageError(render_message(
                f"redacted() takes the state key whose secret is expected, got {path!r}.",
                hint="e.g. redacted('helpdesk_token'), or redacted() for any redacted value."))
        self.path = path

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and POLICY.is_marker(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "redacted()" if self.path is None else f"redacted({self.path!r})"


def redacted(path: str | None = None) -> Redacted:
    """An expected value that matches the redaction marker of the state key ``path`` (dotted for a nested key),
    or, without ``path``, any redacted value. For ``assert_tool_calls`` and ``assert_output`` (and ``==``).
    """
    return Redacted(path)


class _Marker(str):
    """A marker an expected value stands for, shown as ``redacted('key')`` in a failure message."""

    __slots__ = ("label",)
    label: str

    def __new__(cls, marker: str, label: str) -> _Marker:
        made = super().__new__(cls, marker)
        made.label = label
        return made

    def __repr__(self) -> str:
        return self.label


def resolve_expected(expected: Any, state: Mapping[str, Any], raw_state: Mapping[str, Any] | None) -> Any:
    """``expected`` with every :class:`Redacted` bound to the run's marker and every secret of the run replaced
    by its marker (see the module docs); ``state`` is the run's redacted final state, ``raw_state`` its
    unredacted one (``None``: nothing is known of the secrets, and only :func:`redacted` is resolved)."""
    secrets = dict(_secret_pairs(raw_state, state)) if raw_state is not None else {}
    return _resolve(expected, state, secrets)


def _resolve(value: Any, state: Mapping[str, Any], secrets: dict[str, str]) -> Any:
    if isinstance(value, Redacted):
        return value if value.path is None else _bound(value, state)
    if isinstance(value, dict):
        return {_resolve(key, state, secrets): _resolve(item, state, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolve(item, state, secrets) for item in value]
    if isinstance(value, tuple):
        return tuple(_resolve(item, state, secrets) for item in value)
    if isinstance(value, str) and secrets:
        return _scrubbed(value, secrets)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and str(value) in secrets:
        return secrets[str(value)]  # a number the run redacted (a PIN): its marker
    return value


def _bound(expected: Redacted, state: Mapping[str, Any]) -> _Marker:
    path = expected.path or ""
    value: Any = state
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if isinstance(value, str) and POLICY.is_marker(value):
        return _Marker(value, repr(expected))
    found = sorted(".".join(parts) for parts, _ in _markers(state, ()))
    raise UsageError(render_message(
        f"{expected!r}: the run's state has no redacted value at '{path}'.",
        [("redacted keys", ", ".join(found) or "none")],
        hint="name a key that the workflow's state_schema marks redact: true (dotted for a nested key), "
             "or use redacted() for any redacted value."))


def _markers(state: Any, parts: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
    """The paths (keys only) and markers of every redacted value of a state."""
    if isinstance(state, Mapping):
        for key, item in state.items():
            if key != "steps":  # the engine's copies of outputs: the keys they were written to are named
                yield from _markers(item, (*parts, str(key)))
    elif isinstance(state, str) and POLICY.is_marker(state) and parts:
        yield parts, state


def _secret_pairs(raw: Any, redacted_value: Any) -> Iterator[tuple[str, str]]:
    """(secret as text, its marker) for each place the redacted state holds a marker and the raw one a value."""
    if isinstance(redacted_value, str) and POLICY.is_marker(redacted_value):
        if isinstance(raw, str) and raw != redacted_value:
            yield raw, redacted_value
        elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
            yield str(raw), redacted_value
        return
    if isinstance(raw, Mapping) and isinstance(redacted_value, Mapping):
        for key, item in redacted_value.items():
            if key in raw:
                yield from _secret_pairs(raw[key], item)
    elif isinstance(raw, list) and isinstance(redacted_value, list) and len(raw) == len(redacted_value):
        for raw_item, item in zip(raw, redacted_value, strict=True):
            yield from _secret_pairs(raw_item, item)


def _scrubbed(text: str, secrets: dict[str, str]) -> str:
    """``text`` as the run would have recorded it: a whole secret is its marker; one inside a longer text (of
    the length the run searches for) is replaced there, longest first."""
    if text in secrets:
        return secrets[text]
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= POLICY.min_secret_text_length and secret in text:
            text = text.replace(secret, secrets[secret])
    return text
