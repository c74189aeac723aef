"""Re-record the examples' cassettes against the local fake LLM server (no API key, no network).

    python examples/record_cassettes.py

The committed cassettes under ``cassettes/examples/`` were made with this
script: it starts ``tests/servers/fake_llm.py`` on 127.0.0.1, queues the
replies each test expects, and runs those tests with ``--agentloom-record``.
To record against the real API instead, set ``OPENAI_API_KEY`` and run
``pytest <test id> --agentloom-record``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

from tests.servers.fake_llm import FakeLLMServer, fail, text  # noqa: E402

TRIAGE = "examples/support_triage"
#: Test ids to record, and the replies the fake model gives them, in the order they are asked.
RECORDINGS: list[tuple[str, list[object]]] = [
    (f"{TRIAGE}/test_example_triage_recorded.py::test_question_is_answered",
     [text("question"), text("Open Settings, then Export. Pick CSV or JSON.")]),
    (f"{TRIAGE}/test_example_triage_recorded.py::test_billing_reply_is_streamed",
     [text("billing"), text("Sorry about that: the second charge is refunded within 5 days.")]),
    (f"{TRIAGE}/test_example_triage_recorded.py::test_rate_limited_classifier_is_retried",
     [fail(429, "Rate limit reached for gpt-4o-mini"), text("bug")]),
    (f"{TRIAGE}/test_triage_recorded.agentloom.yaml::question-from-cassette",
     [text("question"), text("Yes: Settings, then Profile, then Email.")]),
]


#: A fixed port keeps the recorded URLs (and so re-recordings' diffs) stable; any free port works for replay,
#: since cassettes are matched on the URL's path, not its host and port.
PORT = 18011


def _server() -> FakeLLMServer:
    try:
        return FakeLLMServer(port=PORT).start()
    except OSError:  # taken: any free port will do
        return FakeLLMServer().start()


def main() -> int:
    os.chdir(ROOT)
    with _server() as server:
        os.environ["OPENAI_BASE_URL"] = server.openai_base_url
        os.environ["OPENAI_API_KEY"] = "fake-key-for-the-local-server"
        for test_id, replies in RECORDINGS:
            server.reset()
            server.plan("openai", *replies)
            code = pytest.main(["-q", "-p", "no:cacheprovider", test_id, "--agentloom-record"])
            if code != 0 or server.pending("openai"):
                print(f"recording {test_id} failed (exit {code}, {server.pending('openai')} replies unused)")
                return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
