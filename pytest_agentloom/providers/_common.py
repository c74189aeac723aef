"""What the SDK-backed providers share: settings read late, one client per event loop, params checked.

Nothing here imports an SDK. Environment variables are read at the first
call, never in a constructor, so building a provider has no side effects.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from .._core.offline import offline_transport, sealed
from .._core.speedups import speedups_on
from .._core.types import LLMRequest, Thinking, ToolCall
from .._redaction.api_keys import note_key_source
from ..errors import ErrorCode, MidStreamError, ProviderConfigError, StepError, render_message

__all__ = [
    "KNOWN_PARAMS",
    "PLACEHOLDER_API_KEY",
    "LoopLocal",
    "MidStreamError",
    "Setting",
    "check_params",
    "dump_arguments",
    "key_setting",
    "named_tool_choice",
    "parse_arguments",
    "plain_http_client",
    "required_unless_replay",
    "sdk_http_client",
    "shared_ssl_context",
    "speaker_prefixed",
    "thinking_of",
]

PLACEHOLDER_API_KEY = "agentloom-placeholder-key"
"""The key providers send when built for replay: never a real secret."""

KNOWN_PARAMS = frozenset({"temperature", "max_tokens", "top_p", "stop", "seed", "thinking", "response_format",
                          "service_tier"})

T = TypeVar("T")


class Setting:
    """One setting with its sources in order: the constructor's value, then environment variables, then a default.

    ``resolve()`` reads the environment at call time, so a provider built
    before the variables are set still sees them.
    """

    def __init__(self, explicit: str | None, env: Sequence[str], default: str | None = None) -> None:
        self.explicit = explicit
        self.env = tuple(env)
        self.default = default

    def resolve(self, environ: Mapping[str, str] | None = None) -> str | None:
        if self.explicit:
            return self.explicit
        source = os.environ if environ is None else environ
        for name in self.env:
            value = source.get(name)
            if value:
                return value
        return self.default

    def require(self, provider: str, what: str, environ: Mapping[str, str] | None = None) -> str:
        """The value, or :class:`ProviderConfigError` saying which variable to set (never retried)."""
        value = self.resolve(environ)
        if value:
            return value
        names = " or ".join(self.env)
        raise ProviderConfigError(
            render_message(f"provider '{provider}' has no {what}: neither the constructor nor {names} sets one.",
                           hint=f"export {self.env[0]}=..., or replay from a cassette (no key needed there)."),
            provider=provider,
        )


def key_setting(explicit: str | None, env: Sequence[str]) -> Setting:
    """A provider's API key setting, noted for redaction (:func:`~.._redaction.api_keys.note_key_source`):
    the variables it reads and a key given to the constructor are scrubbed from everything written or
    printed, whatever the variables are called (``OpenAIProvider(api_key_env="TEAM_KEY")``)."""
    note_key_source(variables=env, key=explicit if explicit != PLACEHOLDER_API_KEY else None)
    return Setting(explicit, env)


class LoopLocal(Generic[T]):
    """One client per running event loop, and per answer of :func:`~pytest_agentloom._core.offline.sealed`.

    ``run_workflow`` may start a fresh loop for a run; an httpx pool made on a closed loop cannot be
    reused, so each loop gets its own client. A client made for a replay (on the offline transport)
    is never used for a live call, nor the other way round.
    """

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sealed = False
        self._value: T | None = None

    def get(self) -> T:
        loop = asyncio.get_running_loop()
        offline = sealed()
        if self._value is None or self._loop is not loop or self._sealed is not offline:
            self._value = self._factory()
            self._loop, self._sealed = loop, offline
        return self._value


def required_unless_replay(setting: Setting, provider: str, what: str, replay_value: str) -> str:
    """The setting's value; during a replay (:func:`~pytest_agentloom._core.offline.sealed`) a missing one is
    ``replay_value``, since the client is on the offline transport and nothing it sends leaves the process.

    So a cassette replays with no key and no base URL set (a CI job without secrets), whatever
    the recording was made with: the replay matches on the request's path and body, not its host.
    """
    value = setting.resolve()
    if value:
        return value
    if sealed():
        return replay_value
    return setting.require(provider, what)


def check_params(request: LLMRequest, provider: str) -> dict[str, Any]:
    """The request's params, refusing names no adapter knows (so a typo never passes silently)."""
    unknown = sorted(set(request.params) - KNOWN_PARAMS)
    if unknown:
        raise StepError(
            f"step '{request.step_id}': provider '{provider}' does not take the parameter(s) {', '.join(unknown)}; "
            f"known parameters are {', '.join(sorted(KNOWN_PARAMS))}",
            code=ErrorCode.UNKNOWN_PARAMETER,
            retryable=False,
        )
    return dict(request.params)


def thinking_of(params: Mapping[str, Any], typed: Thinking | None = None) -> dict[str, Any] | None:
    """The ``thinking`` block when it is enabled, else ``None``: nothing is sent without ``enabled``.

    (docs/providers.md: Reasoning.)

    The engine sets :attr:`LLMRequest.thinking`; a ``thinking`` entry in ``params`` (a request built by
    hand) is read the same way when the typed field is unset.
    """
    if typed is not None:
        return typed.model_dump() if typed.enabled else None
    block = params.get("thinking")
    if isinstance(block, Mapping) and block.get("enabled"):
        return dict(block)
    return None


def refuse_unsupported(request: LLMRequest, provider: str, *, params: tuple[str, ...] = (), prefill: bool = False,
                       strict_tools: bool = False) -> None:
    """Refuse, before anything is sent, a shape ``provider`` has no wire field for (docs/providers.md: Call
    shapes): the ``params`` named, a prefill (``prefill=False``: none), strict tools (``strict_tools=False``)."""
    refused = [name for name in params if name in request.params]
    if request.prefill is not None and not prefill:
        refused.append("prefill")
    if not strict_tools and any(tool.strict for tool in request.tools):
        refused.append("strict tools")
    if refused:
        raise StepError(
            render_message(f"step '{request.step_id}': provider '{provider}' has no {' or '.join(refused)}; "
                           "nothing was sent.",
                           hint="remove it from the step, or send the step to a provider that has it "
                                "(docs/providers.md: Call shapes)", inline=True),
            code=ErrorCode.UNKNOWN_PARAMETER, retryable=False,
        )


def parse_arguments(call: ToolCall) -> dict[str, Any]:
    """A tool call's arguments as a dict, for wire formats that carry objects (Anthropic, Gemini, Ollama)."""
    try:
        value = json.loads(call.arguments or "{}")
    except ValueError:
        return {"_raw_arguments": call.arguments}
    return value if isinstance(value, dict) else {"_value": value}


def dump_arguments(value: Any) -> str:
    """Arguments given as an object, written back as the JSON text :class:`ToolCall` carries."""
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {})


def speaker_prefixed(role: str, content: str | None, name: str | None) -> str | None:
    """Providers other than OpenAI see a speaker's name as a ``[name]`` prefix on the turn."""
    if name and role in ("user", "assistant") and content is not None:
        return f"[{name}] {content}"
    return content


def named_tool_choice(choice: Any) -> str | None:
    """The tool name of a ``{name: tool}`` choice, else ``None``."""
    if isinstance(choice, Mapping):
        name = choice.get("name")
        if name is None and isinstance(choice.get("function"), Mapping):
            name = choice["function"].get("name")
        return str(name) if name else None
    return None


# -- TLS: one verifying context per process --------------------------------------------------------------------

#: (library, SSL_CERT_FILE, SSL_CERT_DIR) -> its context; a few at most (cleared if a process tries many)
_SSL_CONTEXTS: dict[tuple[str, str | None, str | None], Any] = {}
_MAX_SSL_CONTEXTS = 8


def shared_ssl_context(library: Any) -> Any:
    """A verifying ``ssl.SSLContext`` made by ``library`` (``httpx`` or ``httpx2``) with its defaults, made
    once per process and per CA setting (``SSL_CERT_FILE``/``SSL_CERT_DIR``, read at each call).

    Loading the system CA bundle takes tens of milliseconds, and every new
    client would load it again: once per run for the SDK clients (a run has
    its own event loop, so its own client), once per call for the plain-HTTP
    providers. A context holds no connection and no loop, so clients on any
    loop can share it; verification is exactly what the library does by
    default. With ``AGENTLOOM_SPEEDUPS=0`` each call makes a new one.
    """
    if not speedups_on():
        return library.create_ssl_context()
    key = (library.__name__, os.environ.get("SSL_CERT_FILE") or None, os.environ.get("SSL_CERT_DIR") or None)
    context = _SSL_CONTEXTS.get(key)
    if context is None:
        if len(_SSL_CONTEXTS) >= _MAX_SSL_CONTEXTS:
            _SSL_CONTEXTS.clear()
        context = _SSL_CONTEXTS.setdefault(key, library.create_ssl_context())
    return context


def sdk_http_client(default_client: type[T], timeout: float) -> T:
    """``default_client`` (an SDK's ``DefaultAsyncHttpxClient``: the SDK's own defaults) verifying TLS with
    :func:`shared_ssl_context` of the HTTP library it is built on; during a replay, on that library's
    offline transport instead (:mod:`pytest_agentloom._core.offline`: it never opens a connection).
    """
    import importlib

    factory: Callable[..., T] = default_client

    library = next((importlib.import_module(base.__module__.partition(".")[0]) for base in default_client.__mro__
                    if base.__module__.partition(".")[0] in ("httpx", "httpx2")), None)
    if library is None:  # pragma: no cover - an SDK on another HTTP library: its own defaults
        return factory(timeout=timeout)
    transport = offline_transport(library)
    if transport is not None:  # no proxies from the environment either: nothing to connect to
        return factory(timeout=timeout, transport=transport, trust_env=False)
    return factory(timeout=timeout, verify=shared_ssl_context(library))


def plain_http_client(httpx: Any, timeout: float) -> Any:
    """An ``httpx.AsyncClient`` for the plain-HTTP providers (Gemini, Ollama): verifying TLS with
    :func:`shared_ssl_context`, or during a replay on the offline transport (as :func:`sdk_http_client`)."""
    transport = offline_transport(httpx)
    if transport is not None:
        return httpx.AsyncClient(timeout=timeout, transport=transport, trust_env=False)
    return httpx.AsyncClient(timeout=timeout, verify=shared_ssl_context(httpx))
