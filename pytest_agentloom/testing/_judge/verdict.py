"""A judge's answer as a value: :class:`Verdict`, what a judged assertion returns and a verdict snapshot keeps.

Apart from :mod:`.judge` (which asks the model) and :mod:`.verdicts` (which keeps the answers as files), so
that both use it and neither imports the other for it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ...errors import render_message

__all__ = ["Verdict", "sha256", "shorten", "verdict_key"]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def verdict_key(model: str, rubric: str, judged: str) -> dict[str, str]:
    """What a verdict snapshot is recorded for: a stored verdict is used only while all three still match."""
    return {"judged_sha256": sha256(judged), "rubric_sha256": sha256(rubric), "model": model}


def shorten(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis, for messages and snapshots."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True)
class Verdict:
    """A judge's answer: ``score`` (0..1), ``passed`` (``score >= threshold``), ``reason``, and what was judged.

    ``judged`` is the text the judge read and ``judged_from`` says where it came from (``the text passed``, or the run
    and step); ``rubric`` and ``model`` are as asked. Two verdicts are equal when all of these are.
    """

    score: float
    passed: bool
    reason: str
    threshold: float
    model: str
    rubric: str
    judged: str
    judged_from: str = "the text passed"

    @property
    def rubric_sha256(self) -> str:
        return sha256(self.rubric)

    @property
    def judged_sha256(self) -> str:
        return sha256(self.judged)

    def record(self) -> dict[str, Any]:
        """What a verdict snapshot keeps: the hashes that say what was judged, and the answer (see :mod:`.verdicts`)."""
        return {
            "model": self.model,
            "rubric_sha256": self.rubric_sha256,
            "judged_sha256": self.judged_sha256,
            "rubric": self.rubric,
            "judged": shorten(self.judged),
            "judged_from": self.judged_from,
            "threshold": self.threshold,
            "score": self.score,
            "passed": self.passed,
            "reason": self.reason,
        }

    def failure_message(self, label: str) -> str:
        """Why the test fails on this verdict: score, threshold, reason, rubric shortened."""
        return render_message(
            f"Judge {label} scored {self.score:g}, below the threshold {self.threshold:g}.",
            [("reason", self.reason), ("rubric", shorten(self.rubric, 120)), ("judged", f"{self.judged_from}: "
             f"{shorten(self.judged, 120)!r}"), ("model", self.model)],
        )
