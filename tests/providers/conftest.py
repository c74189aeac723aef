"""The fake LLM server's fixtures (``fake_llm``, ``fake_llm_server``), and no provider settings from the host."""

import pytest

from tests.servers.plugin import fake_llm, fake_llm_server  # noqa: F401  (fixtures)

PROVIDER_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "OLLAMA_HOST",
    "AGENTLOOM_GENERIC_OPENAI_BASE_URL",
    "AGENTLOOM_GENERIC_OPENAI_API_KEY",
)


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch):
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
