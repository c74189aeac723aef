"""One "did you mean" for every name a user can mistype: keys, steps, tools, options."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .state_paths import MISSING, Segment, format_path, get_path

__all__ = ["closest_path", "did_you_mean"]


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """``"did you mean 'x'?"`` for the closest of ``choices``, or ``None`` when nothing is close."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


def closest_path(segments: Sequence[Segment], root: Any) -> str | None:
    """The path in ``root`` closest to ``segments`` (``email.sendr`` -> ``email.sender``), or ``None``.

    Walked part by part: a part the value holds is kept, a mistyped one is replaced by the closest key
    the mapping there has, so a typo at any depth is named as the whole path the user meant.
    """
    current, changed = root, False
    chosen: list[Segment] = []
    for seg in segments:
        value = get_path(current, (seg,)) if isinstance(current, Mapping | list) else MISSING
        if value is MISSING:
            if not isinstance(current, Mapping) or not isinstance(seg, str):
                return format_path(chosen) if changed and chosen else None
            close = difflib.get_close_matches(seg, [key for key in current if isinstance(key, str)], n=1,
                                              cutoff=0.6)
            if not close:
                return format_path(chosen) if changed and chosen else None
            seg, value, changed = close[0], current[close[0]], True
        chosen.append(seg)
        current = value
    return format_path(chosen) if changed else None
