"""Recorded requests looked up by what the built-in matchers compare, instead of one scan per request.

vcrpy finds a recording by running every matcher against every recorded
request, and it does so three times per replayed request (``in``, then
``play_response``): a replay of N calls costs O(N²) matcher calls, and a
1,000-interaction cassette spends more time matching than replaying.

:class:`RequestIndex` buckets the recorded requests by a *key* per built-in
matcher of ``match_on`` (:func:`~._matchers.index_key`): the upper-cased method;
the path and sorted query pairs; the canonical JSON of the body (or its raw
bytes when it is not JSON). Two requests have the same key exactly when the
built-in matcher passes, so a bucket holds exactly the recordings those
matchers accept, in recorded order. The other matchers of ``match_on`` (your
own functions) run on the bucket's members only, in order, as vcrpy would run
them: the recordings yielded are the same, in the same order, as the scan's.
The one difference a user can see: a custom matcher with side effects (one that
counts its calls) is not called for recordings the built-in ones already refuse.

The index follows ``data`` as vcrpy appends to it; anything that inserts in the
middle of ``data`` (a request recorded with no response) calls
:meth:`RequestIndex.invalidate`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from ._matchers import index_key

__all__ = ["RequestIndex"]

Matcher = Callable[[Any, Any], Any]


class RequestIndex:
    """Positions of recorded requests by key; see the module docs."""

    def __init__(self, matchers: Sequence[Matcher]) -> None:
        keyers = [(matcher, index_key(matcher)) for matcher in matchers]
        self._keyers = [keyer for _, keyer in keyers if keyer is not None]
        self._others = [matcher for matcher, keyer in keyers if keyer is None]
        self._buckets: dict[tuple[Hashable, ...], list[int]] = {}
        self._count = 0

    def key(self, request: Any) -> tuple[Hashable, ...]:
        return tuple(keyer(request) for keyer in self._keyers)

    def invalidate(self) -> None:
        """Forget everything: ``data`` changed other than by appending."""
        self._buckets.clear()
        self._count = 0

    def follow(self, data: Sequence[tuple[Any, Any]]) -> None:
        """Index what vcrpy appended to ``data`` since the last call."""
        if len(data) < self._count:
            self.invalidate()
        for position in range(self._count, len(data)):
            self._buckets.setdefault(self.key(data[position][0]), []).append(position)
        self._count = len(data)

    def matches(self, request: Any, data: Sequence[tuple[Any, Any]]) -> Iterator[int]:
        """Positions in ``data`` of the recordings every matcher accepts for ``request``, in recorded order."""
        self.follow(data)
        for position in self._buckets.get(self.key(request), ()):
            if all(_passes(matcher, request, data[position][0]) for matcher in self._others):
                yield position


def _passes(matcher: Matcher, request: Any, recorded: Any) -> bool:
    """vcrpy's reading of a matcher's answer: ``AssertionError`` or a false return is a miss."""
    try:
        answer = matcher(request, recorded)
    except AssertionError:
        return False
    return answer is None or bool(answer)
