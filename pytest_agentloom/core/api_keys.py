"""The API keys in the environment: values that must never reach a file or an output.

Every ``*_API_KEY`` variable (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ...)
holds a credential. Cassettes scrub these values, the built-in tools scrub them
from what they return, and ``shell_command`` never passes such a variable to
the programs it runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

__all__ = [
    "API_KEY_SUFFIX", "MIN_KEY_LENGTH", "SCRUBBED", "api_keys_from_env", "is_api_key_name", "replace_each",
    "scrub_api_keys",
]

API_KEY_SUFFIX = "_API_KEY"
SCRUBBED = "<SCRUBBED>"
#: Values shorter than this are not searched for (a placeholder such as "x" would match everywhere).
MIN_KEY_LENGTH = 8


def is_api_key_name(name: str) -> bool:
    """Whether an environment variable called ``name`` holds an API key."""
    return name.upper().endswith(API_KEY_SUFFIX)


def api_keys_from_env(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of ``*_API_KEY`` environment variables (at least 8 characters), longest first."""
    if env is None or env is os.environ:
        return _process_api_keys()
    return _api_keys(env)


def _api_keys(environ: Mapping[str, str]) -> list[str]:
    return _key_values(environ, [name for name in environ if is_api_key_name(name)])  # values only where needed


def _key_values(environ: Mapping[str, str], names: Iterable[str]) -> list[str]:
    """The values of ``names`` in ``environ`` long enough to be keys, each once, longest first."""
    found = {value for name in names if len(value := environ.get(name, "")) >= MIN_KEY_LENGTH}
    return sorted(found, key=lambda value: (-len(value), value))


#: The process environment's raw variable names when they were last looked at, and which of them hold keys.
_NAMES: tuple[set[object], list[str]] | None = None


def _process_api_keys() -> list[str]:
    """The API keys of ``os.environ``, its names tested again only when a variable was added or removed.

    Every run builds redactors that need them, and going through ``os.environ`` decodes and tests
    each name: a fixed cost per run next to comparing the environment's raw names with the last
    ones seen, which happens in C (pytest sets ``PYTEST_CURRENT_TEST`` for every test phase, so
    the values change all the time; the names hardly). The values of the key names are read on every
    call. ``os.environ._data`` is CPython's table behind ``os.environ`` (every change made through
    ``os.environ`` lands there); where it is missing every name is tested on every call.
    """
    global _NAMES
    raw = getattr(os.environ, "_data", None)
    if not isinstance(raw, dict):
        return _api_keys(os.environ)
    known = _NAMES
    if known is None or raw.keys() != known[0]:
        known = _NAMES = (set(raw), [name for name in os.environ if is_api_key_name(name)])
    return _key_values(os.environ, known[1])


def scrub_api_keys(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with the value of every ``*_API_KEY`` environment variable replaced by ``<SCRUBBED>``."""
    return replace_each(text, [(key, SCRUBBED) for key in api_keys_from_env(env)])


def replace_each(text: str, pairs: Iterable[tuple[str, str]]) -> str:
    """``text`` with each ``(raw, replacement)`` applied in the order given (callers put the longest first,
    so a secret that contains another is replaced whole). Shared by cassette scrubbing, streamed output
    and the built-in tools, so the three replace alike."""
    for raw, replacement in pairs:
        if raw in text:
            text = text.replace(raw, replacement)
    return text
