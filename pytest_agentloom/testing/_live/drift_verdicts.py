"""The ``judge`` output comparison's verdicts kept as verdict snapshots, so the replayed output is not re-judged.

The replayed side of a drift check is the committed recording, so its output is the
same from check to check, and so is what a judge would say of it: asking again costs
a call and may answer otherwise. Its verdict is kept like an ``agentloom.judge()``
verdict, in the same file format and by the same key (model, SHA-256 of the rubric
and of the judged text; :mod:`.._judge.verdicts` reads and writes it), beside the
test's committed snapshots: ``<test>.drift-verdict.<step>.yaml`` (``.<step>.run<N>``
for the test's N-th run).

- **Replayed side.** A kept verdict that matches answers for the replayed output:
  no call, and the line says ``(snapshot)``; its score is read against the
  method's threshold of today. One recorded for another rubric, model or text
  (*stale*), or a file that cannot be read, is never used: the judge is asked, as
  with none, and the line says so and how to refresh it. Written as the snapshot
  flags say, as a plain replay writes its snapshots (the replayed side is one):
  ``--agentloom-create-snapshots`` a missing verdict, ``--agentloom-update-snapshots``
  a stale or unreadable one too; only when the replayed run passed.
- **Live side.** The live output's verdict is always written into the scratch folder
  (``DIR/snapshots/<the same path>``), so that ``agentloom drift --adopt`` brings the
  adopted recording's verdict with it, and the next check need not judge it.

A plain run never reads these files, so it never reports them as unused (see
:data:`.._snapshots.compare.DRIFT_VERDICT`). Texts written are the facts' (redacted),
with API keys scrubbed once more.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from ..._redaction.api_keys import redact_api_keys
from ...errors import AgentloomError
from .._judge.verdict import verdict_key
from .._judge.verdicts import VerdictBook, VerdictCall
from .._snapshots.compare import DRIFT_VERDICT

if TYPE_CHECKING:
    from .._judge.verdict import Verdict
    from .._settings.drift_outputs import OutputMethod
    from .._snapshots.per_test import TestSnapshots

__all__ = ["DriftVerdicts", "verdict_name"]

_REFRESH = "--agentloom-update-snapshots rewrites it"
#: where a kept verdict came from, as the measured data says it (see :mod:`.output_compare`)
SNAPSHOT = "snapshot"


def verdict_name(step: str, run: int) -> str:
    """The snapshot name of the verdict of ``step`` in the test's ``run``-th run (``drift-verdict.<step>``...)."""
    return f"{DRIFT_VERDICT}.{step}" + (f".run{run}" if run > 1 else "")


class DriftVerdicts:
    """The kept verdicts of one compared test: ``replayed`` (its committed snapshots, read, and written under the
    snapshot flags when ``replay_passed``) and ``live`` (its snapshots in the scratch folder, always written)."""

    def __init__(self, nodeid: str, replayed: TestSnapshots | None, live: TestSnapshots | None, *,
                 replay_passed: bool) -> None:
        self.nodeid = nodeid
        self._replayed = replayed
        self._live = live
        self._replay_passed = replay_passed
        self._refresh = f"agentloom drift -- --agentloom-update-snapshots {shlex.quote(nodeid)}"

    def stored(self, step: str, run: int, method: OutputMethod, text: str) -> tuple[dict[str, Any] | None, str]:
        """The replayed output's kept verdict (``score``, ``passed`` by today's threshold, ``reason``, ``source``),
        or ``None`` and why none was used (``""`` when none is kept)."""
        if self._replayed is None:
            return None, ""
        book, call = self._call(self._replayed, step, run, refresh=False)
        try:
            stored, changed = book.look_up(call, verdict_key(method.model, method.rubric, text))
        except (AgentloomError, OSError):  # ArtifactError: a file that is no verdict snapshot; a clash
            return None, f"asked; unreadable snapshot ignored; {_REFRESH}"
        if stored is None:
            return None, ""
        score, reason = stored.get("score"), stored.get("reason")
        if not isinstance(score, (int, float)) or isinstance(score, bool) or not isinstance(reason, str):
            return None, f"asked; unreadable snapshot ignored; {_REFRESH}"
        if changed:
            return None, f"asked; stale snapshot ignored: the {' and the '.join(changed)} changed; {_REFRESH}"
        return {"score": float(score), "passed": float(score) >= method.threshold, "reason": reason,
                "source": SNAPSHOT}, ""

    def keep(self, side: str, step: str, run: int, verdict: Verdict, note: str) -> str:
        """Keep the verdict the judge gave on ``side`` (``old``: replayed, ``new``: live) as the module docs say;
        the note for the drift line (``note`` is :meth:`stored`'s)."""
        if side == "new":
            if self._live is not None:
                self._write(self._live, step, run, verdict)  # the scratch folder: a failure here costs nothing kept
            return note
        snapshots = self._replayed
        if snapshots is None or not self._replay_passed:
            return note
        flags, exists = snapshots.session, snapshots.path(verdict_name(step, run)).exists()
        if not (flags.update or (flags.create and not exists)):
            return note
        problem = self._write(snapshots, step, run, verdict)
        if problem:
            return f"asked; snapshot not written: {problem}"
        return "asked; stale snapshot rewritten" if note else "asked; snapshot written"

    def _write(self, snapshots: TestSnapshots, step: str, run: int, verdict: Verdict) -> str:
        """Write ``verdict`` (atomically); the problem's first line when it could not be."""
        book, call = self._call(snapshots, step, run, refresh=True)
        try:
            book.claim(call)
            book.after(call, verdict)
        except (AgentloomError, AssertionError, OSError) as exc:  # AssertionError: the file is in the old folder
            return redact_api_keys(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)[:200]
        return ""

    def _call(self, snapshots: TestSnapshots, step: str, run: int, *, refresh: bool) -> tuple[VerdictBook, VerdictCall]:
        call = VerdictCall(path=snapshots.path(verdict_name(step, run)), label=f"drift judge of step {step}",
                           refresh=refresh, defer=False, refresh_command=self._refresh, redact=redact_api_keys)
        return VerdictBook(snapshots.session, self.nodeid), call

