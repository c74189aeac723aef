"""The one switch for every speed-up: on by default, off for the spellings the docs give."""

from __future__ import annotations

import pytest

from pytest_agentloom._core.speedups import ENV_VAR, speedups_on


def test_speedups_are_on_unless_the_variable_says_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert speedups_on()
    monkeypatch.setenv(ENV_VAR, "1")
    assert speedups_on()


@pytest.mark.parametrize("value", ["0", "off", "False", " no "])
def test_each_off_spelling_turns_them_off(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(ENV_VAR, value)
    assert not speedups_on()
