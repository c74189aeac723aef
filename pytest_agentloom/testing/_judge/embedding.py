"""Embedding distance: the one-step ``embed`` workflow that asks a model for two texts' vectors, and the
cosine distance of the answer.

Shared by ``agentloom.assert_embedding_close`` (:mod:`.._output_checks`) and the drift check's ``embedding``
output comparison (:mod:`.._live.output_scores`): the request is an ``embed`` step's (step id
``embedding_check``), so it is scripted (``Scripted(embedding_check=embedding([...]))``), recorded and replayed
like any model call, and the same recording gives the same distance.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ...errors import UsageError, render_message

if TYPE_CHECKING:
    from ...engine._format.model import Workflow
    from ...engine._outcome.result import WorkflowResult

__all__ = ["EMBEDDING_STEP", "cosine_distance", "distance_from_run", "embedding_workflow"]

#: The step id of an embedding check's call: a ``Scripted`` provider answers it from ``embedding_check=...``.
EMBEDDING_STEP = "embedding_check"


def embedding_workflow(model: str, provider_name: str | None = None) -> Workflow:
    """The one-step ``embed`` workflow of an embedding check (the two texts go in its state)."""
    __tracebackhide__ = True
    from ...engine._format.loader import parse_data

    if not isinstance(model, str) or not model.strip():
        raise UsageError(render_message(
                f"agentloom.embedding_distance() needs model=: an embedding model's name, got {model!r}.",
                hint="e.g. model='text-embedding-3-small'."))
    config: dict[str, Any] = {"retry": {"max_retries": 0}}
    if provider_name:
        config["provider"] = provider_name
    step = {"id": EMBEDDING_STEP, "type": "embed", "model": model, "inputs": "texts", "output": "vectors"}
    data = {"name": "agentloom-embedding-check", "state": {"texts": []}, "config": config, "steps": [step]}
    return parse_data(data, file="<agentloom.embedding_distance>")


def distance_from_run(result: WorkflowResult, model: str) -> float:
    """The cosine distance of the two vectors an embedding check's run got; its step's error when it failed."""
    __tracebackhide__ = True
    from ...errors import ErrorCode, JudgeError

    step = result.steps.get(EMBEDDING_STEP)
    vectors = step.output if step is not None and step.status.value == "success" else None
    if isinstance(vectors, list) and len(vectors) == 2:
        return cosine_distance(vectors[0], vectors[1])
    problem = (step.error if step is not None else None) or f"the run ended {result.status.value}"
    raise JudgeError(render_message(f"Embedding check with model {model} got no vectors: its model call failed.",
                                    details=[f"  {line}" for line in problem.splitlines()]),
                     code=ErrorCode.JUDGE_FAILED)


def cosine_distance(left: list[float], right: list[float]) -> float:
    """``1 - cos(angle)``: 0 for vectors in the same direction, 1 for orthogonal ones, 2 for opposite ones."""
    __tracebackhide__ = True
    if len(left) != len(right):
        raise UsageError(render_message(f"Cannot compare embeddings of {len(left)} and {len(right)} numbers.",
                                        hint="embed both texts with the same model."))
    norms = math.sqrt(sum(x * x for x in left)) * math.sqrt(sum(y * y for y in right))
    if norms == 0:
        raise UsageError(render_message(
                "Cannot compare an embedding of only zeros: it has no direction.",
                hint="check the embedding model's answer (a scripted embedding needs a non-zero "
                     "vector)."))
    return 1.0 - sum(x * y for x, y in zip(left, right, strict=True)) / norms
