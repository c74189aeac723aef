"""Record and replay of real providers through cassettes (vcrpy underneath).

Importing this package is cheap: vcrpy, deepdiff and the SDKs are imported
only when a cassette is opened, a mismatch is explained, or a provider called.

- :class:`CassetteSession`, :class:`CassetteConfig`: one test's cassette.
- :class:`ReplayProvider`: a provider whose calls go through a cassette.
- :class:`RecordMode`, :func:`parse_record_mode`: ``none``/``once``/``new_episodes``/``all``.
- :class:`ToolTape`: recorded results of tools with side effects, replayed beside the cassette.

The modules behind these names are internal: matching (``_matchers``, ``_match_index``), the cassette file
(``_cassette_file``), provenance and patching; what is redacted before a write is in
``pytest_agentloom._redaction.http_traffic``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

#: The one list of this package's public names, by the module each is defined in (imported on first use).
#: ``__all__`` and the names a type checker sees (below) come from it; tests/test_public_api.py checks both.
_EXPORTS = {
    "._cassette": ("CallInfo", "CassetteConfig", "CassetteSession", "ReplayProvider", "current_call"),
    "._modes": ("RecordMode", "parse_record_mode"),
    "._provenance": ("Provenance", "workflow_hash"),
    "._tool_tape": ("ToolTape", "tape_path"),
    "..errors": (
        "CassetteExpiredError", "CassetteFormatError", "CassetteMismatchError", "CassetteNotFoundError",
        "RecordingRefusedError",
        "ReplayError", "RequestNotInterceptedError", "ToolReplayMissError", "UnrecordableResponseError",
        "UnusedInteractionsError",
    ),
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:
    from ..errors import CassetteExpiredError as CassetteExpiredError
    from ..errors import CassetteFormatError as CassetteFormatError
    from ..errors import CassetteMismatchError as CassetteMismatchError
    from ..errors import CassetteNotFoundError as CassetteNotFoundError
    from ..errors import RecordingRefusedError as RecordingRefusedError
    from ..errors import ReplayError as ReplayError
    from ..errors import RequestNotInterceptedError as RequestNotInterceptedError
    from ..errors import ToolReplayMissError as ToolReplayMissError
    from ..errors import UnrecordableResponseError as UnrecordableResponseError
    from ..errors import UnusedInteractionsError as UnusedInteractionsError
    from ._cassette import CallInfo as CallInfo
    from ._cassette import CassetteConfig as CassetteConfig
    from ._cassette import CassetteSession as CassetteSession
    from ._cassette import ReplayProvider as ReplayProvider
    from ._cassette import current_call as current_call
    from ._modes import RecordMode as RecordMode
    from ._modes import parse_record_mode as parse_record_mode
    from ._provenance import Provenance as Provenance
    from ._provenance import workflow_hash as workflow_hash
    from ._tool_tape import ToolTape as ToolTape
    from ._tool_tape import tape_path as tape_path
