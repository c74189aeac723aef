"""What a cassette replay costs: a 10-call workflow three ways, in one run.

1. **cassette**: the workflow run by the engine, its provider the real gateway
   (OpenAI SDK) wrapped in a pytest-agentloom cassette in replay mode, as the
   ``agentloom`` fixture does: load and scrub the cassette, match each request
   as data, play it through vcrpy into the SDK.
2. **scripted**: the same workflow with a ``Scripted`` provider (no HTTP at all).
3. **bare vcrpy**: no engine; the same 10 chat-completion calls made with the
   OpenAI SDK directly inside ``vcr.use_cassette`` (vcrpy's own YAML format and
   default matchers) in ``record_mode="none"``. It builds a client each round,
   as a run does, and so loads the CA bundle each round; **bare vcrpy, shared
   TLS** gives that client the one TLS context the providers share
   (``providers.common.shared_ssl_context``), to compare the replay machinery alone.

Both cassettes are recorded once, before timing, against the local fake server
(``tests/servers/fake_llm.py`` on 127.0.0.1); the server is stopped before the
timed runs, so nothing reaches the network. Each timed round loads its cassette
from disk, as a test would. Run: ``python bench/replay.py [rounds]``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_agentloom import Scripted, VirtualClock, load_workflow, run_workflow  # noqa: E402
from pytest_agentloom.providers.common import PLACEHOLDER_API_KEY, sdk_http_client  # noqa: E402
from pytest_agentloom.providers.registry import default_gateway  # noqa: E402
from pytest_agentloom.replay import CassetteConfig, CassetteSession, RecordMode  # noqa: E402
from tests.servers.fake_llm import FakeLLMServer, text  # noqa: E402

CALLS = 10
MODEL = "gpt-4o-mini"


def workflow_text() -> str:
    steps = []
    for number in range(CALLS):
        depends = f"\n    depends_on: [s{number - 1}]" if number else ""
        previous = f" after {{state.out{number - 1}}}" if number else ""
        steps.append(f"  - id: s{number}\n    type: llm_call{depends}\n    model: {MODEL}\n"
                     f"    prompt: \"Step {number}{previous}\"\n    output: out{number}")
    return "name: ten-calls\nsteps:\n" + "\n".join(steps) + "\n"


def replies() -> list[str]:
    return [f"answer {number}" for number in range(CALLS)]


def run_engine(workflow, provider) -> None:
    result = run_workflow(workflow, provider=provider, clock=VirtualClock(), run_id="bench", runs_dir=False)
    assert result.status == "success", result.steps
    assert result.state[f"out{CALLS - 1}"] == f"answer {CALLS - 1}"


def record(folder: Path, workflow) -> tuple[Path, Path, list[dict], str]:
    """Record both cassettes against the fake server; return their paths, the SDK call bodies and base URL."""
    import openai
    import vcr

    ours, theirs = folder / "agentloom.yaml", folder / "vcrpy.yaml"
    with FakeLLMServer() as server:
        os.environ["OPENAI_BASE_URL"] = server.openai_base_url
        os.environ["OPENAI_API_KEY"] = "fake-key"
        server.plan("openai", *map(text, replies()))
        with CassetteSession(CassetteConfig(path=ours, mode=RecordMode.ALL)) as session:
            run_engine(workflow, session.wrap(default_gateway(workflow.config)))
        bodies = [request.json for request in server.requests]
        server.reset()
        server.plan("openai", *map(text, replies()))

        async def calls() -> None:
            client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="fake-key", max_retries=0)
            for body in bodies:
                await client.chat.completions.create(**body)

        with vcr.use_cassette(str(theirs), record_mode="all"):
            asyncio.run(calls())
        base_url = server.openai_base_url  # vcrpy matches on host and port: replay against the same (stopped) URL
    del os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"]
    return ours, theirs, bodies, base_url


def main(rounds: int = 30) -> None:
    import openai
    import vcr

    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        (folder / "flow.yaml").write_text(workflow_text())
        workflow = load_workflow(folder / "flow.yaml")
        ours, theirs, bodies, base_url = record(folder, workflow)

        def cassette_round() -> None:
            with CassetteSession(CassetteConfig(path=ours, mode=RecordMode.NONE)) as session:
                run_engine(workflow, session.wrap(default_gateway(workflow.config, api_key_placeholder=True)))
                assert not session.unused()

        def scripted_round() -> None:
            run_engine(workflow, Scripted({f"s{n}": reply for n, reply in enumerate(replies())}))

        def bare_vcr_round(shared_tls: bool = False) -> None:
            async def calls() -> None:
                extra = {"http_client": sdk_http_client(openai.DefaultAsyncHttpxClient, 600.0)} if shared_tls else {}
                client = openai.AsyncOpenAI(api_key=PLACEHOLDER_API_KEY, base_url=base_url, max_retries=0, **extra)
                for body in bodies:
                    await client.chat.completions.create(**body)

            with vcr.use_cassette(str(theirs), record_mode="none") as cassette:
                asyncio.run(calls())
                assert cassette.all_played

        kinds = {"cassette": cassette_round, "scripted": scripted_round, "bare vcrpy": bare_vcr_round,
                 "bare vcrpy, shared TLS": lambda: bare_vcr_round(shared_tls=True)}
        timings: dict[str, list[float]] = {name: [] for name in kinds}
        for function in kinds.values():  # warm up: imports, first client, caches
            function()
        for _ in range(rounds):
            for name, function in kinds.items():  # interleaved, so drift affects all three alike
                started = time.perf_counter()
                function()
                timings[name].append(time.perf_counter() - started)

    medians = {name: statistics.median(values) for name, values in timings.items()}
    print(f"{CALLS}-call workflow, median of {rounds} rounds (each round loads its cassette):")
    for name, value in medians.items():
        print(f"  {name:<22} {value * 1000:8.2f} ms per run  ({value * 1000 / CALLS:6.2f} ms per call)")
    print(f"  cassette / scripted               = {medians['cassette'] / medians['scripted']:.1f}x")
    print(f"  cassette / bare vcrpy             = {medians['cassette'] / medians['bare vcrpy']:.2f}x")
    print(f"  cassette / bare vcrpy, shared TLS = {medians['cassette'] / medians['bare vcrpy, shared TLS']:.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
