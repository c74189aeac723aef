"""The exceptions of the Stainless-built SDKs (``openai``, ``anthropic``) as ours: one table, most specific first.

Both SDKs generate their exceptions from one template, so they share class
names (``APIStatusError``, ``APITimeoutError``, ...). :data:`SDK_ERRORS` maps
those names to what we raise. :func:`mapped_by` walks an exception's classes
from the most specific up and takes the first one the table names, as httpx
does with httpcore's exceptions. The SDK's own base class (``OpenAIError``,
``AnthropicError``) has a rule too, so an error a newer SDK adds still comes
out as ours; ``tests/providers/test_sdk_error_map.py`` fails when any class
the installed SDKs export falls through to that base rule, so each one gets
a rule of its own.

Nothing here imports an SDK: the adapters pass theirs in.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import (
    AgentloomError,
    ErrorCode,
    MidStreamError,
    ProviderConfigError,
    ProviderError,
    UnusableResponseError,
    render_message,
)
from ._http import nested_too_deeply, tried

__all__ = [
    "SDK_BASES",
    "SDK_ERRORS",
    "SdkRule",
    "mapped_by",
    "our_error_inside",
    "rule_for",
    "translate_sdk_errors",
    "transport_errors",
]


@dataclass(frozen=True)
class SdkRule:
    """What one SDK exception class becomes.

    ``kind`` is our class and ``what`` what happened (the SDK's text follows in
    brackets); ``what=None`` takes the provider's own message from the error
    body, for status errors. ``status`` keeps the exception's ``status_code``;
    ``ours_inside`` hands back an error of ours that the SDK wrapped; ``code``
    replaces the class's code; ``fix`` is the message's hint.
    """

    kind: type[ProviderError]
    what: str | None
    status: bool = False
    ours_inside: bool = False
    code: ErrorCode | None = None
    fix: str | None = None


_CREDENTIALS = SdkRule(
    ProviderConfigError, "cannot load credentials",
    fix="check the provider's credential settings (API key, token file, workload identity), or replay from a "
        "cassette (no key needed there)",
)
_REFUSED_SETUP = SdkRule(
    ProviderConfigError, "the SDK refused to send the request", code=ErrorCode.PROVIDER_MISCONFIGURED,
    fix="check the provider's settings (API key, base URL, client options)",
)

SDK_BASES = {"openai": "OpenAIError", "anthropic": "AnthropicError"}
"""Each SDK's own base exception: the rule of last resort, which the mapping test allows for the base alone."""

SDK_ERRORS: Mapping[str, SdkRule] = {
    # -- the HTTP call: the engine's retry table and the gateway's fallback decide by the status
    "APIStatusError": SdkRule(ProviderError, None, status=True),
    "APITimeoutError": SdkRule(ProviderError, "request timed out"),
    "APIConnectionError": SdkRule(ProviderError, "connection failed", ours_inside=True),
    "APIResponseValidationError": SdkRule(ProviderError, "response did not match the API's shape", status=True),
    "APIError": SdkRule(ProviderError, "API error"),
    "RetryableError": SdkRule(ProviderError, "request failed, and the SDK asks for a retry"),  # anthropic
    "WebSocketConnectionClosedError": SdkRule(ProviderError, "the WebSocket connection closed"),  # openai
    "WebSocketQueueFullError": SdkRule(ProviderError, "the WebSocket send queue is full"),  # openai
    # -- an answer the SDK refuses: the same request would get it again
    "LengthFinishReasonError": SdkRule(UnusableResponseError, "the reply was cut at the token limit",
                                       code=ErrorCode.OUTPUT_TRUNCATED),  # openai's parse helpers
    "ContentFilterFinishReasonError": SdkRule(UnusableResponseError, "the content filter stopped the reply",
                                              code=ErrorCode.CONTENT_FILTERED),  # openai's parse helpers
    "APIWebhookValidationError": SdkRule(UnusableResponseError, "a webhook payload failed verification"),
    "InvalidWebhookSignatureError": SdkRule(UnusableResponseError, "a webhook signature failed verification"),
    # -- nothing was sent: the provider's setup is wrong
    "CredentialsError": _CREDENTIALS,  # anthropic, and its IdentityTokenFileError
    "WorkloadIdentityError": _CREDENTIALS,  # anthropic
    "SubjectTokenProviderError": _CREDENTIALS,  # openai
    "_AmbiguousModuleClientUsageError": _REFUSED_SETUP,  # openai's module-level client, two sets of settings
    "OpenAIError": _REFUSED_SETUP,  # raised bare for a client the SDK will not build (no key, say)
    "AnthropicError": _REFUSED_SETUP,
}


#: Rules of a request that got no answer: their message names the URL tried.
_NO_ANSWER = (SDK_ERRORS["APIConnectionError"], SDK_ERRORS["APITimeoutError"])


def mapped_by(cls: type[BaseException], sdk: str) -> type[BaseException] | None:
    """The most specific class of ``cls`` that the SDK package ``sdk`` defines and :data:`SDK_ERRORS` names."""
    for klass in cls.__mro__:
        if klass.__module__.partition(".")[0] == sdk and klass.__name__ in SDK_ERRORS:
            return klass
    return None


def rule_for(cls: type[BaseException], sdk: str) -> SdkRule | None:
    """The rule for an exception class of ``sdk``, or ``None`` when it is not the SDK's."""
    klass = mapped_by(cls, sdk)
    return SDK_ERRORS[klass.__name__] if klass is not None else None


def our_error_inside(exc: BaseException) -> AgentloomError | None:
    """An error of ours that an SDK wrapped (e.g. in ``APIConnectionError``), found along the cause chain.

    A transport of ours (the replay layer's) may raise inside the SDK's HTTP
    call; the SDK reports any such failure as a connection error. Handing
    back our own error keeps its meaning (a cassette miss is not retried and
    is no reason to fall back to another provider).
    """
    seen: set[int] = set()  # id()s within this call: ``exc`` holds every exception of its chain meanwhile
    current: BaseException | None = exc.__cause__ or exc.__context__
    while current is not None and id(current) not in seen:
        if isinstance(current, AgentloomError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def transport_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(timeouts, other transport failures) of ``httpx`` and of ``httpx2``, which recent SDKs use instead.

    A stream read by an SDK can raise these raw, without the SDK's own wrapping.
    """
    import httpx

    timeouts: list[type[BaseException]] = [httpx.TimeoutException]
    transport: list[type[BaseException]] = [httpx.TransportError]
    try:
        import httpx2
    except ImportError:  # an SDK version still on httpx
        pass
    else:
        timeouts.append(httpx2.TimeoutException)
        transport.append(httpx2.TransportError)
    return tuple(timeouts), tuple(transport)


@contextlib.contextmanager
def translate_sdk_errors(
    sdk: Any, provider: str, status_message: Callable[[Any], str], *, streaming_started: list[bool] | None = None
) -> Iterator[None]:
    """Raise the error of ours that :data:`SDK_ERRORS` gives for an exception of ``sdk`` (the module).

    ``status_message`` reads the provider's message from a status error's body.
    ``streaming_started`` marks errors after the first chunk, which become
    :class:`MidStreamError`: the gateway must not fall back on them. A raw httpx
    timeout or transport failure (a stream read outside the SDK's wrapping) has
    no status. Anything else, our own errors included, passes through.
    """
    timeouts, transport = transport_errors()
    plain = SdkRule(ProviderError, None)

    def ours(rule: SdkRule, message: str, status: int | None) -> ProviderError:
        kind = rule.kind
        if kind is ProviderError and streaming_started and streaming_started[0]:
            kind = MidStreamError
        text = render_message(f"{provider}: {message}", hint=f"{rule.fix}." if rule.fix else None)
        return kind(text, status=status, provider=provider, code=rule.code)

    try:
        yield
    except Exception as exc:
        rule = rule_for(type(exc), sdk.__name__)
        if rule is None:
            if isinstance(exc, RecursionError):  # the SDK parsed a reply nested past the recursion limit
                raise nested_too_deeply(provider) from exc
            if isinstance(exc, timeouts):
                raise ours(plain, f"request{tried(exc)} timed out ({exc!r})", None) from exc
            if isinstance(exc, transport):
                raise ours(plain, f"connection failed{tried(exc)} ({exc!r})", None) from exc
            raise
        if rule.ours_inside and (inside := our_error_inside(exc)) is not None:
            raise inside from exc
        what = f"{rule.what}{tried(exc)}" if rule in _NO_ANSWER else rule.what
        message = status_message(exc) if what is None else f"{what} ({_text_of(exc)})"
        raise ours(rule, message, getattr(exc, "status_code", None) if rule.status else None) from exc


def _text_of(exc: BaseException) -> str:
    """``str(exc)``, or the class name when the SDK's ``__str__`` fails: translating must never raise anew."""
    try:
        return str(exc)
    except Exception:
        return type(exc).__name__
