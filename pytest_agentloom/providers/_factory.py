"""Provider names to classes, and :func:`default_gateway`, the gateway built from the environment."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .._core.types import Provider
from ..errors import UsageError
from ._common import PLACEHOLDER_API_KEY
from ._gateway import PROVIDER_ALIASES, Gateway

if TYPE_CHECKING:
    from .._core.clock import Clock

__all__ = ["PROVIDERS", "create_provider", "default_gateway", "records_http"]


class _ProviderSettings(Protocol):
    """One entry of ``config.providers`` (the engine's ``ProviderSettings``)."""

    @property
    def base_url(self) -> str | None: ...
    @property
    def api_key_env(self) -> str | None: ...
    @property
    def timeout(self) -> float | None: ...
    @property
    def api(self) -> str | None: ...


class WorkflowConfig(Protocol):
    """What :func:`default_gateway` reads of a workflow's ``config`` (the engine's ``WorkflowConfig``).

    Named by its fields: the providers sit below the engine and do not import its types.
    """

    @property
    def provider(self) -> str | None: ...
    @property
    def providers(self) -> Mapping[Any, _ProviderSettings]: ...

PROVIDERS: dict[str, str] = {
    "openai": "pytest_agentloom.providers._openai:OpenAIProvider",
    "anthropic": "pytest_agentloom.providers._anthropic:AnthropicProvider",
    "google": "pytest_agentloom.providers._google:GoogleProvider",
    "ollama": "pytest_agentloom.providers._ollama:OllamaProvider",
    "generic_openai": "pytest_agentloom.providers._generic_openai:GenericOpenAIProvider",
}
_KEYED = ("openai", "anthropic", "google", "generic_openai")
_OPENAI_WIRE = ("openai", "generic_openai")


def create_provider(name: str, **options: Any) -> Provider:
    """A provider by its name (``openai``, ``anthropic``, ``google``, ``ollama``, ``generic_openai``)."""
    key = PROVIDER_ALIASES.get(name, name)
    if key not in PROVIDERS:
        raise UsageError(f"unknown provider {name!r}; known providers are {', '.join(sorted(PROVIDERS))}")
    module_name, _, class_name = PROVIDERS[key].partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(**options)  # type: ignore[no-any-return]


def records_http(provider: object) -> bool:
    """Whether ``provider`` is one of ours that calls a real provider over HTTP (``OpenAIProvider``,
    ``AnthropicProvider``... or a ``Gateway`` made only of them): the ``agentloom`` fixture puts such a provider,
    given as ``provider=``, in the test's cassette, where a scripted or hand-written one is used as it is."""
    return getattr(provider, "records_http", False) is True


def default_gateway(
    config: WorkflowConfig | None = None,
    *,
    api_key_placeholder: bool = False,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    clock: Clock | None = None,
) -> Gateway:
    """A gateway over every provider, configured from the environment at the first call.

    With ``api_key_placeholder=True`` (replay) the keyed providers get
    :data:`~pytest_agentloom.providers._common.PLACEHOLDER_API_KEY` instead of
    any real key, so a replay needs no secret and cannot leak one. Base URLs
    still come from the environment. ``options`` passes constructor arguments
    per provider name, e.g. ``{"openai": {"base_url": "http://127.0.0.1:8000/v1"}}``.
    ``config.provider``, when set, must name a known provider.
    """
    if config is not None and config.provider:
        key = PROVIDER_ALIASES.get(config.provider, config.provider)
        if key not in PROVIDERS:
            raise UsageError(
                f"config.provider is {config.provider!r}, which is not a provider; "
                f"known providers are {', '.join(sorted(PROVIDERS))}"
            )
    unknown = sorted(set(options or {}) - set(PROVIDERS))
    if unknown:
        raise UsageError(
            f"options name unknown provider(s) {', '.join(unknown)}; known: {', '.join(sorted(PROVIDERS))}"
        )
    providers: dict[str, Provider] = {}
    for name in PROVIDERS:
        kwargs = {**_from_config(config, name), **(options or {}).get(name, {})}
        if api_key_placeholder and name in _KEYED:
            kwargs["api_key"] = PLACEHOLDER_API_KEY
        providers[name] = create_provider(name, **kwargs)
    return Gateway(providers=providers, clock=clock)


def _from_config(config: WorkflowConfig | None, name: str) -> dict[str, Any]:
    """Constructor arguments from ``config.providers.<name>``: base URL, key variable, timeout, API."""
    settings = config.providers.get(name) if config is not None else None
    if settings is None:
        return {}
    kwargs: dict[str, Any] = {}
    if settings.base_url:
        kwargs["host" if name == "ollama" else "base_url"] = settings.base_url
    if settings.api_key_env and name in _KEYED:
        kwargs["api_key_env"] = settings.api_key_env
    if settings.timeout:
        kwargs["timeout"] = settings.timeout
    if settings.api and name in _OPENAI_WIRE:  # the workflow's model refuses it on any other provider
        kwargs["api"] = settings.api
    return kwargs
