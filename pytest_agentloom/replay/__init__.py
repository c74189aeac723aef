"""Record and replay of real providers through cassettes (vcrpy underneath).

Importing this package is cheap: vcrpy, deepdiff and the SDKs are imported
only when a cassette is opened, a mismatch is explained, or a provider called.

- :class:`CassetteSession`, :class:`CassetteConfig`: one test's cassette.
- :class:`ReplayProvider`: a provider whose calls go through a cassette.
- :class:`RecordMode`, :func:`parse_record_mode`: ``none``/``once``/``new_episodes``/``all``.
- :class:`ToolTape`: recorded results of tools with side effects, replayed beside the cassette.
- :mod:`.matchers`, :mod:`.scrub`, :mod:`.serializer`, :mod:`.provenance`: the parts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:
    from ..errors import (
        CassetteFormatError,
        CassetteMismatchError,
        CassetteNotFoundError,
        RecordingRefusedError,
        ReplayError,
        RequestNotInterceptedError,
        ToolReplayMissError,
        UnusedInteractionsError,
    )
    from .cassette import CallInfo, CassetteConfig, CassetteSession, ReplayProvider, current_call
    from .modes import RecordMode, parse_record_mode
    from .provenance import Provenance, workflow_hash
    from .tool_tape import ToolTape, tape_path

__all__ = [
    "CallInfo",
    "CassetteConfig",
    "CassetteFormatError",
    "CassetteMismatchError",
    "CassetteNotFoundError",
    "CassetteSession",
    "Provenance",
    "RecordMode",
    "RecordingRefusedError",
    "ReplayError",
    "ReplayProvider",
    "RequestNotInterceptedError",
    "ToolReplayMissError",
    "ToolTape",
    "UnusedInteractionsError",
    "current_call",
    "parse_record_mode",
    "tape_path",
    "workflow_hash",
]

_EXPORTS = {
    "CallInfo": ".cassette",
    "CassetteConfig": ".cassette",
    "CassetteSession": ".cassette",
    "ReplayProvider": ".cassette",
    "current_call": ".cassette",
    "CassetteFormatError": "..errors",
    "CassetteMismatchError": "..errors",
    "CassetteNotFoundError": "..errors",
    "RecordingRefusedError": "..errors",
    "ReplayError": "..errors",
    "RequestNotInterceptedError": "..errors",
    "ToolReplayMissError": "..errors",
    "UnusedInteractionsError": "..errors",
    "RecordMode": ".modes",
    "parse_record_mode": ".modes",
    "Provenance": ".provenance",
    "workflow_hash": ".provenance",
    "ToolTape": ".tool_tape",
    "tape_path": ".tool_tape",
}
__getattr__, __dir__ = attach(__name__, _EXPORTS)
