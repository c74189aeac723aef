"""How a drift check compares a step's output on the replayed side with the live one.

A live model rarely answers with the same bytes twice, so "the output changed" alone
says little; what a reviewer wants is whether it changed *in meaning*. Each step is
compared by its declared method (:mod:`.._settings.drift_outputs` reads them):

- ``exact``: any difference is a regression;
- ``normalized``: equal once case, Unicode forms, punctuation and runs of white
  space are set aside; otherwise a regression;
- ``similarity:T``: a lexical score, the cosine of the two texts' word counts after
  normalizing (1.0 for the same words in any order, 0.0 for none shared); at or
  above ``T`` the change is benign, below it a regression. Offline and
  deterministic: no model is asked;
- ``ignore``: the change is listed, never a regression;
- ``embedding:T``: the cosine distance of the two outputs' embeddings, asked of an embedding model while the
  test ran (:mod:`.output_scores`); at most ``T`` is benign, more a regression;
- ``judge:RUBRIC``: a judge's verdict on each output by the rubric (asked likewise); the live output failing
  where the replayed one passed is a regression, the same pass or fail (or a pass where it failed) benign. The
  line shows both scores, the threshold and the judge's reasons, so a verdict near the threshold can be audited,
  and where the replayed verdict came from when not from a call (``judge 0.90 (snapshot) -> 0.68``: a committed
  verdict snapshot, see :mod:`.drift_verdicts`).

A method that asks a model and has no answer (its call failed, or nobody asked) counts as a regression.

A structured output is compared as its canonical JSON text (see :mod:`.trace_facts`).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._settings.drift_outputs import OutputMethod

__all__ = ["OutputVerdict", "compare_output", "normalized_text", "word_similarity"]

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class OutputVerdict:
    """One step's outputs compared: ``same`` (equal text), else ``benign`` or a regression, and why."""

    same: bool
    benign: bool
    detail: str


def compare_output(method: OutputMethod, old: str, new: str,
                   measured: Mapping[str, Any] | None = None) -> OutputVerdict:
    """``old`` (replayed) against ``new`` (live) by ``method``; ``measured`` is what the model said for a method
    that asks one (:mod:`.output_scores`)."""
    if old == new:
        return OutputVerdict(True, True, "same")
    if method.kind in ("embedding", "judge"):
        return _by_model(method, old, new, measured)
    if method.kind == "ignore":
        return OutputVerdict(False, True, "changed, not compared (ignore)")
    if method.kind == "normalized":
        if normalized_text(old) == normalized_text(new):
            return OutputVerdict(False, True, "same once normalized")
        return OutputVerdict(False, False, f"{_shown(old)} -> {_shown(new)} (normalized: differs)")
    if method.kind == "similarity":
        score = word_similarity(old, new)
        if score >= method.threshold:
            return OutputVerdict(False, True, f"similar ({score:.2f} >= {method.threshold:g})")
        return OutputVerdict(False, False, f"{_shown(old)} -> {_shown(new)} (similarity {score:.2f} < "
                                           f"{method.threshold:g})")
    return OutputVerdict(False, False, f"{_shown(old)} -> {_shown(new)} (exact: differs)")


def _by_model(method: OutputMethod, old: str, new: str, measured: Mapping[str, Any] | None) -> OutputVerdict:
    changed = f"{_shown(old)} -> {_shown(new)}"
    if not measured or measured.get("method") != str(method):
        return OutputVerdict(False, False, f"{changed} ({method.kind}: not measured, no model was asked)")
    if "error" in measured:
        return OutputVerdict(False, False, f"{changed} ({method.kind}: not measured: {measured['error']})")
    limit = f"{method.threshold:g}"
    if method.kind == "embedding":
        distance = float(measured["distance"])
        if distance <= method.threshold:
            return OutputVerdict(False, True, f"close by embedding (distance {distance:.3f} <= {limit})")
        return OutputVerdict(False, False, f"{changed} (embedding distance {distance:.3f} > {limit})")
    before, after = measured["old"], measured["new"]
    scores = f"judge {before['score']:.2f}{_origin(before)} -> {after['score']:.2f}{_origin(after)}"
    now = f"reason now: {_shown(after['reason'], 100)}"
    if before["passed"] and not after["passed"]:
        return OutputVerdict(False, False, f"{changed} ({scores} < {limit}: fails, passed before; {now}; "
                                           f"before: {_shown(before['reason'], 100)})")
    if after["passed"] and not before["passed"]:
        return OutputVerdict(False, True, f"{scores} >= {limit}: passes now, failed before ({now}; "
                                          f"before: {_shown(before['reason'], 100)})")
    both = "both pass" if after["passed"] else "both fail"
    return OutputVerdict(False, True, f"judged alike ({scores}, {both} at {limit}; {now})")


def _origin(side: Mapping[str, Any]) -> str:
    """Where a side's verdict came from, when not from a plain judge call: its verdict snapshot, or a note on the
    snapshot (stale, written; see :mod:`.drift_verdicts`)."""
    if side.get("source") == "snapshot":
        return " (snapshot)"
    return f" ({side['note']})" if side.get("note") else ""


def normalized_text(text: str) -> str:
    """``text`` with case, Unicode forms, punctuation and white space set aside: its words, one space apart."""
    return " ".join(_words(text))


def word_similarity(old: str, new: str) -> float:
    """The cosine of the two texts' word counts (1.0 for the same words in any order, 0.0 for none shared)."""
    a, b = Counter(_words(old)), Counter(_words(new))
    if not a or not b:
        return 1.0 if a == b else 0.0
    dot = sum(count * b[word] for word, count in a.items())
    return round(dot / math.sqrt(sum(c * c for c in a.values()) * sum(c * c for c in b.values())), 6)


def _words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def _shown(text: str, limit: int = 60) -> str:
    one_line = " ".join(text.split())
    return repr(one_line if len(one_line) <= limit else one_line[:limit] + "…")
