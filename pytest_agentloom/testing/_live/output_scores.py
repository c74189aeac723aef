"""The model calls behind the ``embedding`` and ``judge`` output comparisons, asked while the test runs.

The other methods compare two texts by arithmetic, at the end of the session, from
plain facts. These two need a model: ``embedding`` asks for the vectors of both
outputs (one ``embed`` request of two texts, step id ``embedding_check``, as
``agentloom.assert_embedding_close`` sends it), ``judge`` asks the judge
(:mod:`.._judge.judge`, step id ``judge``) for a verdict on each output. They are
asked of the new side's provider (in a drift check, once the test's live call is
over: through the live gateway, recorded into ``DIR/comparisons/...``, a cassette
of their own that adopting a live recording leaves out; or the run's own
provider, e.g. a ``Scripted`` one answering ``embedding_check=``/``judge=``
replies; in a fork, ``then``). In a drift check, the replayed output's verdict comes from its verdict
snapshot when one matches, and is not asked (:mod:`.drift_verdicts`). The answers are kept in the new side's facts
as plain data
(``scores``: step -> what was measured), which travel to the xdist controller
with the rest; :mod:`.output_compare` reads them. A call that fails is kept as
its error, and the output then counts as a regression: a comparison that could
not be made proves nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..._core.clock import VirtualClock, derived_run_id
from ..._redaction.api_keys import redact_api_keys
from ...errors import AgentloomError
from .._settings.drift_outputs import ASKING_METHODS, OutputMethod, OutputMethods

if TYPE_CHECKING:
    from ..._core.types import Provider
    from .drift_verdicts import DriftVerdicts

__all__ = ["ask_scores"]


def ask_scores(methods: OutputMethods, old: Mapping[str, Any], new: dict[str, Any], provider: Provider | None,
               *, provider_name: str | None, run_id: str, kept: DriftVerdicts | None = None, run: int = 1) -> None:
    """Put in ``new["scores"]`` what the model says of each step whose method asks one and whose outputs differ
    (``old`` and ``new`` are the facts of two runs, :mod:`.trace_facts`); ``run_id`` numbers the calls' runs.
    ``kept``: the test's verdict snapshots (a drift check's; ``run`` is the test's run they are of)."""
    before, after = old.get("outputs", {}), new.get("outputs", {})
    for step in sorted(set(before) & set(after)):
        method = methods.for_step(step)
        if method.kind not in ASKING_METHODS or before[step] == after[step]:
            continue
        ids = (run_id, "drift", step)
        try:
            if provider is None:
                raise ValueError("no provider answers it (the run had none)")
            if method.kind == "embedding":
                measured = _distance(method, before[step], after[step], provider, provider_name, ids)
            else:
                measured = _verdicts(method, before[step], after[step], provider, provider_name, ids, kept, run)
        except (AgentloomError, ValueError) as exc:
            measured = {"error": redact_api_keys(" ".join(line.strip() for line in str(exc).splitlines()))[:300]}
        new.setdefault("scores", {})[step] = {"method": str(method), **measured}


def _distance(method: OutputMethod, old: str, new: str, provider: Provider, provider_name: str | None,
              ids: tuple[str, ...]) -> dict[str, Any]:
    from .._judge.embedding import distance_from_run, embedding_workflow

    workflow = embedding_workflow(method.model, provider_name)
    result = _run(workflow, {"texts": [old, new]}, provider, derived_run_id(*ids, "embedding"))
    return {"distance": round(distance_from_run(result, method.model), 6)}


def _verdicts(method: OutputMethod, old: str, new: str, provider: Provider, provider_name: str | None,
              ids: tuple[str, ...], kept: DriftVerdicts | None, run: int) -> dict[str, Any]:
    """The judge's verdict on each side's output, by the same rubric, model and threshold; the replayed one from
    its verdict snapshot when ``kept`` holds a matching one (then only the live output is judged)."""
    from .._judge.judge import judge_workflow, verdict_from_run

    workflow, step = judge_workflow(method.model, provider_name), ids[-1]
    sides: dict[str, Any] = {}
    for side, text in (("old", old), ("new", new)):
        stored, note = kept.stored(step, run, method, text) if kept is not None and side == "old" else (None, "")
        if stored is not None:
            sides[side] = stored
            continue
        result = _run(workflow, {"rubric": method.rubric, "text": text}, provider, derived_run_id(*ids, side))
        verdict = verdict_from_run(result, label=f"of the drift check ({side} output of step {step})",
                                   model=method.model, rubric=method.rubric, text=text, judged_from=f"step {step}",
                                   threshold=method.threshold, record_command=None)
        if kept is not None:
            note = kept.keep(side, step, run, verdict, note)
        sides[side] = {"score": verdict.score, "passed": verdict.passed, "reason": redact_api_keys(verdict.reason),
                       **({"note": note} if note else {})}
    return sides


def _run(workflow: Any, state: dict[str, Any], provider: Provider, run_id: str) -> Any:
    from ...engine._entry.run_workflow import run_workflow

    return run_workflow(workflow, state=state, provider=provider, clock=VirtualClock(), run_id=run_id, runs_dir=False)
