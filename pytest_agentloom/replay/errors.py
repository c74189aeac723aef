"""The errors of record and replay, with messages a reader can act on without a debugger.

::

    AgentloomError
    └── ReplayError                    a cassette could not be used (path, mode)
        ├── CassetteNotFoundError      replay asked for a cassette that does not exist
        ├── CassetteFormatError        a cassette file is unreadable or from an unknown format
        ├── RecordingRefusedError      recording asked for under CI=true, but not explicitly
        ├── UnusedInteractionsError    the replay left recorded interactions unused
        └── CassetteMismatchError      a request is not in the cassette (also a StepError:
                                       it fails its step and is never retried)

Every message has the house shape: a headline, context lines, then ``How to fix:``.
Each class has a ``code``; :class:`CassetteMismatchError` also has a ``reason``
(``no_match``, ``already_played``, ``empty_cassette``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import AgentloomError, StepError

__all__ = [
    "CassetteFormatError",
    "CassetteMismatchError",
    "CassetteNotFoundError",
    "RecordingRefusedError",
    "ReplayError",
    "UnusedInteractionsError",
    "render_message",
]


def render_message(headline: str, context: Sequence[tuple[str, object]] = (), hint: str | None = None,
                   details: Sequence[str] = ()) -> str:
    """Headline, ``  name: value`` context lines, indented details, then ``How to fix:``."""
    lines = [headline]
    lines.extend(f"  {name}: {value}" for name, value in context if value is not None and value != "")
    lines.extend(details)
    if hint:
        lines.append(f"How to fix: {hint}")
    return "\n".join(lines)


class ReplayError(AgentloomError):
    """A cassette could not be used as asked; ``path`` is the cassette's file."""

    code = "replay_error"

    def __init__(self, message: str, *, path: str | None = None, headline: str | None = None) -> None:
        self.path = path
        self.headline = headline or message.splitlines()[0]
        super().__init__(message)


class CassetteNotFoundError(ReplayError):
    """Replay (the default) needs a cassette, and the test has none yet."""

    code = "cassette_not_found"


class CassetteFormatError(ReplayError):
    """The cassette file cannot be read: broken YAML, missing keys, or a ``format_version`` we don't know."""

    code = "cassette_format"


class RecordingRefusedError(ReplayError):
    """Recording was asked for under ``CI=true`` without the flag on the command line itself."""

    code = "recording_refused"


class UnusedInteractionsError(ReplayError, AssertionError):
    """The test finished without replaying every interaction of its cassette."""

    code = "unused_interactions"


class CassetteMismatchError(StepError, ReplayError):
    """A request that the cassette has no unused recording for. Fails the step; never retried."""

    code = "cassette_mismatch"

    def __init__(self, message: str, *, reason: str, path: str | None = None, step_id: str | None = None,
                 turn: int | None = None) -> None:
        self.reason = reason
        self.step_id = step_id
        self.turn = turn
        self.path = path
        self.headline = message.splitlines()[0]
        StepError.__init__(self, message, code=self.code, retryable=False)
