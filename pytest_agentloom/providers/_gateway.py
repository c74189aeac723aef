"""The gateway: route a model to its provider, fall back when one is down, trip a breaker when one keeps failing.

Routing, in order: ``request.provider`` (set from ``config.provider``) wins;
else every route whose pattern matches the model, in the order given, adds
its providers. A provider that fails *before answering* (no status, or a 5xx)
hands the request to the next candidate; any other error (a 4xx, a 429, a
stream that broke after its first chunk) goes straight back to the engine,
whose retry table decides. So does an error whose kind is never retried
(``retryable is False``: a provider without an API key), which leaves the
breaker as it was.

Each provider has a circuit breaker on the injected clock (the running
step's clock when none is given): ``failure_threshold`` consecutive failures
open it, and after ``cooldown_seconds`` one request may probe (half-open). A
429 is the provider answering, so it doesn't count.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .._core.arguments import bad_argument, check_real_number
from .._core.types import EmbedRequest, EmbedResponse, LLMRequest, LLMResponse, Provider
from ..errors import AttachmentRefused, ErrorCode, MidStreamError, ProviderError, StepError, UsageError, render_message

if TYPE_CHECKING:
    from .._core.clock import Clock

__all__ = ["DEFAULT_ROUTES", "PROVIDER_ALIASES", "CircuitBreaker", "Gateway"]

DEFAULT_ROUTES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gpt-*", ("openai",)),
    ("chatgpt-*", ("openai",)),
    ("o1*", ("openai",)),
    ("o3*", ("openai",)),
    ("o4*", ("openai",)),
    ("claude*", ("anthropic",)),
    ("gemini*", ("google",)),
    ("text-embedding-3-*", ("openai",)),
    ("text-embedding-ada-*", ("openai",)),
    ("text-embedding-0*", ("google",)),
)
PROVIDER_ALIASES = {"gemini": "google", "openai_compatible": "generic_openai"}

BreakerState = Literal["closed", "open", "half_open"]
R = TypeVar("R", LLMResponse, EmbedResponse)


@dataclass
class CircuitBreaker:
    """Consecutive failures of one provider, on a clock; ``allow`` says whether to try it now."""

    failure_threshold: int = 5
    cooldown_seconds: float = 30.0
    state: BreakerState = "closed"
    failures: int = 0
    opened_at: float = 0.0
    transitions: list[tuple[float, BreakerState]] = field(default_factory=list)

    def __post_init__(self) -> None:
        _check_breaker_settings("CircuitBreaker()", self.failure_threshold, self.cooldown_seconds)

    def allow(self, now: float) -> bool:
        if self.state == "open" and now - self.opened_at >= self.cooldown_seconds:
            self._move("half_open", now)
        return self.state != "open"

    def succeeded(self, now: float) -> None:
        self.failures = 0
        if self.state != "closed":
            self._move("closed", now)

    def failed(self, now: float) -> None:
        self.failures += 1
        if self.state == "half_open" or self.failures >= self.failure_threshold:
            self.opened_at = now
            if self.state != "open":
                self._move("open", now)

    def reopens_at(self) -> float:
        return self.opened_at + self.cooldown_seconds

    def _move(self, state: BreakerState, now: float) -> None:
        self.state = state
        self.transitions.append((now, state))


def _check_breaker_settings(call: str, failure_threshold: object, cooldown_seconds: object) -> None:
    """A breaker opens after a whole number (at least 1) of failures and waits a finite, non-negative time."""
    if isinstance(failure_threshold, bool) or not isinstance(failure_threshold, int) or failure_threshold < 1:
        raise bad_argument(call, "failure_threshold", failure_threshold, "a whole number of failures, at least 1")
    check_real_number(call, "cooldown_seconds", cooldown_seconds)
    if cooldown_seconds < 0:  # type: ignore[operator]  # a real number, checked above
        raise bad_argument(call, "cooldown_seconds", cooldown_seconds, "a number of seconds, 0 or more")


def _check_routes(routes: object) -> None:
    """``routes`` is a sequence of ``(pattern, provider name or names)`` pairs."""
    accepted = "a list of (model pattern, provider name or list of names) pairs, e.g. [('gpt-*', 'openai')]"
    if isinstance(routes, (str, bytes, Mapping)) or not isinstance(routes, Sequence):
        raise bad_argument("Gateway()", "routes", routes, accepted)
    for route in routes:
        if not (isinstance(route, Sequence) and not isinstance(route, str) and len(route) == 2
                and isinstance(route[0], str)):
            raise bad_argument("Gateway()", "routes", route, accepted, hint="give each route as a pair")
        names = route[1]
        if not (isinstance(names, str) or (isinstance(names, Sequence) and names
                                           and all(isinstance(name, str) for name in names))):
            raise bad_argument("Gateway()", "routes", route, accepted, hint="name providers by their keys")


class Gateway:
    """A provider made of providers: ``Gateway(providers={"openai": OpenAIProvider(), ...})``.

    ``routes`` replaces :data:`DEFAULT_ROUTES`: a sequence of ``(pattern,
    providers)`` where ``pattern`` is an ``fnmatch`` pattern on the model name
    and ``providers`` one name or several, tried in order.
    """

    name = "gateway"

    def __init__(
        self,
        *,
        providers: Mapping[str, Provider],
        routes: Sequence[tuple[str, str | Sequence[str]]] | None = None,
        clock: Clock | None = None,
        failure_threshold: int = 5,
        cooldown_seconds: float = 30.0,
    ) -> None:
        if not providers:
            raise UsageError(
                "Gateway needs at least one provider, e.g. Gateway(providers={'openai': OpenAIProvider()})"
            )
        for key, provider in providers.items():
            if not isinstance(provider, Provider):
                raise UsageError(
                    f"provider '{key}' must have an async complete(request) method "
                    f"(got {provider!r} that is a {type(provider).__name__})"
                )
        _check_breaker_settings("Gateway()", failure_threshold, cooldown_seconds)
        if clock is not None and not callable(getattr(clock, "now", None)):
            raise bad_argument("Gateway()", "clock", clock, "a clock with a now() method, e.g. VirtualClock(), or None")
        if routes is not None:
            _check_routes(routes)
        self.providers = dict(providers)
        self.routes = tuple(
            (pattern, (names,) if isinstance(names, str) else tuple(names))
            for pattern, names in (DEFAULT_ROUTES if routes is None else routes)
        )
        self._clock = clock
        self.breakers = {
            key: CircuitBreaker(failure_threshold=failure_threshold, cooldown_seconds=cooldown_seconds)
            for key in self.providers
        }
        self.fallbacks: list[tuple[str, str, str]] = []  # (step id, provider that failed, error), for assertions

    @property
    def records_http(self) -> bool:
        """Whether every provider of the gateway sends its calls over HTTP (so the ``agentloom`` fixture records
        and replays the gateway in the test's cassette, as it does the default gateway); a gateway holding a
        scripted provider answers some calls itself and is used as it is."""
        return all(getattr(provider, "records_http", False) is True for provider in self.providers.values())

    def candidates(self, request: LLMRequest | EmbedRequest) -> list[str]:
        """The providers to try for ``request``, in order; raises a clear error when none fits."""
        if request.provider:
            wanted = PROVIDER_ALIASES.get(request.provider, request.provider)
            if wanted not in self.providers:
                raise StepError(
                    render_message(
                        f"step '{request.step_id}' asks for provider '{request.provider}', which this gateway doesn't "
                        f"have (it has {', '.join(sorted(self.providers))}).",
                        hint="set config.provider to one of those, or add the provider to the gateway."),
                    code=ErrorCode.UNKNOWN_PROVIDER,
                )
            return [wanted]
        names: list[str] = []
        for pattern, targets in self.routes:
            if fnmatch.fnmatchcase(request.model, pattern):
                names += [t for t in targets if t in self.providers and t not in names]
        if not names:
            raise StepError(
                render_message(
                    f"step '{request.step_id}': no provider for model '{request.model}'. Routes: "
                    f"{self.describe_routes()}.",
                    hint="set config.provider (or the gateway's routes) to name the provider for this model."),
                code=ErrorCode.NO_ROUTE,
            )
        return names

    def describe_routes(self) -> str:
        rows = []
        for pattern, targets in self.routes:
            present = [t if t in self.providers else f"{t} (not configured)" for t in targets]
            rows.append(f"{pattern} -> {', '.join(present)}")
        return "; ".join(rows)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return await self._route(request, self.candidates(request), lambda name: self.providers[name].complete(request))

    async def embed(self, request: EmbedRequest) -> EmbedResponse:
        """Vectors from the first routed provider that can embed, with the same fallback and breakers."""
        names = self.candidates(request)
        able = [name for name in names if callable(getattr(self.providers[name], "embed", None))]
        if not able:
            raise StepError(
                render_message(
                    f"embed '{request.step_id}': provider {', '.join(names)} cannot embed (model '{request.model}').",
                    hint="route the embedding model to openai, google or ollama (config.provider or the "
                         "gateway's routes)."), code=ErrorCode.EMBED_UNSUPPORTED,
            )
        embedders: dict[str, Any] = {name: self.providers[name] for name in able}  # Provider doesn't declare embed
        return await self._route(request, able, lambda name: embedders[name].embed(request))

    async def _route(self, request: LLMRequest | EmbedRequest, names: list[str],
                     call: Callable[[str], Awaitable[R]]) -> R:
        from .._core.clock import current_clock

        clock = self._clock or current_clock()
        last: ProviderError | None = None
        skipped: list[str] = []
        before = len(self.fallbacks)
        for name in names:
            breaker = self.breakers[name]
            if not breaker.allow(clock.now()):
                skipped.append(f"{name} (circuit open until t={breaker.reopens_at():g})")
                continue
            try:
                response = await call(name)
            except AttachmentRefused as exc:  # nothing was sent: the next provider may take the attachment
                self.fallbacks.append((request.step_id, name, str(exc)))
                last = exc
                continue
            except ProviderError as exc:
                if exc.retryable is False:  # e.g. no API key: says nothing about the provider's health
                    raise
                if not _counts_against(exc):
                    if exc.status != 429:
                        breaker.succeeded(clock.now())  # it answered, so it is up
                    raise
                breaker.failed(clock.now())
                if isinstance(exc, MidStreamError):
                    raise
                self.fallbacks.append((request.step_id, name, str(exc)))
                last = exc
                continue
            breaker.succeeded(clock.now())
            return response.model_copy(update={"provider": response.provider or name})
        if last is not None:
            mine = [entry for entry in self.fallbacks[before:] if entry[0] == request.step_id]  # not a parallel step's
            raise _naming_each(request, mine, last)
        raise ProviderError(
            f"every provider for model '{request.model}' is unavailable: {', '.join(skipped)}",
            status=None,
            provider=self.name,
        )


def _naming_each(request: LLMRequest | EmbedRequest, failed: list[tuple[str, str, str]],
                 last: ProviderError) -> ProviderError:
    """The last provider's error, its message naming every provider of the route that failed and why (a route
    sends them all the same model: a workflow's ``fallback`` gives each its own). Its status and provider stay
    the last one's, so the retry table decides as before; errors of other kinds are raised as they are."""
    if type(last) is not ProviderError or len(failed) < 2:
        return last
    tried = "; ".join(f"{name}: {error}" for _step, name, error in failed)
    return ProviderError(f"every provider for model '{request.model}' failed, in order: {tried}",
                         status=last.status, provider=last.provider, code=last.code)


def _counts_against(exc: ProviderError) -> bool:
    """No status (connection, timeout) or a 5xx: the provider failed before answering."""
    return exc.status is None or exc.status >= 500
