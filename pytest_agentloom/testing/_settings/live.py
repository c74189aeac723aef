"""The settings of a live session: ``--agentloom-live``, repetitions and their cassettes, checked together.

A live session runs the agentloom tests against live providers through the same path as
``--agentloom-record`` (the real gateway inside the test's cassette session, in record mode
``all``), but keeps nothing: no cassette is read for matching or written, no snapshot is
compared or written. Flags that would write what a live run produced into files a user
keeps (``--agentloom-record``, ``--agentloom-update-snapshots``...) are refused with it, and the
flags that only mean something live (``--agentloom-repeat``...) are refused without it: a
replay sends the same recording every time, so repeating it would show nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import render_message
from ...replay._modes import RecordMode
from .option_table import pass_rate, read_setting, read_setting_from, repeat_count

if TYPE_CHECKING:
    import pytest

__all__ = ["LIVE_FLAGS", "LiveSettings"]

#: The flag that makes a session live; under CI it counts only when typed on the command line.
LIVE_FLAGS = ("--agentloom-live",)
_FLAGS_ALONE = ("record_repetitions", "repeat_early_stop")  # flags that take no value


@dataclass(frozen=True)
class LiveSettings:
    """``--agentloom-live`` and what goes with it, for one session (validated in ``pytest_configure``)."""

    live: bool = False
    record_repetitions: bool = False
    #: ``--agentloom-replay-repetition=K``: tests replay ``<test>/<K>.yaml`` instead of their cassette
    replay_repetition: int | None = None
    #: ``--agentloom-replay-repetitions``: each test runs once per kept ``<test>/<K>.yaml``, replayed
    replay_all: bool = False

    @property
    def repeats(self) -> bool:
        """Whether tests run as repetitions: live, or replaying every kept repetition."""
        return self.live or self.replay_all

    @classmethod
    def from_config(cls, config: pytest.Config, mode: RecordMode) -> LiveSettings:
        """Read and check the options together; a bad value or combination is a ``pytest.UsageError``."""
        import pytest

        try:
            return cls._read(config, mode)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None

    @classmethod
    def _read(cls, config: pytest.Config, mode: RecordMode) -> LiveSettings:
        live = bool(read_setting(config, "live"))
        record = bool(read_setting(config, "record_repetitions"))
        replay = config.getoption("agentloom_replay_repetition", default=None)
        replay_all = bool(read_setting(config, "replay_repetitions"))
        if live:
            _refuse_with_live(config, mode, replay if replay is not None else (True if replay_all else None))
            for name, parse in (("repeat", repeat_count), ("min_pass_rate", pass_rate)):
                value, source = read_setting_from(config, name)
                if value is not None:  # the command line's and the ini's; a marker's is checked per test
                    parse(value, source)
            return cls(live=True, record_repetitions=record)
        for name in ("repeat", "min_pass_rate", "record_repetitions", "repeat_early_stop"):
            if name == "min_pass_rate" and replay_all:  # the bar the kept repetitions are judged by again
                value, source = read_setting_from(config, name)
                if value is not None:
                    pass_rate(value, source)
                continue
            if config.getoption("agentloom_" + name, default=None) is not None:
                flag = "--agentloom-" + name.replace("_", "-")
                raise ValueError(
                    render_message(
                        f"{flag} needs --agentloom-live: without it the tests replay their cassettes, which give the "
                        "same answers every time, so repeating them would show nothing.",
                        hint=f"pytest --agentloom-live {flag}{'' if name in _FLAGS_ALONE else '=...'} "
                             "(API keys needed), or drop the flag.")
                )
        if replay is None and not replay_all:
            return cls()
        flag = "--agentloom-replay-repetitions" if replay_all else "--agentloom-replay-repetition"
        if replay is not None and replay_all:
            raise ValueError(render_message(
                "--agentloom-replay-repetition=K and --agentloom-replay-repetitions cannot be combined.",
                hint="replay one repetition (=K) or all of them (the plural flag)."))
        if mode.records:
            raise ValueError(render_message(
                    f"{flag} replays recorded repetitions; it cannot record too (record mode {mode.value}).",
                    hint="drop --agentloom-record/--agentloom-record-mode."))
        if replay_all:
            return cls(replay_all=True)
        return cls(replay_repetition=repeat_count(replay, "--agentloom-replay-repetition"))


def _refuse_with_live(config: pytest.Config, mode: RecordMode, replay: object) -> None:
    """Refuse what would write a live run's output into files a user keeps, or read a cassette."""
    clashes = [
        (mode.records, "--agentloom-record/--agentloom-record-mode",
         "a live run records nothing; to keep each repetition's calls use --agentloom-record-repetitions, to "
         "re-record the cassettes use --agentloom-record without --agentloom-live"),
        (bool(read_setting(config, "update_snapshots")) or bool(read_setting(config, "create_snapshots")),
         "--agentloom-update-snapshots/--agentloom-create-snapshots",
         "live outputs are not golden: update snapshots from a replayed (or recorded) run, without --agentloom-live"),
        (replay is not None, "--agentloom-replay-repetition(s)",
         "replaying recorded repetitions needs no live provider: drop --agentloom-live"),
    ]
    for clash, flags, fix in clashes:
        if clash:
            raise ValueError(render_message(f"--agentloom-live cannot be combined with {flags}.", hint=f"{fix}."))
