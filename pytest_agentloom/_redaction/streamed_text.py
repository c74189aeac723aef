"""Scrubbing text that is printed as it arrives (``agentloom run --stream``).

A secret in a streamed reply arrives in pieces, so no single piece can be
checked alone. :class:`StreamedTextRedactor` keeps back only the end of what it
was given when that end could be the start of a secret, and lets everything
before it through at once: text that cannot begin a secret is never delayed.
"""

from __future__ import annotations

from collections.abc import Iterable

from .api_keys import replace_each

__all__ = ["StreamedTextRedactor"]


class StreamedTextRedactor:
    """Replaces each ``(secret, replacement)`` in a text given piece by piece (:meth:`feed`, then :meth:`flush`)."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self._pairs = sorted({(raw, new) for raw, new in pairs if raw}, key=lambda pair: (-len(pair[0]), pair[0]))
        self._held = ""

    def feed(self, piece: str) -> str:
        """The text that can be shown now: secrets replaced, a possible secret's start held back."""
        text = self._replaced(self._held + piece)
        keep = self._possible_start(text)
        self._held = text[len(text) - keep:] if keep else ""
        return text[: len(text) - keep]

    def abandon(self) -> None:
        """The stream broke: what was held back is dropped, never shown (it may be the start of a secret that
        the broken stream did not finish; the retry streams the whole reply again)."""
        self._held = ""

    def flush(self) -> str:
        """What was held back (the stream ended, so it was no secret)."""
        text, self._held = self._held, ""
        return text

    def _replaced(self, text: str) -> str:
        return replace_each(text, self._pairs)

    def _possible_start(self, text: str) -> int:
        """The length of the longest end of ``text`` that begins some secret (0: none)."""
        longest = 0
        for raw, _ in self._pairs:
            for size in range(min(len(raw) - 1, len(text)), longest, -1):
                if text.endswith(raw[:size]):
                    longest = size
                    break
        return longest
