"""How the drift check compares each step's output (``drift_outputs``: ini, marker or flag), as written.

One default method for every step and per-step overrides: ``"similarity:0.8"``,
``"draft=exact"`` lines, or a mapping ``{"draft": "exact", "*": "normalized"}``
(``*`` is the default). The methods are ``exact``, ``normalized``,
``similarity:T`` (0 <= T <= 1; the default is ``similarity:0.6``) and ``ignore``;
what each does is in :mod:`.._live.output_compare`. Parsed here, where the
marker and ini checks read it, so that a mistyped method fails the session's start
or the test's setup, not the comparison at the end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..._core.suggest import did_you_mean
from ...errors import render_message

__all__ = ["DEFAULT_METHOD", "METHOD_NAMES", "OutputMethod", "OutputMethods", "parse_methods"]

METHOD_NAMES = ("exact", "normalized", "similarity", "ignore")
_DEFAULT_THRESHOLD = 0.6


@dataclass(frozen=True)
class OutputMethod:
    """One way to compare two outputs; ``threshold`` is used by ``similarity`` only."""

    kind: str
    threshold: float = _DEFAULT_THRESHOLD

    def __str__(self) -> str:
        return f"similarity:{self.threshold:g}" if self.kind == "similarity" else self.kind


DEFAULT_METHOD = OutputMethod("similarity", _DEFAULT_THRESHOLD)


@dataclass(frozen=True)
class OutputMethods:
    """The method of every step: ``default``, unless ``per_step`` names the step."""

    default: OutputMethod = DEFAULT_METHOD
    per_step: tuple[tuple[str, OutputMethod], ...] = ()

    def for_step(self, step_id: str) -> OutputMethod:
        return dict(self.per_step).get(step_id, self.default)

    def to_wire(self) -> dict[str, str]:
        """Plain data (an xdist worker sends it with the facts): ``{"*": default, step: method, ...}``."""
        return {"*": str(self.default), **{step: str(method) for step, method in self.per_step}}


def parse_methods(value: Any, source: str) -> OutputMethods:
    """The methods written in ``value`` (a string of lines, a list of lines or a mapping; see the module docs).

    A ``ValueError`` naming ``source`` (the flag, ini key or marker argument) and the fix for anything else.
    """
    if value in (None, "", [], {}):
        return OutputMethods()
    if isinstance(value, OutputMethods):
        return value
    pairs = _pairs(value, source)
    default, per_step = DEFAULT_METHOD, {}
    for step, text in pairs:
        method = _method(text, f"{source} ({step}={text})" if step != "*" else source)
        if step == "*":
            default = method
        else:
            per_step[step] = method
    return OutputMethods(default, tuple(sorted(per_step.items())))


def _pairs(value: Any, source: str) -> list[tuple[str, str]]:
    if isinstance(value, Mapping):
        return [(str(step).strip(), str(text).strip()) for step, text in value.items()]
    lines: Iterable[Any] = value.splitlines() if isinstance(value, str) else value
    if not isinstance(lines, (list, tuple)) and not isinstance(value, str):
        raise ValueError(render_message(
            f"{source} must be a method, 'step=method' lines or a dict of step -> method (got {value!r}).",
            hint=_EXAMPLE))
    pairs = []
    for raw in lines:
        for line in str(raw).split(","):
            line = line.strip()
            if line:
                step, _, text = line.rpartition("=")
                pairs.append((step.strip() or "*", text.strip()))
    return pairs


_EXAMPLE = ("e.g. ini agentloom_drift_outputs = similarity:0.8 (a line 'draft=exact' per step that differs), or "
            "@pytest.mark.agentloom(drift_outputs={'draft': 'exact', '*': 'normalized'})")


def _method(text: str, source: str) -> OutputMethod:
    name, _, threshold = text.lower().partition(":")
    if name in ("exact", "normalized", "ignore") and not threshold:
        return OutputMethod(name)
    if name == "similarity":
        try:
            value = float(threshold) if threshold else _DEFAULT_THRESHOLD
        except ValueError:
            value = -1.0
        if 0.0 <= value <= 1.0:
            return OutputMethod("similarity", value)
        raise ValueError(render_message(f"{source}: the similarity threshold must be a number from 0 to 1 "
                                        f"(got {threshold!r}).", hint="e.g. similarity:0.8"))
    hint = did_you_mean(name, METHOD_NAMES)
    raise ValueError(render_message(
        f"{source}: unknown output comparison {text!r}; the methods are exact, normalized, similarity:T and ignore.",
        hint=f"{hint + ' ' if hint else ''}{_EXAMPLE}"))
