"""The xdist transport: the one mapping each worker sends the controller, built from and merged into the
session's features (each puts its own entries in it: see :meth:`~._feature.Feature.to_wire`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from ._feature import Feature, overrides

__all__ = ["WIRE_KEY", "Transport"]

#: the key of the session's mapping in a worker's ``workeroutput``
WIRE_KEY = "agentloom_snapshots"


class Transport:
    """Worker to controller: what each feature sends, and what it makes of each worker's mapping."""

    def __init__(self, features: Sequence[Feature]) -> None:
        self._senders = [feature for feature in features if overrides(feature, "to_wire")]
        self._mergers = [feature for feature in features if overrides(feature, "merge")]

    def send(self, config: pytest.Config, session: pytest.Session | None) -> None:
        """On a worker, at the end of its session: put every feature's data into ``workeroutput``."""
        config.workeroutput[WIRE_KEY] = self.to_wire(session)  # type: ignore[attr-defined]

    def to_wire(self, session: pytest.Session | None = None) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for feature in self._senders:
            data.update(feature.to_wire(session))
        return data

    def receive(self, node: Any, error: Any) -> None:
        """On the controller, when a worker finished (``pytest_testnodedown``): merge what it sent.

        A worker that died sent nothing: what it used is unknown, so it counts as a run that was narrowed.
        """
        data = getattr(node, "workeroutput", None) or {}
        sent: dict[str, Any] | None = data.get(WIRE_KEY)
        died = error is not None or sent is None
        self.merge({**(sent or {}), "narrowed": True} if died else dict(sent or {}), died=died)

    def merge(self, data: dict[str, Any], *, died: bool = False) -> None:
        for feature in self._mergers:
            feature.merge(data, died=died)
