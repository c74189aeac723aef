"""Repetition statistics against hand-computed values."""

from __future__ import annotations

import pytest

from pytest_agentloom.testing._live.repetition_stats import RepetitionStats, pass_at_k, pass_hat_k, wilson_interval
from pytest_agentloom.testing._live.repetitions import Plan


def test_wilson_interval_by_hand() -> None:
    # 8 of 10, z = 1.96: centre (0.8 + 0.192) / 1.384 = 0.7167, half 1.96 * sqrt(0.016 + 0.0096) / 1.384 = 0.2266
    low, high = wilson_interval(8, 10)
    assert (round(low, 3), round(high, 3)) == (0.490, 0.943)
    low, high = wilson_interval(3, 3)  # all passed: the interval still says how little three runs prove
    assert (round(low, 3), high) == (0.439, 1.0)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_pass_at_k_and_pass_hat_k_by_hand() -> None:
    assert pass_hat_k(10, 8, 3) == pytest.approx(56 / 120)  # C(8,3) / C(10,3)
    assert pass_at_k(10, 8, 3) == 1.0  # only 2 failures: any 3 runs hold a pass
    assert pass_at_k(10, 2, 3) == pytest.approx(1 - 56 / 120)  # 1 - C(8,3) / C(10,3)
    assert pass_hat_k(5, 5, 3) == 1.0 and pass_at_k(5, 0, 3) == 0.0


@pytest.mark.parametrize(("outcomes", "label"), [
    (["passed"] * 4, "stable pass"), (["failed", "failed"], "stable fail"), (["passed", "failed"], "flaky"),
    (["passed", "skipped", "passed"], "stable pass"), (["skipped"], "no run"),
])
def test_labels(outcomes: list[str], label: str) -> None:
    assert RepetitionStats.of(outcomes).label == label


def test_the_summary_line() -> None:
    assert RepetitionStats.of(["passed"] * 8 + ["failed"] * 2).line() == (
        "pass rate 0.80 (95% CI 0.49-0.94) · pass@3 1.00 · pass^3 0.47 · pass@5 1.00 · pass^5 0.22 · flaky")


def test_early_stop_decides_as_soon_as_no_repetition_can_change_the_verdict() -> None:
    plan = Plan(repeat=10, min_pass_rate=0.8, early_stop=True)  # needs 8
    assert plan.decided(["passed"] * 7) is None
    assert plan.decided(["passed"] * 8) == "8 passes reach the 8 needed"
    assert plan.decided(["failed"] * 2) is None  # 8 left could still make it
    assert plan.decided(["failed"] * 3) == "0 passes and 7 left cannot reach the 8 needed"
    assert plan.decided(["passed"] * 10) is None  # the last one: nothing left to skip
