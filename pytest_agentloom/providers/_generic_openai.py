"""Any OpenAI-compatible server (vLLM, LM Studio, llama.cpp, a proxy) by its base URL.

Same wire format and SDK as :mod:`._openai`, without OpenAI's
reasoning-model rules: parameters go out as the step wrote them. The key is
optional, as local servers rarely check one.
"""

from __future__ import annotations

from ._common import PLACEHOLDER_API_KEY
from ._openai import OpenAIProvider

__all__ = ["GenericOpenAIProvider"]


class GenericOpenAIProvider(OpenAIProvider):
    """Base URL: constructor, else ``AGENTLOOM_GENERIC_OPENAI_BASE_URL``.

    Key: constructor, else ``AGENTLOOM_GENERIC_OPENAI_API_KEY``, else a placeholder.
    """

    name = "generic_openai"
    _key_env = ("AGENTLOOM_GENERIC_OPENAI_API_KEY",)
    _url_env = ("AGENTLOOM_GENERIC_OPENAI_BASE_URL",)
    _reasoning_rules = False

    def _resolve_key(self) -> str:
        self._base_url.require(self.name, "base URL")
        return self._api_key.resolve() or PLACEHOLDER_API_KEY
