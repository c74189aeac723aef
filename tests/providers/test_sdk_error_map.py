"""Every exception class of the installed ``openai`` and ``anthropic`` SDKs is mapped to one of ours.

As httpx checks that every httpcore exception has an httpx counterpart: a new
SDK release that adds an exception class fails here until the class has a rule
in :data:`pytest_agentloom.providers._sdk_errors.SDK_ERRORS`, instead of reaching
users through the rule of last resort (the SDK's base class).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import httpx
import pytest

from pytest_agentloom import errors
from pytest_agentloom.errors import AgentloomError, MidStreamError, ProviderError
from pytest_agentloom.providers._anthropic import anthropic_errors
from pytest_agentloom.providers._openai import openai_errors
from pytest_agentloom.providers._sdk_errors import SDK_BASES, SDK_ERRORS, mapped_by, rule_for

TRANSLATE: dict[str, Callable[..., AbstractContextManager[None]]] = {
    "openai": openai_errors,
    "anthropic": anthropic_errors,
}


def exception_classes(sdk: str) -> list[type[BaseException]]:
    """Every exception class ``sdk`` defines and exposes: its top level and its ``_exceptions`` module."""
    found: dict[str, type[BaseException]] = {}
    for name in (sdk, f"{sdk}._exceptions"):
        for value in dict(vars(importlib.import_module(name))).values():
            # type(value), not isinstance: openai 1.x's module-level proxies (openai.chat, ...) answer
            # __class__ by building a client, which fails without OPENAI_API_KEY
            if issubclass(type(value), type) and issubclass(value, BaseException) \
                    and value.__module__.partition(".")[0] == sdk:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return sorted(found.values(), key=lambda cls: cls.__name__)


def cases() -> Iterator[object]:
    for sdk in TRANSLATE:
        for cls in exception_classes(sdk):
            yield pytest.param(sdk, cls, id=f"{sdk}.{cls.__name__}")


def bare(cls: type[BaseException]) -> BaseException:
    """An instance without the SDK's constructor (each wants other arguments), with the attributes we read."""
    exc = cls.__new__(cls)
    exc.args = ("the SDK's words",)
    req = httpx.Request("POST", "http://127.0.0.1/v1/x")
    for name, value in {"request": req, "response": httpx.Response(418, request=req), "body": None,
                        "message": "the SDK's words", "status_code": 418, "request_id": None}.items():
        setattr(exc, name, value)
    return exc


def test_both_sdks_have_exceptions_to_map() -> None:
    """Guard the walk itself: it sees the families every Stainless SDK has."""
    for sdk in TRANSLATE:
        names = {cls.__name__ for cls in exception_classes(sdk)}
        assert {"APIError", "APIStatusError", "APIConnectionError", "APITimeoutError", SDK_BASES[sdk]} <= names


@pytest.mark.parametrize(("sdk", "cls"), list(cases()))
def test_every_sdk_exception_class_has_a_rule_of_its_own(sdk: str, cls: type[BaseException]) -> None:
    klass = mapped_by(cls, sdk)
    assert klass is not None, f"{cls.__module__}.{cls.__name__} is not mapped: add a rule to SDK_ERRORS"
    base = SDK_BASES[sdk]
    assert klass.__name__ != base or cls.__name__ == base, (
        f"{cls.__module__}.{cls.__name__} only reaches the rule of last resort ({base}): give it, or a closer "
        f"parent, a rule of its own in SDK_ERRORS"
    )


@pytest.mark.parametrize(("sdk", "cls"), list(cases()))
def test_raising_it_through_the_adapter_gives_the_rule_s_error(sdk: str, cls: type[BaseException]) -> None:
    rule = rule_for(cls, sdk)
    assert rule is not None
    exc = bare(cls)
    with pytest.raises(AgentloomError) as caught, TRANSLATE[sdk](sdk):
        raise exc
    ours = caught.value
    assert type(ours) is rule.kind and ours.__cause__ is exc
    assert ours.status == (418 if rule.status else None)
    assert ours.code == (rule.code or rule.kind.code)
    assert ours.provider == sdk and ours.code in set(errors.ErrorCode)


def test_every_rule_names_a_class_of_ours_and_a_listed_code() -> None:
    for name, rule in SDK_ERRORS.items():
        assert issubclass(rule.kind, ProviderError) and rule.kind.__module__ == "pytest_agentloom.errors", name
        assert rule.code is None or rule.code in set(errors.ErrorCode), name


def test_the_most_specific_rule_wins() -> None:
    import anthropic
    import openai

    assert rule_for(openai.APITimeoutError, "openai") is SDK_ERRORS["APITimeoutError"]  # not APIConnectionError's
    assert rule_for(openai.RateLimitError, "openai") is SDK_ERRORS["APIStatusError"]
    assert rule_for(openai.LengthFinishReasonError, "openai") is SDK_ERRORS["LengthFinishReasonError"]
    assert rule_for(anthropic.APIStatusError, "anthropic") is SDK_ERRORS["APIStatusError"]
    assert rule_for(ValueError, "openai") is None  # not the SDK's: passes through untouched


def test_a_refused_answer_and_missing_credentials_are_never_retried() -> None:
    import openai

    for cls, code in [(openai.LengthFinishReasonError, "output_truncated"),
                      (openai.ContentFilterFinishReasonError, "content_filtered")]:
        with pytest.raises(errors.UnusableResponseError) as caught, openai_errors("openai"):
            raise bare(cls)
        assert caught.value.retryable is False and caught.value.code == code
    credentials = getattr(importlib.import_module("anthropic"), "CredentialsError", None)
    if credentials is not None:
        with pytest.raises(errors.ProviderConfigError) as missing, anthropic_errors("anthropic"):
            raise bare(credentials)
        assert missing.value.retryable is False and "How to fix:" in str(missing.value)


def test_after_the_first_chunk_a_plain_provider_error_becomes_a_mid_stream_error() -> None:
    import openai

    with pytest.raises(MidStreamError), openai_errors("openai", streaming_started=[True]):
        raise bare(openai.APIConnectionError)
    with pytest.raises(errors.UnusableResponseError), openai_errors("openai", streaming_started=[True]):
        raise bare(openai.LengthFinishReasonError)  # keeps its kind: it is never retried anyway


def test_an_error_of_ours_passes_through_untouched() -> None:
    mine = errors.StepError("mine", code="test_only")
    with pytest.raises(errors.StepError) as caught, openai_errors("openai"):
        raise mine
    assert caught.value is mine
