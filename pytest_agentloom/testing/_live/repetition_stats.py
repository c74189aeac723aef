"""What a test's live repetitions say beyond a pass rate: an interval, pass@k and pass^k, and a label.

From ``n`` repetitions of which ``c`` passed (skipped ones left out: they say nothing
of the model):

- the **Wilson score interval** (95 %) of the pass rate, which stays inside 0..1 and
  is honest for small ``n`` (3 of 3 passes is "0.44 to 1.00", not "1.00");
- **pass@k**, the chance that at least one of ``k`` fresh runs passes, and **pass^k**,
  the chance that all ``k`` pass, both estimated without bias from the ``n`` runs
  (``1 - C(n-c, k) / C(n, k)`` and ``C(c, k) / C(n, k)``: drawing ``k`` of the runs
  seen, without replacement), for ``k`` of 3, 5 and 10 below ``n``;
- a **label**: ``stable pass`` (every run passed), ``stable fail`` (none did) or ``flaky``.

Plain arithmetic on counts: the same outcomes give the same figures, so they can be
checked by hand and recomputed from the kept repetition cassettes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["RepetitionStats", "pass_at_k", "pass_hat_k", "wilson_interval"]

_Z95 = 1.959963984540054  # the 97.5 % point of the standard normal distribution
_KS = (1, 3, 5, 10)


def wilson_interval(passes: int, runs: int, z: float = _Z95) -> tuple[float, float]:
    """The Wilson score interval of ``passes / runs`` (``(0.0, 1.0)`` with no runs)."""
    if runs <= 0:
        return 0.0, 1.0
    rate = passes / runs
    scale = 1 + z * z / runs
    centre = (rate + z * z / (2 * runs)) / scale
    half = z * math.sqrt(rate * (1 - rate) / runs + z * z / (4 * runs * runs)) / scale
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_at_k(runs: int, passes: int, k: int) -> float:
    """The unbiased estimate that at least one of ``k`` runs passes (``k <= runs``)."""
    if runs - passes < k:
        return 1.0
    return 1.0 - math.comb(runs - passes, k) / math.comb(runs, k)


def pass_hat_k(runs: int, passes: int, k: int) -> float:
    """The unbiased estimate that all of ``k`` runs pass (``k <= runs``)."""
    return math.comb(passes, k) / math.comb(runs, k)


@dataclass(frozen=True)
class RepetitionStats:
    """The figures of one test's repetitions (see the module docs)."""

    runs: int
    passes: int

    @classmethod
    def of(cls, outcomes: Sequence[str]) -> RepetitionStats:
        counted = [outcome for outcome in outcomes if outcome != "skipped"]
        return cls(len(counted), counted.count("passed"))

    @property
    def label(self) -> str:
        if not self.runs:
            return "no run"
        return "stable pass" if self.passes == self.runs else "stable fail" if not self.passes else "flaky"

    def ks(self) -> list[int]:
        return [k for k in _KS if k < self.runs]  # at k = n they only repeat "any passed" and "all passed"

    def line(self) -> str:
        """``pass rate 0.80 (95% CI 0.49-0.94) · pass@3 1.00 · pass^3 0.47 · flaky``."""
        if not self.runs:
            return "no repetition passed or failed (all skipped)"
        low, high = wilson_interval(self.passes, self.runs)
        parts = [f"pass rate {self.passes / self.runs:.2f} (95% CI {low:.2f}-{high:.2f})"]
        parts += [f"pass@{k} {pass_at_k(self.runs, self.passes, k):.2f} · pass^{k} "
                  f"{pass_hat_k(self.runs, self.passes, k):.2f}" for k in self.ks() if k > 1]
        return " · ".join([*parts, self.label])
