"""What noting a workflow in a cassette's provenance costs per run: the meaning hash against the file hash.

Each run that uses a cassette notes its workflow (``CassetteSession.add_run``). Before, that hashed the
file's bytes; now it hashes the workflow's meaning (``workflow_meaning_hash``), loaded once per file and
then kept while the files it read hold the same bytes. Paired rounds in one process, on two example
workflows; prints the median per-call cost of each and their ratio. Run it from the repository root::

    python bench/provenance.py

A script, not a test.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_agentloom.replay._provenance import workflow_hash, workflow_meaning_hash  # noqa: E402

FILES = [ROOT / "examples/support_triage/triage.yaml", ROOT / "examples/research/research.yaml"]  # absolute, as
# a loaded workflow's source is


def per_call(hash_file: Callable[[Path], str], calls: int = 200) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        for path in FILES:
            hash_file(path)
    return (time.perf_counter() - started) / (calls * len(FILES))


def main() -> None:
    for path in FILES:
        workflow_meaning_hash(path)  # the first run of a file loads it (once per process)
    ratios, old, new = [], [], []
    for _ in range(15):
        before, after = per_call(workflow_hash), per_call(workflow_meaning_hash)
        old.append(before)
        new.append(after)
        ratios.append(after / before)
    print(f"file hash (before):    {statistics.median(old) * 1e6:8.1f} us per run")
    print(f"meaning hash (now):    {statistics.median(new) * 1e6:8.1f} us per run")
    print(f"ratio now/before:      {statistics.median(ratios):8.2f}x (median of paired rounds)")
    started = time.perf_counter()
    from pytest_agentloom.replay import _provenance

    _provenance._MEANINGS.clear()
    workflow_meaning_hash(FILES[0])
    print(f"first run of a file:   {(time.perf_counter() - started) * 1e6:8.1f} us (loads it once)")


if __name__ == "__main__":
    main()
