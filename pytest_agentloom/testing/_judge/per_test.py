"""One test's judge calls: how unnamed calls are numbered, whether their verdicts are kept, and the verdict
book (made at the first judge call, as few tests judge). The harness hands judge calls here."""

from __future__ import annotations

from typing import Any

from .._snapshots.per_test import TestSnapshots
from .judge import JudgeAsk
from .verdict import Verdict
from .verdicts import VerdictBook, VerdictCall

__all__ = ["TestVerdicts"]


class TestVerdicts:
    """The verdict snapshots of one test's judge calls. ``cassette`` is the test's ``TestCassette`` (or ``None``)."""

    __test__ = False

    def __init__(self, snapshots: TestSnapshots, cassette: Any) -> None:
        self._snapshots = snapshots
        self._cassette = cassette
        self._judges = 0  # unnamed judge calls, which number their verdict snapshots
        self.book = VerdictBook(snapshots.session, snapshots.nodeid)

    def stem(self, name: str | None) -> str:
        """The verdict file's stem of the next call (``verdict``, ``verdict.2``... or ``verdict.<name>``)."""
        if name is not None:
            return f"verdict.{name}"
        self._judges += 1
        return "verdict" if self._judges == 1 else f"verdict.{self._judges}"

    def prepare(self, asked: JudgeAsk, stem: str, snapshot: bool | None, *, through_cassette: bool) -> None:
        """Name the command that refreshes ``asked``'s verdict, and check its stored verdict (a stale one fails
        here, before the judge is asked) when it keeps one."""
        __tracebackhide__ = True
        if through_cassette and self._cassette is not None:
            asked.record_command = self._cassette.settings.record_command(self._cassette.item)
        if self._keeps_verdicts() and (snapshot if snapshot is not None else through_cassette):
            asked.call = self._call(stem, asked.label, through_cassette)
            self.book.before(asked.call, asked.hashes())

    def _keeps_verdicts(self) -> bool:
        """Verdict snapshots are golden files: a live run (``--agentloom-live``), and the replay of one of its
        repetitions, neither compares nor writes them, as it compares no snapshot; its verdicts still pass or fail.
        """
        if self._snapshots.live:
            return False
        return self._cassette is None or self._cassette.settings.live.replay_repetition is None

    def _call(self, stem: str, label: str, through_cassette: bool) -> VerdictCall:
        __tracebackhide__ = True
        from .._snapshots.compare import update_hint

        path = self._snapshots.path(stem)
        if through_cassette and self._cassette is not None:
            recording = self._cassette.recording()
            session = self._cassette.session
            return VerdictCall(path=path, label=label, refresh=recording, defer=recording,
                               refresh_command=self._cassette.settings.record_command(self._cassette.item),
                               redact=session.redact_text if session is not None else None)
        command = update_hint(self._snapshots.nodeid).partition("\n  ")[2]
        return VerdictCall(path=path, label=label, refresh=self._snapshots.session.update, defer=False,
                           refresh_command=command)

    def verdict(self, asked: JudgeAsk, result: Any, check: bool) -> Verdict:
        """The verdict of a judge run, kept in its snapshot; fails the test when it fails and ``check``."""
        __tracebackhide__ = True
        verdict = asked.verdict(result)
        if asked.call is not None:
            self.book.after(asked.call, verdict)
        if check and not verdict.passed:
            raise AssertionError(verdict.failure_message(f"'{asked.label}'"))
        return verdict
