"""The API keys of the process environment are looked for again whenever the environment changed."""

from __future__ import annotations

import pytest

from pytest_agentloom._redaction.api_keys import api_keys_from_env, redact_api_keys


def test_keys_follow_every_change_of_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ZZ_TEST_API_KEY", raising=False)
    before = api_keys_from_env()
    assert "sk-first-value-1234" not in before
    monkeypatch.setenv("ZZ_TEST_API_KEY", "sk-first-value-1234")
    assert "sk-first-value-1234" in api_keys_from_env()
    monkeypatch.setenv("ZZ_TEST_API_KEY", "sk-other-value-5678")  # same name, same count of variables
    keys = api_keys_from_env()
    assert "sk-other-value-5678" in keys and "sk-first-value-1234" not in keys
    assert redact_api_keys("say sk-other-value-5678") == "say <SCRUBBED>"
    monkeypatch.delenv("ZZ_TEST_API_KEY")
    assert "sk-other-value-5678" not in api_keys_from_env()


def test_the_answer_is_the_callers_own_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZZ_TEST_API_KEY", "sk-kept-value-1234")
    api_keys_from_env().clear()
    assert "sk-kept-value-1234" in api_keys_from_env()


def test_a_mapping_given_is_read_as_it_is() -> None:
    assert api_keys_from_env({"A_API_KEY": "sk-abcdefgh", "B": "sk-zzzzzzzzz", "C_API_KEY": "short"}) == [
        "sk-abcdefgh"]
