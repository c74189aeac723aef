"""``assert_similar`` on long replies: the banded edit distance against the full table, paired rounds.

A reply of N characters is compared with a reference that differs in about 3% of its characters, at
threshold 0.9: the check only needs to know whether the distance is at most 10% of the length, so it fills
a diagonal band of the table (``levenshtein(a, b, limit)``) instead of all of it. Each round times both, in
alternating order, on the same texts; the ratio (full / banded) is the median of the rounds'. Run from the
repository root::

    python bench/similarity.py            # N = 500, 1000, 2000
    python bench/similarity.py --quick    # tiny sizes: checks the script runs
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from pytest_agentloom.testing._output_checks import assert_similar, levenshtein, similarity


def texts(size: int, seed: int = 15) -> tuple[str, str]:
    rng = random.Random(seed)
    words = ["the", "router", "restart", "ticket", "refund", "order", "sorry", "today", "we", "will"]
    reference = " ".join(rng.choice(words) for _ in range(size // 4))[:size]
    chars = list(reference)
    for index in rng.sample(range(len(chars)), len(chars) * 3 // 100):
        chars[index] = rng.choice("abcdefghij")
    return "".join(chars), reference


def timed(work) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sizes = (100, 200) if args.quick else (500, 1000, 2000)
    print(f"{'chars':>6} {'full ms':>9} {'banded ms':>10} {'ratio':>6}")
    for size in sizes:
        text, reference = texts(size)
        assert levenshtein(text, reference, size // 10) <= size // 10  # within the threshold: the check passes
        ratios, fulls, bands = [], [], []
        for round_ in range(args.rounds):
            full = lambda t=text, r=reference: similarity(t, r) >= 0.9  # noqa: E731
            banded = lambda t=text, r=reference: assert_similar(t, r, threshold=0.9)  # noqa: E731
            pair = (full, banded) if round_ % 2 == 0 else (banded, full)
            first, second = timed(pair[0]), timed(pair[1])
            f, b = (first, second) if round_ % 2 == 0 else (second, first)
            fulls.append(f)
            bands.append(b)
            ratios.append(f / b)
        print(f"{size:>6} {statistics.median(fulls) * 1000:>9.1f} {statistics.median(bands) * 1000:>10.1f} "
              f"{statistics.median(ratios):>6.1f}")


if __name__ == "__main__":
    main()
