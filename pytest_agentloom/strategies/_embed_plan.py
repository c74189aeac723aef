"""What a generated script answers an ``embed`` step: vectors that fit, vectors that don't, provider errors.

How many texts an embed step sends depends on the state at run time, so its right answer can't be written
as data ahead of the run: it is :class:`OneVectorPerText`, a reply made from the request (one vector per
text, of the step's ``dimensions``). It is only ever the step's ``then`` (left out of a printed script);
the drawn ``replies`` are plain data: errors and vectors of the wrong number or size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from .._core.types import EmbedRequest
from ..engine._format.model import EmbedStep
from ..providers import embedding

__all__ = ["EmbedPlan", "OneVectorPerText"]


@dataclass(frozen=True)
class OneVectorPerText:
    """An embed step's right answer: one vector of ``dimensions`` numbers for each text the request sends."""

    dimensions: int = 2

    def __call__(self, request: EmbedRequest) -> Any:
        return embedding([[0.0] * self.dimensions for _ in request.texts])


class EmbedPlan:
    """The replies of one ``embed`` step (the interface of the model steps' plan: ``right``, ``reply``, ``tail``)."""

    def __init__(self, step: EmbedStep) -> None:
        self.right = OneVectorPerText(step.dimensions or 2)

    def reply(self) -> st.SearchStrategy[Any]:
        """A provider error (retried or not), no vectors, one vector (wrong unless one text was sent), or one of
        the wrong size."""
        size = self.right.dimensions
        return st.one_of(st.builds(lambda status: {"error": status}, st.sampled_from([429, 500, None, 400])),
                         st.sampled_from([{"embedding": []}, {"embedding": [[0.0] * size]},
                                          {"embedding": [[0.0] * (size + 1)]}]))

    def tail(self) -> st.SearchStrategy[Any]:
        """Every request after the replies: the right vectors (the simplest), errors forever, or no vectors."""
        return st.one_of(st.just(self.right), st.builds(lambda status: {"error": status}, st.sampled_from([429, 500])),
                         st.just({"embedding": []}))
