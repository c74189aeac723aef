"""How the drift check compares each step's output (``drift_outputs``: ini, marker or flag), as written.

One default method for every step and per-step overrides: ``"similarity:0.8"``,
``"draft=exact"`` lines, or a mapping ``{"draft": "exact", "*": "normalized"}``
(``*`` is the default). The methods are ``exact``, ``normalized``,
``similarity:T`` (0 <= T <= 1; the default is ``similarity:0.6``), ``ignore``, and two that ask a model
(the call recorded and replayed like any other): ``embedding:T`` or ``embedding(MODEL):T`` (T the largest
cosine distance that is benign, 0 <= T <= 2, default 0.2; MODEL default ``text-embedding-3-small``) and
``judge:RUBRIC``, ``judge(T):RUBRIC`` or ``judge(T, MODEL):RUBRIC`` (T the judge's pass threshold, default 0.7;
MODEL default ``gpt-4o-mini``; the rubric is the rest of its line, commas included);
what each does is in :mod:`.._live.output_compare`. Parsed here, where the
marker and ini checks read it, so that a mistyped method fails the session's start
or the test's setup, not the comparison at the end.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..._core.suggest import did_you_mean
from ...errors import render_message

__all__ = ["ASKING_METHODS", "DEFAULT_METHOD", "METHOD_NAMES", "OutputMethod", "OutputMethods", "parse_methods"]

METHOD_NAMES = ("exact", "normalized", "similarity", "ignore", "embedding", "judge")
#: The methods whose comparison asks a model (see :mod:`.._live.output_scores`).
ASKING_METHODS = ("embedding", "judge")
_DEFAULT_THRESHOLD = 0.6
#: Per method that takes one: the default threshold, its range and the default model (``""``: no model).
_DEFAULTS = {"similarity": (0.6, 1.0, ""), "embedding": (0.2, 2.0, "text-embedding-3-small"),
             "judge": (0.7, 1.0, "gpt-4o-mini")}
_SPELLED = re.compile(r"^\s*(?P<name>[A-Za-z_-]+)\s*(?:\((?P<options>[^)]*)\))?\s*(?::(?P<argument>.*))?$", re.DOTALL)


@dataclass(frozen=True)
class OutputMethod:
    """One way to compare two outputs. ``threshold``: ``similarity``'s least score, ``embedding``'s largest
    cosine distance, ``judge``'s pass threshold; ``model`` the model an ``embedding`` or ``judge`` asks and
    ``rubric`` the judge's rubric."""

    kind: str
    threshold: float = _DEFAULT_THRESHOLD
    model: str = ""
    rubric: str = ""

    def __str__(self) -> str:
        if self.kind == "similarity":
            return f"similarity:{self.threshold:g}"
        if self.kind == "embedding":
            return f"embedding({self.model}):{self.threshold:g}"
        if self.kind == "judge":
            return f"judge({self.threshold:g}, {self.model}):{self.rubric}"
        return self.kind


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
        pairs += _line_pairs(str(raw))
    return pairs


def _line_pairs(line: str) -> list[tuple[str, str]]:
    """The ``step=method`` pairs of one line, comma separated; a ``judge`` method's rubric is the rest of the line
    (commas and all), and ``=`` after a method's ``:`` or ``(`` belongs to it."""
    pairs: list[tuple[str, str]] = []
    rest = line
    while rest.strip():
        head, comma, tail = rest.partition(",")
        step, sep, text = head.partition("=")
        if not sep or re.search(r"[:(\s]", step.strip()):
            step, text = "", head
        if text.strip().lower().startswith("judge") and comma:
            text, tail = f"{text},{tail}", ""
        if text.strip() or step.strip():
            pairs.append((step.strip() or "*", text.strip()))
        rest = tail
    return pairs


_EXAMPLE = ("e.g. ini agentloom_drift_outputs = similarity:0.8 (a line 'draft=exact' per step that differs), or "
            "@pytest.mark.agentloom(drift_outputs={'draft': 'exact', '*': 'normalized'})")


def _method(text: str, source: str) -> OutputMethod:
    spelled = _SPELLED.match(text)
    name = spelled.group("name").lower() if spelled else text.strip().lower()
    options, argument = (spelled.group("options"), spelled.group("argument")) if spelled else (None, None)
    if name in ("exact", "normalized", "ignore") and options is None and argument is None:
        return OutputMethod(name)
    if name == "similarity" and options is None:
        return OutputMethod("similarity", _threshold(name, argument, source))
    if name == "embedding":
        model = (options or "").strip() if options is not None else _DEFAULTS[name][2]
        return OutputMethod(name, _threshold(name, argument, source), model=_model(name, model, source))
    if name == "judge":
        return _judge(options, argument, source)
    hint = did_you_mean(name, METHOD_NAMES)
    raise ValueError(render_message(
        f"{source}: unknown output comparison {text!r}; the methods are exact, normalized, similarity:T, ignore, "
        "embedding:T (or embedding(MODEL):T) and judge:RUBRIC (or judge(T, MODEL):RUBRIC).",
        hint=f"{hint + ' ' if hint else ''}{_EXAMPLE}"))


def _threshold(name: str, text: str | None, source: str) -> float:
    default, top, _ = _DEFAULTS[name]
    try:
        value = float(text) if text and text.strip() else default
    except ValueError:
        value = -1.0
    if 0.0 <= value <= top:
        return value
    what = {"similarity": "similarity threshold", "embedding": "embedding distance (the largest cosine distance "
            "that is benign)", "judge": "judge threshold"}[name]
    example = {"similarity": "similarity:0.8", "embedding": "embedding:0.15 or embedding(text-embedding-3-small):0.15",
               "judge": "judge(0.8):Answers the question and names the next step."}[name]
    raise ValueError(render_message(f"{source}: the {what} must be a number from 0 to {top:g} (got {text!r}).",
                                    hint=f"e.g. {example}"))


def _model(name: str, model: str, source: str) -> str:
    if model:
        return model
    example = f"{name}({'0.7, ' if name == 'judge' else ''}{_DEFAULTS[name][2]})"
    raise ValueError(render_message(f"{source}: {name}() names no model.",
                                    hint=f"give one, e.g. {example}, or leave the brackets out for the default"))


def _judge(options: str | None, rubric: str | None, source: str) -> OutputMethod:
    """``judge:RUBRIC``, ``judge(T):RUBRIC`` or ``judge(T, MODEL):RUBRIC``."""
    default, _, model = _DEFAULTS["judge"]
    if not rubric or not rubric.strip():
        raise ValueError(render_message(
            f"{source}: judge needs a rubric after its colon: what a good output does.",
            hint="e.g. judge:Answers the question and names the next step. (or judge(0.8, gpt-4o-mini):...)"))
    threshold = default
    if options is not None:
        first, _, second = options.partition(",")
        threshold = _threshold("judge", first, source)
        model = _model("judge", second.strip(), source) if second or "," in options else model
    return OutputMethod("judge", threshold, model=model, rubric=rubric.strip())
