"""What a cassette replay costs, against the floors it can be held to, in one run.

Three measurements, each printed as a ratio or a per-unit cost from paired rounds:

1. **Whole replays.** A chain workflow of N ``llm_call`` steps run by the engine
   with the real gateway (OpenAI SDK) wrapped in a pytest-agentloom cassette in
   replay mode, as the ``agentloom`` fixture does (load and scrub the cassette,
   match each request as data, play it through vcrpy into the SDK), against:

   - **scripted**: the same workflow on a ``Scripted`` provider (no HTTP at all);
   - **bare vcrpy**: no engine; the same N chat-completion calls made with the
     OpenAI SDK directly inside ``vcr.use_cassette`` (vcrpy's own YAML format
     and default matchers, ``record_mode="none"``), a new client per round;
   - **bare vcrpy, shared TLS**: the same, its client given the one TLS context
     our providers share (``providers._common.shared_ssl_context``). Without it
     every bare-vcrpy round loads the CA bundle (~10 ms) and the comparison
     measures that, not the replay. **This is the floor issue 10's replay
     target uses** (a 100-call replay ≤ 1.05x it): the same calls, the same
     SDK, the same TLS setup, nothing of ours.

   A round runs every kind once, interleaved, so drift hits all alike; a ratio
   is the median of the per-round ratios.
2. **Matching cost per request** at cassette sizes 10, 100 and 1,000: a
   synthetic cassette of chat calls (distinct prompts), opened untimed; then 20
   requests spread over it are looked up the way vcrpy's stub does
   (``can_play_response_for`` then ``play_response``), each built fresh. Flat
   across sizes is the goal.
3. **Loading** a 1,000-interaction cassette: ``CassetteSession.open()`` (read,
   parse, build the vcrpy cassette), median of rounds.

The whole-replay cassettes are recorded once, before timing, against the local
fake server (``tests/servers/fake_llm.py`` on 127.0.0.1); the server is stopped
before the timed runs, so nothing reaches the network. Each timed round loads
its cassette from disk, as a test would.

Run: ``python bench/replay.py [rounds]``. ``--tree DIR`` imports
``pytest_agentloom`` from another checkout (e.g. a worktree of ``main``) with
this script, for before/after figures. :func:`compare_rows` gives
``bench/compare.py`` the two replay cases issue 10 lists.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MODEL = "gpt-4o-mini"
MATCH_SIZES = (10, 100, 1000)
LOOKUPS = 20
LOAD_SIZE = 1000


# -- recording the whole-replay cassettes -------------------------------------------------------------------


def workflow_text(calls: int) -> str:
    steps = []
    for number in range(calls):
        depends = f"\n    depends_on: [s{number - 1}]" if number else ""
        previous = f" after {{state.out{number - 1}}}" if number else ""
        steps.append(f"  - id: s{number}\n    type: llm_call{depends}\n    model: {MODEL}\n"
                     f"    prompt: \"Step {number}{previous}\"\n    output: out{number}")
    return f"name: calls-{calls}\nsteps:\n" + "\n".join(steps) + "\n"


def replies(calls: int) -> list[str]:
    return [f"answer {number}" for number in range(calls)]


def run_engine(workflow: Any, provider: Any, calls: int) -> None:
    from pytest_agentloom import VirtualClock, run_workflow

    result = run_workflow(workflow, provider=provider, clock=VirtualClock(), run_id="bench", runs_dir=False)
    assert result.status == "success", result.steps
    assert result.state[f"out{calls - 1}"] == f"answer {calls - 1}"


@dataclass
class Recorded:
    """Both cassettes of one N-call workflow, the SDK call bodies, and the base URL vcrpy matches on."""

    calls: int
    workflow: Any
    ours: Path
    theirs: Path
    bodies: list[dict[str, Any]]
    base_url: str


def record(folder: Path, calls: int) -> Recorded:
    """Record our cassette (through the engine) and vcrpy's (SDK calls alone) against the fake server."""
    import openai
    import vcr

    from pytest_agentloom import load_workflow
    from pytest_agentloom.providers._factory import default_gateway
    from pytest_agentloom.replay import CassetteConfig, CassetteSession, RecordMode
    from tests.servers.fake_llm import FakeLLMServer, text

    (folder / f"flow{calls}.yaml").write_text(workflow_text(calls))
    workflow = load_workflow(folder / f"flow{calls}.yaml")
    ours, theirs = folder / f"agentloom{calls}.yaml", folder / f"vcrpy{calls}.yaml"
    with FakeLLMServer() as server:
        os.environ["OPENAI_BASE_URL"] = server.openai_base_url
        os.environ["OPENAI_API_KEY"] = "fake-key"
        server.plan("openai", *map(text, replies(calls)))
        with CassetteSession(CassetteConfig(path=ours, mode=RecordMode.ALL)) as session:
            run_engine(workflow, session.wrap(default_gateway(workflow.config)), calls)
        bodies = [request.json for request in server.requests]
        server.reset()
        server.plan("openai", *map(text, replies(calls)))

        async def sdk_calls() -> None:
            client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="fake-key", max_retries=0)
            for body in bodies:
                await client.chat.completions.create(**body)

        with vcr.use_cassette(str(theirs), record_mode="all"):
            asyncio.run(sdk_calls())
        base_url = server.openai_base_url  # vcrpy matches on host and port: replay against the same (stopped) URL
    del os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"]
    return Recorded(calls, workflow, ours, theirs, bodies, base_url)


# -- one round of each kind ---------------------------------------------------------------------------------


def cassette_round(recorded: Recorded) -> None:
    from pytest_agentloom.providers._factory import default_gateway
    from pytest_agentloom.replay import CassetteConfig, CassetteSession, RecordMode

    with CassetteSession(CassetteConfig(path=recorded.ours, mode=RecordMode.NONE)) as session:
        gateway = default_gateway(recorded.workflow.config, api_key_placeholder=True)
        run_engine(recorded.workflow, session.wrap(gateway), recorded.calls)
        assert not session.unused()


def scripted_round(recorded: Recorded) -> None:
    from pytest_agentloom import Scripted

    run_engine(recorded.workflow, Scripted({f"s{n}": reply for n, reply in enumerate(replies(recorded.calls))}),
               recorded.calls)


def bare_vcr_round(recorded: Recorded, *, shared_tls: bool) -> None:
    import openai
    import vcr

    from pytest_agentloom.providers._common import PLACEHOLDER_API_KEY, sdk_http_client

    async def calls() -> None:
        extra = {"http_client": sdk_http_client(openai.DefaultAsyncHttpxClient, 600.0)} if shared_tls else {}
        client = openai.AsyncOpenAI(api_key=PLACEHOLDER_API_KEY, base_url=recorded.base_url, max_retries=0,
                                    **extra)
        for body in recorded.bodies:
            await client.chat.completions.create(**body)

    with vcr.use_cassette(str(recorded.theirs), record_mode="none") as cassette:
        asyncio.run(calls())
        assert cassette.all_played


def interleaved(kinds: dict[str, Callable[[], None]], rounds: int) -> dict[str, list[float]]:
    """Seconds per round of each kind, after one untimed warm-up round of each; kinds alternate in a round."""
    timings: dict[str, list[float]] = {name: [] for name in kinds}
    for function in kinds.values():
        function()
    for _ in range(rounds):
        for name, function in kinds.items():
            started = time.perf_counter()
            function()
            timings[name].append(time.perf_counter() - started)
    return timings


def paired_ratio(timings: dict[str, list[float]], ours: str, baseline: str) -> float:
    return statistics.median(a / b for a, b in zip(timings[ours], timings[baseline], strict=True))


def replay_timings(folder: Path, calls: int, rounds: int, *, scripted: bool, vcrpy: bool) -> dict[str, list[float]]:
    recorded = record(folder, calls)
    kinds: dict[str, Callable[[], None]] = {"cassette": lambda: cassette_round(recorded)}
    if scripted:
        kinds["scripted"] = lambda: scripted_round(recorded)
    if vcrpy:
        kinds["bare vcrpy, shared TLS"] = lambda: bare_vcr_round(recorded, shared_tls=True)
        kinds["bare vcrpy"] = lambda: bare_vcr_round(recorded, shared_tls=False)
    return interleaved(kinds, rounds)


# -- synthetic cassettes: matching and loading ---------------------------------------------------------------

_SYSTEM = "You are a careful assistant. Answer in one short paragraph and cite the step you answer."


def chat_body(number: int) -> dict[str, Any]:
    return {"messages": [{"role": "system", "content": _SYSTEM},
                         {"role": "user", "content": f"Step {number}: summarise the findings of section {number} "
                                                     "of the report in two sentences, for a reader in a hurry."}],
            "model": MODEL, "temperature": 0}


def chat_reply(number: int) -> dict[str, Any]:
    return {"id": f"chatcmpl-{number:06d}", "object": "chat.completion", "created": 1_700_000_000 + number,
            "model": MODEL, "system_fingerprint": "fp_bench",
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": f"Section {number} finds that the cache "
                                     "halves the latency; the rest of the report explains why.", "refusal": None}}],
            "usage": {"prompt_tokens": 48, "completion_tokens": 21, "total_tokens": 69}}


URL = "https://api.openai.com/v1/chat/completions"
_REQUEST_HEADERS = {"content-type": "application/json", "accept": "application/json",
                    "authorization": "Bearer sk-placeholder", "user-agent": "AsyncOpenAI/Python bench",
                    "x-stainless-lang": "python", "x-stainless-retry-count": "0"}


def write_synthetic(path: Path, size: int) -> None:
    """A cassette of ``size`` chat calls with distinct prompts, written by our serializer."""
    import json

    from vcr.request import Request

    from pytest_agentloom.replay._cassette_file import dumps

    requests = [Request("POST", URL, json.dumps(chat_body(n)).encode(), {"content-type": "application/json"})
                for n in range(size)]
    responses = [{"status": {"code": 200, "message": "OK"}, "headers": {"content-type": ["application/json"]},
                  "body": {"string": json.dumps(chat_reply(n)).encode()}} for n in range(size)]
    path.write_text(dumps(None, requests, responses), encoding="utf-8")


def live_request(number: int) -> Any:
    """The request vcrpy's httpx stub builds for call ``number`` (SDK headers and all, compact JSON)."""
    import json

    from vcr.request import Request

    body = json.dumps(chat_body(number), separators=(",", ":")).encode()
    return Request("POST", URL, body, dict(_REQUEST_HEADERS))


def open_session(path: Path) -> Any:
    from pytest_agentloom.replay import CassetteConfig, CassetteSession, RecordMode

    return CassetteSession(CassetteConfig(path=path, mode=RecordMode.NONE)).open()


def matching_cost(folder: Path, rounds: int) -> dict[int, float]:
    """Median seconds per looked-up request, by cassette size (sizes measured in turn within each round)."""
    spots = {size: [size - 1 - (size * k) // LOOKUPS for k in range(LOOKUPS)] for size in MATCH_SIZES}
    paths = {size: folder / f"synthetic{size}.yaml" for size in MATCH_SIZES}
    for size, path in paths.items():
        write_synthetic(path, size)
    costs: dict[int, list[float]] = {size: [] for size in MATCH_SIZES}
    from pytest_agentloom._core.types import LLMRequest, Message
    from pytest_agentloom.replay._cassette import CallInfo, current_call

    # the lookups happen inside a provider call, as in a run (outside one, requests are not the cassette's)
    token = current_call.set(CallInfo(LLMRequest(step_id="s", model=MODEL, messages=(Message(role="user",
                                                                                             content="x"),))))
    for _ in range(rounds + 1):  # the first round warms up
        for size in MATCH_SIZES:
            session = open_session(paths[size])
            cassette = session._cassette
            wanted = [live_request(n) for n in dict.fromkeys(spots[size])]
            started = time.perf_counter()
            for request in wanted:
                assert cassette.can_play_response_for(request)
                cassette.play_response(request)
            costs[size].append((time.perf_counter() - started) / len(wanted))
            session.close()
    current_call.reset(token)
    return {size: statistics.median(values[1:]) for size, values in costs.items()}


def load_time(folder: Path, rounds: int) -> tuple[float, float]:
    """Median seconds to open (read, parse, build) a cassette of :data:`LOAD_SIZE` interactions, and, as a
    yardstick of the machine's speed in the same rounds, to read its text with ``yaml.load(CSafeLoader)``
    (libyaml's parser and composer, PyYAML's constructor: no limits, no duplicate-key check)."""
    import yaml

    path = folder / f"synthetic-load{LOAD_SIZE}.yaml"
    write_synthetic(path, LOAD_SIZE)
    times: list[float] = []
    yardstick: list[float] = []
    for _ in range(rounds + 1):
        started = time.perf_counter()
        session = open_session(path)
        times.append(time.perf_counter() - started)
        assert session.loaded_count == LOAD_SIZE
        session.close()
        started = time.perf_counter()
        yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)  # a yardstick
        yardstick.append(time.perf_counter() - started)
    return statistics.median(times[1:]), statistics.median(yardstick[1:])


# -- what bench/compare.py prints ------------------------------------------------------------------------------


def compare_rows(rounds: int) -> list[dict[str, Any]]:
    """The replay cases of issue 10 as rows for ``bench/compare.py``: ours_s and baseline_s are medians,
    ratio the median of paired ratios (ours / baseline: below 1 means ours is faster)."""
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        small = replay_timings(folder, 10, rounds, scripted=True, vcrpy=False)
        large = replay_timings(folder, 100, rounds, scripted=False, vcrpy=True)
    return [
        _row("10-call replay: cassette vs Scripted", small, "cassette", "scripted"),
        _row("100-call replay: cassette vs bare vcrpy (shared TLS)", large, "cassette", "bare vcrpy, shared TLS"),
    ]


def _row(case: str, timings: dict[str, list[float]], ours: str, baseline: str) -> dict[str, Any]:
    return {"case": case, "ours_s": statistics.median(timings[ours]),
            "baseline_s": statistics.median(timings[baseline]), "ratio": paired_ratio(timings, ours, baseline)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rounds", nargs="?", type=int, default=20)
    parser.add_argument("--tree", type=Path, help="import pytest_agentloom from this checkout instead")
    parser.add_argument("--only", choices=("replay", "matching", "load"), action="append")
    args = parser.parse_args(argv)
    if args.tree is not None:
        sys.path.insert(0, str(args.tree.resolve()))
    import pytest_agentloom

    print(f"pytest_agentloom from {Path(pytest_agentloom.__file__).parent.parent}; {args.rounds} rounds")
    only = set(args.only or ("replay", "matching", "load"))
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        if "replay" in only:
            print_replays(folder, args.rounds)
        if "matching" in only:
            costs = matching_cost(folder, max(3, args.rounds // 4))
            print("matching cost per request (lookup as vcrpy's stub does it), by cassette size:")
            for size, cost in costs.items():
                print(f"  {size:>5} interactions: {cost * 1e6:8.1f} us  ({cost / costs[MATCH_SIZES[0]]:.2f}x "
                      f"the {MATCH_SIZES[0]}-interaction cost)")
        if "load" in only:
            seconds, yardstick = load_time(folder, max(3, args.rounds // 4))
            print(f"loading a {LOAD_SIZE}-interaction cassette: {seconds:.3f} s (target <= 0.3 s); "
                  f"yaml.load(CSafeLoader) of the same text: {yardstick:.3f} s ({seconds / yardstick:.2f}x it)")


def print_replays(folder: Path, rounds: int) -> None:
    for calls, scripted in ((10, True), (100, False)):
        timings = replay_timings(folder, calls, rounds, scripted=scripted, vcrpy=True)
        print(f"{calls}-call workflow, median of {rounds} rounds (each round loads its cassette):")
        for name, values in timings.items():
            value = statistics.median(values)
            print(f"  {name:<24} {value * 1000:8.2f} ms per run  ({value * 1000 / calls:6.2f} ms per call)")
        for baseline in [name for name in timings if name != "cassette"]:
            print(f"  cassette / {baseline:<22} = {paired_ratio(timings, 'cassette', baseline):.2f}x (paired)")
    print("  (the issue's floor is bare vcrpy, shared TLS: target cassette / it <= 1.05x at 100 calls)")


if __name__ == "__main__":
    main()
