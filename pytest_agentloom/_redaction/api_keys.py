"""The API keys in the environment: values that must never reach a file or an output.

Every ``*_API_KEY``, ``*_KEY``, ``*_TOKEN``, ``*_SECRET`` and ``*_PASSWORD`` variable
(``OPENAI_API_KEY``, ``TEAM_OPENAI_KEY``, ``GITHUB_TOKEN``, ...) holds a credential, and so does
every variable a workflow names in ``config.providers.<name>.api_key_env`` whatever its name
(the run's redactor is given those names). A provider built in Python notes its own
(:func:`note_key_source`): the variable its ``api_key_env`` names and a key given to it as ``api_key=``
are scrubbed the same way, by every redactor of the process from then on. Cassettes scrub these values in each of their
encoded forms (:meth:`~.policy.RedactionPolicy.encoded_forms`), the built-in tools scrub them
from what they return, and ``shell_command`` never passes a ``*_API_KEY`` variable to the
programs it runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from .policy import POLICY

__all__ = [
    "API_KEY_MARKER",
    "api_keys_from_env",
    "forget_noted_keys",
    "is_api_key_name",
    "note_key_source",
    "noted_key_variables",
    "noted_keys_version",
    "redact_api_keys",
    "replace_each",
]

#: the policy's API-key marker under its older name (defined in :mod:`.policy`, nowhere else)
API_KEY_MARKER = POLICY.api_key_marker


def is_api_key_name(name: str) -> bool:
    """Whether an environment variable called ``name`` holds an API key."""
    return POLICY.is_api_key_name(name)


#: variables named by providers built in Python (``OpenAIProvider(api_key_env="TEAM_KEY")``), and keys given
#: to them (``api_key="sk-..."``): kept for the life of the process (a secret once seen stays one)
_NOTED_VARIABLES: dict[str, None] = {}
_NOTED_KEYS: dict[str, None] = {}
_noted_version = 0  # raised by each new note (never lowered, so a holder of keys read earlier sees a change)


def note_key_source(*, variables: Iterable[str] = (), key: str | None = None) -> None:
    """Remember that the variables ``variables`` hold a provider's key, and that ``key`` is one: every
    :func:`api_keys_from_env` from then on returns their values, so what a provider built in Python reads
    is scrubbed exactly as a workflow's ``config.providers.*.api_key_env`` is.

    Providers call it when they are built. Noting more than needed only scrubs more; a key shorter than the
    policy's minimum (a placeholder such as ``"x"``) is not searched for, as for the environment's.
    """
    global _noted_version
    for name in variables:
        if name and name not in _NOTED_VARIABLES:
            _NOTED_VARIABLES[name] = None
            _noted_version += 1
    if key and len(key) >= POLICY.min_api_key_length and key not in _NOTED_KEYS:
        _NOTED_KEYS[key] = None
        _noted_version += 1


def forget_noted_keys() -> None:
    """Forget every variable and key :func:`note_key_source` noted: for test suites that keep one test's
    providers from scrubbing another's output (the package never calls it)."""
    global _noted_version
    _NOTED_VARIABLES.clear()
    _NOTED_KEYS.clear()
    _noted_version += 1


def noted_key_variables() -> tuple[str, ...]:
    """The variables providers built in this process read their keys from (:func:`note_key_source`)."""
    return tuple(_NOTED_VARIABLES)


def noted_keys_version() -> int:
    """A number that grows each time a provider notes a new variable or key: a holder of keys read earlier
    (a cassette session) reads them again when it changes."""
    return _noted_version


def api_keys_from_env(env: Mapping[str, str] | None = None, names: Iterable[str] = ()) -> list[str]:
    """Values of credential variables (at least the policy's minimum length), longest first: those whose
    name the policy marks (:meth:`~.policy.RedactionPolicy.is_secret_variable_name`) and those ``names``
    (``api_key_env`` settings) whatever they are called, and those providers built in Python noted
    (:func:`note_key_source`: their variables' values and the keys given to them).

    Read from ``os.environ`` (or ``env``) at each call, so a variable set or removed a moment ago counts at
    once. The cost is one pass over the names, once per run: about 1% of a 50-step scripted run.
    """
    environ = os.environ if env is None else env
    suffixes, shortest = POLICY.secret_env_suffixes, POLICY.min_api_key_length  # is_secret_variable_name,
    found = {value for name in environ  # inline: it runs for every variable
             if name.upper().endswith(suffixes) and len(value := environ.get(name, "")) >= shortest}
    found.update(value for name in (*names, *_NOTED_VARIABLES) if len(value := environ.get(name, "")) >= shortest)
    found.update(_NOTED_KEYS)
    return sorted(found, key=lambda value: (-len(value), value))


def redact_api_keys(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with the value of every credential variable of the environment, in each of its encoded forms,
    replaced by ``<SCRUBBED>``."""
    return replace_each(text, POLICY.form_pairs(POLICY.api_key_pairs(api_keys_from_env(env))))


def replace_each(text: str, pairs: Iterable[tuple[str, str]]) -> str:
    """``text`` with each ``(raw, replacement)`` applied in the order given (callers put the longest first,
    so a secret that contains another is replaced whole). Shared by cassette scrubbing, streamed output
    and the built-in tools, so the three replace alike."""
    for raw, replacement in pairs:
        if raw in text:
            text = text.replace(raw, replacement)
    return text
