"""Record modes: vcrpy's names, and a bad one lists the valid ones."""

from __future__ import annotations

import pytest

from pytest_agentloom.errors import UsageError
from pytest_agentloom.replay._modes import RecordMode, parse_record_mode


def test_record_modes_are_vcrpys_names() -> None:
    assert [mode.value for mode in RecordMode] == ["none", "once", "new_episodes", "all"]
    assert parse_record_mode("NEW-EPISODES") is RecordMode.NEW_EPISODES
    assert not RecordMode.NONE.records and RecordMode.ONCE.records


def test_a_bad_record_mode_lists_the_valid_ones() -> None:
    with pytest.raises(UsageError, match=r"^record mode must be one of none, once, new_episodes, all \(got 'any'\)"):
        parse_record_mode("any")
