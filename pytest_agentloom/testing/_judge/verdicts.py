"""Verdict snapshots: a judge's answer kept beside the test's golden snapshots, with what it judged.

Each ``agentloom.judge()`` call of a test keeps its verdict in a snapshot file of
its own, next to the test's other snapshots: ``<test>.verdict.yaml`` for the
first unnamed call, ``<test>.verdict.2.yaml``... for the next, and
``<test>.verdict.<name>.yaml`` for ``judge(..., name=...)``. The file holds the
model, the SHA-256 of the rubric and of the judged text, the rubric, the start of
the judged text, the threshold, and the answer (score, passed, reason).

Before the judge is asked, the stored hashes are checked: a verdict recorded
for another text, rubric or model is *stale*, and the test fails with
:class:`~pytest_agentloom.errors.VerdictStaleError` naming the command that
refreshes it. Nothing is re-judged silently, and a stale verdict never passes.

When the hashes match, the judge's call replays from the cassette and its verdict
must equal the stored one (a difference fails like a changed snapshot).

Writing follows the snapshot flags (``--agentloom-create-snapshots`` writes a
missing verdict, ``--agentloom-update-snapshots`` a changed one), with one
addition: ``--agentloom-record`` (record mode ``all``) asks the judge live again,
so it refreshes the verdict too; that write waits for the end of the test and
happens only when the test passed, as the cassette's does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._core.diffs import diff_report
from ..._core.files import write_text_atomic
from ..._core.yaml_io import read_yaml_file
from ...errors import ArtifactError, DataReadError, VerdictStaleError, render_message
from .._snapshots.compare import claim_file, display_path, dump_yaml, update_hint

if TYPE_CHECKING:
    from .._snapshots.compare import SnapshotSession
    from .verdict import Verdict

__all__ = ["VERDICT_FORMAT", "VerdictBook", "VerdictCall"]

VERDICT_FORMAT = 1
_HASHES = (("judged_sha256", "judged text"), ("rubric_sha256", "rubric"), ("model", "model"))


@dataclass(frozen=True)
class VerdictCall:
    """One judge call as the book sees it: its file, its label in messages, and how to refresh it.

    ``refresh`` says the judge is being asked afresh (recording, or a scripted judge under
    ``--agentloom-update-snapshots``), so a stale verdict is replaced rather than refused; ``defer`` says the
    new verdict is written only when the test passes (it came from a recording). ``refresh_command`` is
    what the stale message tells the user to run; ``redact`` (the cassette's) takes secrets and API keys out
    of the texts the file keeps, as it does for the cassette.
    """

    path: Path
    label: str
    refresh: bool
    defer: bool
    refresh_command: str
    redact: Callable[[str], str] | None = None


@dataclass
class VerdictBook:
    """The verdict snapshots of one test: checks before and after each judge call, and the writes it waits for."""

    snapshots: SnapshotSession
    nodeid: str
    pending: list[tuple[Path, str]] = field(default_factory=list)

    def before(self, call: VerdictCall, wanted: dict[str, Any]) -> None:
        """Refuse a stale verdict before its judge is asked; ``wanted`` holds the hashes of this call."""
        __tracebackhide__ = True
        stored, changed = self.look_up(call, wanted)
        if stored is None or call.refresh:
            return
        if changed:
            raise VerdictStaleError(_stale_message(call, stored, changed))

    def look_up(self, call: VerdictCall, wanted: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
        """The stored verdict of ``call`` (``None`` when there is none) and what changed since it was recorded
        (``judged text``, ``rubric``, ``model``; empty when it still holds for ``wanted``, the hashes of this call).
        Its file counts as used by this test. A file that cannot be read raises ArtifactError (unless refreshing)."""
        __tracebackhide__ = True
        self.claim(call)
        stored = self._stored(call)
        if stored is None:
            return None, []
        return stored, [what for key, what in _HASHES if stored.get(key) != wanted[key]]

    def claim(self, call: VerdictCall) -> None:
        """Note that this test uses ``call``'s file (FileNameClashError when another test already did)."""
        __tracebackhide__ = True
        claim_file(self.snapshots.owners, call.path, self.nodeid, what="verdict snapshot")
        self.snapshots.used.add(str(call.path))

    def after(self, call: VerdictCall, verdict: Verdict) -> None:
        """Compare ``verdict`` with the stored one, or write it as the flags say (see the module docs)."""
        __tracebackhide__ = True
        record = verdict.record()
        if call.redact is not None:
            record = {key: call.redact(value) if isinstance(value, str) else value for key, value in record.items()}
        fresh = {"format_version": VERDICT_FORMAT, "verdict": record}
        text = dump_yaml(fresh)
        stored = self._stored(call) if call.path.is_file() else None
        if stored is not None and {"format_version": VERDICT_FORMAT, "verdict": stored} == fresh:
            return
        if stored is None:  # left in the old default folder: moved by the user, never written again beside it
            from .._snapshots.old_folder import old_snapshot_message

            moved = old_snapshot_message(call.path, call.label)
            if moved is not None:
                raise AssertionError(moved)
        if call.defer:
            self.pending.append((call.path, text))
            return
        if stored is None and (self.snapshots.create or self.snapshots.update):
            self._write(call.path, text)
            return
        if stored is None:
            raise AssertionError(f"Verdict '{call.label}' has no snapshot: {display_path(call.path)}\n"
                                 f"{update_hint(self.nodeid, missing=True)}")
        if self.snapshots.update:
            self._write(call.path, text)
            return
        report = diff_report(stored, fresh["verdict"])
        body = "\n".join(f"  {line}" for line in report.lines)
        raise AssertionError(
            f"Verdict '{call.label}' does not match {display_path(call.path)} ({report.places}, stored -> now):\n"
            f"{body}\n{update_hint(self.nodeid)}"
        )

    def flush(self, passed: bool) -> None:
        """At the end of the test: write the verdicts a recording refreshed, only if the test passed."""
        pending, self.pending = self.pending, []
        if passed:
            for path, text in pending:
                self._write(path, text)

    def _write(self, path: Path, text: str) -> None:
        existed = path.is_file()
        write_text_atomic(path, text, durable=True)
        (self.snapshots.updated if existed else self.snapshots.created).add(str(path))

    def _stored(self, call: VerdictCall) -> dict[str, Any] | None:
        """The stored verdict, ``None`` when there is none; a file we cannot use raises ArtifactError."""
        __tracebackhide__ = True
        path = call.path
        if not path.exists():
            return None
        hint = (f"run {call.refresh_command} to write it again (then review the diff), or restore it from "
                "version control.")
        try:
            data = read_yaml_file(path)
        except DataReadError as exc:
            if call.refresh:
                return None
            raise ArtifactError("Verdict snapshot", f"{exc.problem}{exc.at_line}", file=display_path(path),
                                hint=hint) from None
        verdict = data.get("verdict") if isinstance(data, dict) else None
        if isinstance(data, dict) and data.get("format_version") == VERDICT_FORMAT and isinstance(verdict, dict):
            return verdict
        if call.refresh:
            return None
        version = data.get("format_version") if isinstance(data, dict) else None
        raise ArtifactError("Verdict snapshot", f"it is no verdict of format_version {VERDICT_FORMAT} "
                            f"(format_version {version!r})", file=display_path(path), hint=hint)


def _stale_message(call: VerdictCall, stored: dict[str, Any], changed: list[str]) -> str:
    details = []
    if "judged text" in changed:
        details.append(f"  judged then: {stored.get('judged')!r} ({stored.get('judged_from')})")
    if "rubric" in changed:
        details.append(f"  rubric then: {stored.get('rubric')!r}")
    if "model" in changed:
        details.append(f"  model then: {stored.get('model')}")
    details.append(f"  verdict then: score {stored.get('score')}, reason {stored.get('reason')!r}")
    return render_message(
        f"Verdict '{call.label}' is stale: the {' and the '.join(changed)} changed since it was recorded, so "
        "the recorded verdict says nothing about what is judged now. It is not re-judged silently.",
        [("verdict snapshot", display_path(call.path))], details=details,
        hint=f"ask the judge again and record its answer, then review and commit the files:\n"
             f"  {call.refresh_command}",
    )
