"""Record and replay of real providers through cassettes (vcrpy underneath).

Importing this package is cheap: vcrpy, deepdiff and the SDKs are imported
only when a cassette is opened, a mismatch is explained, or a provider called.

- :class:`CassetteSession`, :class:`CassetteConfig`: one test's cassette.
- :class:`ReplayProvider`: a provider whose calls go through a cassette.
- :class:`RecordMode`, :func:`parse_record_mode`: ``none``/``once``/``new_episodes``/``all``.
- :class:`ToolTape`: recorded results of tools with side effects, replayed beside the cassette.
- :mod:`._matchers`, :mod:`.._redaction.http_traffic`, :mod:`._cassette_file`, :mod:`._provenance`: the parts.
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
    from ._cassette import CallInfo, CassetteConfig, CassetteSession, ReplayProvider, current_call
    from ._modes import RecordMode, parse_record_mode
    from ._provenance import Provenance, workflow_hash
    from ._tool_tape import ToolTape, tape_path

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
    "CallInfo": "._cassette",
    "CassetteConfig": "._cassette",
    "CassetteSession": "._cassette",
    "ReplayProvider": "._cassette",
    "current_call": "._cassette",
    "CassetteFormatError": "..errors",
    "CassetteMismatchError": "..errors",
    "CassetteNotFoundError": "..errors",
    "RecordingRefusedError": "..errors",
    "ReplayError": "..errors",
    "RequestNotInterceptedError": "..errors",
    "ToolReplayMissError": "..errors",
    "UnusedInteractionsError": "..errors",
    "RecordMode": "._modes",
    "parse_record_mode": "._modes",
    "Provenance": "._provenance",
    "workflow_hash": "._provenance",
    "ToolTape": "._tool_tape",
    "tape_path": "._tool_tape",
}
__getattr__, __dir__ = attach(__name__, _EXPORTS)
