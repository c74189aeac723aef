"""The API keys in the environment: values that must never reach a file or an output.

Every ``*_API_KEY`` variable (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ...)
holds a credential. Cassettes scrub these values, the built-in tools scrub them
from what they return, and ``shell_command`` never passes such a variable to
the programs it runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from .policy import POLICY

__all__ = [
    "API_KEY_MARKER",
    "api_keys_from_env",
    "is_api_key_name",
    "redact_api_keys",
    "replace_each",
]

#: the policy's API-key marker under its older name (defined in :mod:`.policy`, nowhere else)
API_KEY_MARKER = POLICY.api_key_marker


def is_api_key_name(name: str) -> bool:
    """Whether an environment variable called ``name`` holds an API key."""
    return POLICY.is_api_key_name(name)


def api_keys_from_env(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of ``*_API_KEY`` environment variables (at least the policy's minimum length), longest first.

    Read from ``os.environ`` (or ``env``) at each call, so a variable set or removed a moment ago counts at
    once. The cost is one pass over the names, once per run: about 1% of a 50-step scripted run.
    """
    environ = os.environ if env is None else env
    suffix, shortest = POLICY.api_key_suffix, POLICY.min_api_key_length  # the test of is_api_key_name, inline:
    found = {value for name in environ  # it runs for every variable
             if name.upper().endswith(suffix) and len(value := environ.get(name, "")) >= shortest}
    return sorted(found, key=lambda value: (-len(value), value))


def redact_api_keys(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with the value of every ``*_API_KEY`` environment variable replaced by ``<SCRUBBED>``."""
    return replace_each(text, POLICY.api_key_pairs(api_keys_from_env(env)))


def replace_each(text: str, pairs: Iterable[tuple[str, str]]) -> str:
    """``text`` with each ``(raw, replacement)`` applied in the order given (callers put the longest first,
    so a secret that contains another is replaced whole). Shared by cassette scrubbing, streamed output
    and the built-in tools, so the three replace alike."""
    for raw, replacement in pairs:
        if raw in text:
            text = text.replace(raw, replacement)
    return text
