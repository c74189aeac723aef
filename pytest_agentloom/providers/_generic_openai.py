"""Any OpenAI-compatible server (vLLM, LM Studio, llama.cpp, a proxy) by its base URL.

Same wire format and SDK as :mod:`._openai`, without OpenAI's
reasoning-model rules: parameters go out as the step wrote them. The key is
optional, as local servers rarely check one.
"""

from __future__ import annotations

from ._common import PLACEHOLDER_API_KEY, required_unless_replay
from ._openai import OpenAIProvider

__all__ = ["REPLAY_BASE_URL", "GenericOpenAIProvider"]

REPLAY_BASE_URL = "http://generic-openai.replay.invalid/v1"
"""The base URL of a replay that sets none: the cassette is matched on the path (``/v1/...``), never the host,
and the offline transport sends nothing anywhere."""


class GenericOpenAIProvider(OpenAIProvider):
    """Base URL: constructor, else ``AGENTLOOM_GENERIC_OPENAI_BASE_URL``.

    Key: constructor, else ``AGENTLOOM_GENERIC_OPENAI_API_KEY``, else a placeholder. A replay needs neither
    (:data:`REPLAY_BASE_URL`).
    """

    name = "generic_openai"
    _key_env = ("AGENTLOOM_GENERIC_OPENAI_API_KEY",)
    _url_env = ("AGENTLOOM_GENERIC_OPENAI_BASE_URL",)
    _reasoning_rules = False

    def _resolve_key(self) -> str:
        self._resolve_base_url()  # the missing base URL is the error a live call gives first
        return self._api_key.resolve() or PLACEHOLDER_API_KEY

    def _resolve_base_url(self) -> str:
        return required_unless_replay(self._base_url, self.name, "base URL", REPLAY_BASE_URL)
