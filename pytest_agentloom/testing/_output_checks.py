"""Cheap, deterministic checks on outputs, each failing with a message that shows what differed.

Plain functions, importable from the package (``from pytest_agentloom import assert_similar``); each takes a
str or a :class:`~pytest_agentloom.engine._outcome.result.WorkflowResult` (read by its final output, or ``step=``'s,
as a judge reads it: see :func:`._judge.judge.judged_text`) and raises ``AssertionError``:

- :func:`assert_similar`: normalised edit-distance similarity to a reference, at least ``threshold``;
- :func:`assert_contains`: every needle appears in the text;
- :func:`assert_matches`: a regular expression is found in the text (``re.search``);
- :func:`assert_json_schema`: the output (or the JSON the text holds) fits a JSON Schema (``jsonschema``).

The distance between two embeddings needs a model call, so it is a method of the ``agentloom`` fixture
(``agentloom.assert_embedding_close``): its request is a one-step ``embed`` workflow run on the test's
provider, scripted, recorded and replayed like an ``embed`` step's. This module holds the assertion; the call
and the distance are in :mod:`._judge.embedding`, which the drift check's ``embedding`` comparison uses too.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import UsageError, render_message
from ._judge.embedding import EMBEDDING_STEP, cosine_distance, distance_from_run, embedding_workflow
from ._judge.judge import final_step, judged_text
from ._judge.verdict import shorten

__all__ = [
    "EMBEDDING_STEP",
    "assert_contains",
    "assert_json_schema",
    "assert_matches",
    "assert_similar",
    "check_distance",
    "cosine_distance",
    "distance_from_run",
    "embedding_workflow",
    "levenshtein",
    "similarity",
]

_DIFF_LINES = 20
_EXACT_CELLS = 4_000_000  # a failed assert_similar computes the exact score up to this table size (about a second)


# -- edit distance ---------------------------------------------------------------------------------------------


def similarity(text: str, reference: str, *, ignore_case: bool = False) -> float:
    """``1 - levenshtein(text, reference) / max(len)`` after collapsing runs of whitespace: 1.0 for the same
    text (two empty texts included), 0.0 for texts with nothing in common. Cost grows with ``len * len``.
    """
    a, b = _normal(text, ignore_case), _normal(reference, ignore_case)
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1.0 - levenshtein(a, b) / longest


def _normal(text: str, ignore_case: bool) -> str:
    flat = " ".join(text.split())
    return flat.casefold() if ignore_case else flat


def levenshtein(a: str, b: str, limit: int | None = None) -> int:
    """Insertions, deletions and substitutions that turn ``a`` into ``b``.

    With ``limit``, only the diagonal band of ``2 * limit + 1`` cells per row is filled and the answer is
    at most ``limit + 1`` ("more than the limit"): the cost grows with ``len * limit``, not ``len * len``,
    so a check with a high threshold stays cheap on long texts. The common ends are skipped first.
    """
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    a, b = a[start:], b[start:]
    while a and b and a[-1] == b[-1]:
        a, b = a[:-1], b[:-1]
    if len(a) < len(b):
        a, b = b, a
    width = len(a) if limit is None else limit  # a band as wide as the text is the whole table
    over = width + 1
    if len(a) - len(b) > width:
        return over
    previous = [j if j <= width else over for j in range(len(b) + 1)]
    for i, left in enumerate(a, 1):
        low, high = max(1, i - width), min(len(b), i + width)
        current = [over] * (len(b) + 1)
        current[0] = i if i <= width else over
        for j in range(low, high + 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (left != b[j - 1]), over)
        if min(current[low - 1:high + 1]) > width:
            return over
        previous = current
    return min(previous[-1], over)


def assert_similar(value: Any, reference: str, *, threshold: float = 0.8, step: str | None = None,
                   ignore_case: bool = False) -> float:
    """Fail unless :func:`similarity` of ``value``'s text and ``reference`` is at least ``threshold``; return it.

    Only distances up to what the threshold allows are computed (see :func:`levenshtein`); a failure on
    long texts may show the score as a bound ("below 0.62").
    """
    __tracebackhide__ = True
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise UsageError(render_message(
                f"assert_similar() got threshold={threshold!r}: it must be a number from 0 to 1.",
                hint="e.g. threshold=0.8 (1.0 asks for the same text)."))
    text, source = judged_text(value, step)
    a, b = _normal(text, ignore_case), _normal(_text_argument(reference, "reference"), ignore_case)
    longest = max(len(a), len(b))
    allowed = math.floor((1 - threshold) * longest + 1e-9)
    distance = levenshtein(a, b, allowed)
    if distance <= allowed:
        return 1.0 if longest == 0 else 1.0 - distance / longest
    exact = len(a) * len(b) <= _EXACT_CELLS
    score = 1.0 - (levenshtein(a, b) if exact else distance) / longest
    shown = f"{score:.2f}" if exact else f"below {score:.2f}"
    diff = list(difflib.unified_diff(reference.splitlines(), text.splitlines(), "reference", source, lineterm="", n=1))
    raise AssertionError(render_message(
        f"Text is {shown} similar to the reference (edit distance), below the threshold {threshold:g}.",
        [("text", source)], details=_cut([f"  {line}" for line in diff[2:]] or
                                         [f"  reference: {reference!r}", f"  text:      {text!r}"]),
    ))


# -- contains, regex, JSON Schema -----------------------------------------------------------------------------


def assert_contains(value: Any, *needles: str, step: str | None = None, ignore_case: bool = False) -> None:
    """Fail unless every one of ``needles`` appears in ``value``'s text, listing those that do not."""
    __tracebackhide__ = True
    if not needles:
        raise UsageError(render_message("assert_contains() got no text to look for.",
                                        hint="e.g. "
                                             "assert_contains(result, 'refund', 'sorry')."))
    text, source = judged_text(value, step)
    haystack = text.casefold() if ignore_case else text
    missing = [n for n in needles if (_text_argument(n, "needle").casefold() if ignore_case else n) not in haystack]
    if missing:
        raise AssertionError(render_message(
            f"Text does not contain {', '.join(repr(n) for n in missing)}"
            f"{' (ignoring case)' if ignore_case else ''}.",
            [("text", source)], details=_excerpt(text),
        ))


def assert_matches(value: Any, pattern: str | re.Pattern[str], *, step: str | None = None,
                   flags: int = 0) -> re.Match[str]:
    """Fail unless ``pattern`` is found in ``value``'s text (``re.search``); return the match."""
    __tracebackhide__ = True
    try:
        compiled = re.compile(pattern, flags) if isinstance(pattern, str) else pattern
    except re.error as exc:
        raise UsageError(render_message(f"assert_matches() got a pattern that does not compile: {pattern!r}: {exc}.",
                                        hint="correct the regular expression (r'...' keeps backslashes).")) from None
    if not isinstance(compiled, re.Pattern):
        raise UsageError(f"assert_matches() takes a str or a compiled pattern, got {type(pattern).__name__}.")
    text, source = judged_text(value, step)
    found = compiled.search(text)
    if found is None:
        raise AssertionError(render_message(f"Text does not match the pattern {compiled.pattern!r}.",
                                            [("text", source)], details=_excerpt(text)))
    return found


def assert_json_schema(value: Any, schema: Mapping[str, Any], *, step: str | None = None) -> Any:
    """Fail unless ``value`` fits the JSON Schema ``schema``; return the checked data.

    A result's output is checked as it is (a structured output is data already); a text (a str, or a text
    output) must hold JSON, which is parsed first. Every problem is listed with its path.
    """
    __tracebackhide__ = True
    from jsonschema import Draft202012Validator, SchemaError
    from jsonschema.validators import validator_for

    data, source = _json_data(value, step)
    try:
        cls = validator_for(schema, default=Draft202012Validator)
        cls.check_schema(schema)
    except SchemaError as exc:
        raise UsageError(render_message(
                f"assert_json_schema() got a schema that is not valid JSON Schema: {exc.message}.",
                hint="correct the schema (https://json-schema.org).")) from None
    errors = sorted(cls(schema).iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        lines = [f"  {_json_path(e.absolute_path)}: {e.message}" for e in errors]
        raise AssertionError(render_message(
            f"Output does not fit the JSON Schema: {len(errors)} problem{'s' if len(errors) != 1 else ''}.",
            [("output", source)], details=_cut(lines),
        ))
    return data


def _json_data(value: Any, step: str | None) -> tuple[Any, str]:
    __tracebackhide__ = True
    from ..engine._outcome.result import WorkflowResult

    if isinstance(value, WorkflowResult):
        text, source = judged_text(value, step)
        output = value.steps[step or final_step(value) or ""].output
        if not isinstance(output, str):
            return json.loads(text), source  # a structured output, as plain JSON data
    elif isinstance(value, str):
        text, source = value, "text"
    else:
        return value, "value"
    try:
        return json.loads(text), source
    except json.JSONDecodeError as exc:
        raise AssertionError(render_message(f"Output is not JSON, so it cannot fit the schema: {exc}.",
                                            [("output", source)], details=_excerpt(text))) from None


def _json_path(path: Iterable[Any]) -> str:
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)


# -- embedding distance ---------------------------------------------------------------------------------------


def check_distance(distance: float, max_distance: float, value: Any, reference: Any, *, step: str | None,
                   model: str) -> None:
    """Fail when ``distance`` is more than ``max_distance``, naming both texts."""
    __tracebackhide__ = True
    if distance <= max_distance:
        return
    text, source = judged_text(value, step)
    other, _ = judged_text(reference)
    raise AssertionError(render_message(
        f"Embeddings are {distance:.3f} apart (cosine distance), more than max_distance {max_distance:g}.",
        [("text", f"{source}: {shorten(text, 100)!r}"), ("reference", repr(shorten(other, 100))),
         ("model", model)],
    ))


# -- shared ----------------------------------------------------------------------------------------------------


def _text_argument(value: Any, what: str) -> str:
    __tracebackhide__ = True
    if not isinstance(value, str):
        raise UsageError(f"The {what} must be a str, got {type(value).__name__}: {value!r}.")
    return value


def _excerpt(text: str) -> list[str]:
    lines = text.splitlines() or [""]
    return _cut([f"  | {line}" for line in lines])


def _cut(lines: list[str]) -> list[str]:
    if len(lines) <= _DIFF_LINES:
        return lines
    return [*lines[:_DIFF_LINES], f"  ... {len(lines) - _DIFF_LINES} more lines"]
