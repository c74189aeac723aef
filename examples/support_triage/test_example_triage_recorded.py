"""Support triage against the real OpenAI adapter, replayed from committed cassettes.

These tests pass no provider, so each one replays its own cassette:
``cassettes/examples/support_triage/test_example_triage_recorded.py/<test name>.yaml``.
They need no API key and never reach the network. The cassettes were recorded
against the project's local fake server (``python examples/record_cassettes.py``);
record yours against the real API with ``OPENAI_API_KEY=... pytest <test> --agentloom-record``.
"""


def test_question_is_answered(agentloom):
    result = agentloom.run("triage.yaml", state={"ticket": "How do I export my data?", "customer": "ada"})

    result.assert_status("success", "completed")
    result.assert_steps("classify", "route", "answer")
    assert result.state["reply"] == "Open Settings, then Export. Pick CSV or JSON."
    assert result.steps["answer"].provider == "openai"
    assert result.steps["answer"].input_tokens > 0


def test_billing_reply_is_streamed(agentloom):
    result = agentloom.run("triage.yaml", state={"ticket": "I was charged twice"}, stream=True)

    result.assert_steps("classify", "route", "billing_reply")
    assert result.state["reply"] == "Sorry about that: the second charge is refunded within 5 days."
    assert result.steps["billing_reply"].finish_reason == "stop"


def test_rate_limited_classifier_is_retried(agentloom):
    result = agentloom.run("triage.yaml", state={"ticket": "Export button does nothing", "customer": "lin"})

    result.assert_steps("classify", "route", "open_bug")
    assert result.steps["classify"].attempts == 2  # the cassette holds a 429, then the answer
    assert result.state["issue"]["title"] == "Export button does nothing"
