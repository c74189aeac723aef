"""Record modes: when a cassette may be written and when a request may reach a live provider.

=================  =================================================================
mode               what happens
=================  =================================================================
``none``           replay only (the default): a request that is not in the cassette
                   fails its step, and nothing is ever sent or written
``once``           record when the cassette does not exist yet, else replay only
``new_episodes``   replay what the cassette has, record what it lacks (appended)
``all``            re-record: the cassette is rewritten from live calls only
=================  =================================================================

``--agentloom-record`` is a short name for ``all``.
"""

from __future__ import annotations

from enum import Enum

from ..errors import UsageError, render_message

__all__ = ["RecordMode", "parse_record_mode"]


class RecordMode(str, Enum):  # noqa: UP042 - a str mixin, like vcrpy's own enum
    """When a cassette is replayed, extended or rewritten; values are vcrpy's mode names."""

    NONE = "none"
    ONCE = "once"
    NEW_EPISODES = "new_episodes"
    ALL = "all"

    @property
    def records(self) -> bool:
        """Whether this mode may call a live provider at all."""
        return self is not RecordMode.NONE

    def __str__(self) -> str:
        return self.value


def parse_record_mode(value: str | RecordMode, *, source: str = "record mode") -> RecordMode:
    """``value`` as a :class:`RecordMode`; anything else raises a :class:`UsageError` listing the valid ones."""
    if isinstance(value, RecordMode):
        return value
    text = str(value).strip().lower().replace("-", "_")
    try:
        return RecordMode(text)
    except ValueError:
        valid = ", ".join(mode.value for mode in RecordMode)
        raise UsageError(
            render_message(
                f"{source} must be one of {valid} (got {value!r}).",
                hint="use --agentloom-record-mode=none to replay only, or --agentloom-record to re-record.")
        ) from None
