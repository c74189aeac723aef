"""Redaction cost: a 50-step chain whose state holds a redacted secret, with an API key in the environment.

Every string a run saves is scrubbed of each secret and key in each of its encoded forms (raw, JSON-escaped,
URL-encoded, base64), so this is the run the extra forms cost most in. Run it from the repository root::

    python bench/redaction.py              # runs per second (median of several repeats)
    PYTHONPATH=/work/main python bench/redaction.py   # the same run on another checkout

For a figure that holds on a loaded machine, count instructions instead of timing:
``valgrind --tool=callgrind python bench/redaction.py --runs 5 --repeats 1`` on each checkout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

if not os.environ.get("PYTHONPATH"):  # this checkout, unless another is named
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_agentloom import Scripted, VirtualClock, run_workflow
from pytest_agentloom.engine._format.loader import parse_workflow

LENGTH = 50
SECRET = "päss-wört-canary-0123456789"


def chain() -> object:
    """``LENGTH`` llm_call steps, each prompt embedding the redacted token and the previous output."""
    lines = ["name: bench-redaction", "config: {model: gpt-4o-mini}", "state_schema: {token: {redact: true}}",
             "state: {token: '', topic: tides}", "steps:",
             "  - {id: s00, type: llm_call, prompt: 'Start on {state.topic} with {state.token}', output: out.s00}"]
    for index in range(1, LENGTH):
        lines.append(f"  - {{id: s{index:02d}, type: llm_call, depends_on: [s{index - 1:02d}],"
                     f" prompt: 'Go on from {{state.steps.s{index - 1:02d}.output}} ({{state.token}})',"
                     f" output: out.s{index:02d}}}")
    return parse_workflow("\n".join(lines) + "\n")


def once(workflow: object, secret: str = SECRET) -> None:
    replies = {f"s{index:02d}": f"reply {index} about the tides, nothing secret in it" for index in range(LENGTH)}
    result = run_workflow(workflow, provider=Scripted(replies), state={"token": secret}, clock=VirtualClock(),
                          runs_dir=False, redaction_salt="bench")
    assert result.status.value == "success", result.steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per repeat (default 20)")
    parser.add_argument("--repeats", type=int, default=5, help="repeats; the median is reported (default 5)")
    parser.add_argument("--no-secret", action="store_true",
                        help="the token is empty, so not searched for: only the API key is (the common case)")
    args = parser.parse_args()
    secret = "" if args.no_secret else SECRET  # a redacted text of 1-3 characters is refused
    os.environ.setdefault("BENCH_OPENAI_API_KEY", "sk-bench-0123456789abcdef")
    workflow = chain()
    once(workflow, secret)  # warm: imports, the workflow's compiled parts
    timings = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        for _ in range(args.runs):
            once(workflow, secret)
        timings.append(time.perf_counter() - start)
    print(f"{args.runs / statistics.median(timings):.1f} runs/s of a {LENGTH}-step chain with a redacted secret")


if __name__ == "__main__":
    main()
