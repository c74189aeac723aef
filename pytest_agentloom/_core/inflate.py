"""Decompressing an HTTP body piece by piece, stopped at a limit: a small body cannot become gigabytes.

A ``content-encoding: gzip`` body of a few kilobytes may inflate to gigabytes. Whoever decompresses one
that came from outside (a cassette in a pull request, a live response being recorded) inflates it here,
a MiB at a time, and stops one byte past the limit, so the most memory held is the limit plus a piece.
"""

from __future__ import annotations

import zlib
from typing import Any

__all__ = ["MAX_BODY_BYTES", "inflate"]

MAX_BODY_BYTES = 32 * 1024 * 1024
"""Largest response body recorded or replayed, once decompressed (a chat reply is kilobytes; a big embedding
batch a few MB)."""

_PIECE = 1 << 20  # bytes inflated per step: the most held beyond the limit
_BROTLI_INPUT = 1 << 10  # brotli's decompressor has no output bound: it is fed this many bytes at a time


def inflate(data: bytes | bytearray, encoding: str, limit: int) -> bytearray | None:
    """``data`` decompressed as ``encoding`` says, stopped one byte past ``limit`` (check ``len > limit``).

    ``None`` for an encoding this does not know (the body is not compressed by it); ``zlib.error`` (or
    brotli's error) for data that is not of its encoding; ``ImportError`` for ``br`` without the ``brotli``
    package.
    """
    if encoding in ("gzip", "x-gzip"):
        return _zlib(data, zlib.MAX_WBITS | 16, limit)
    if encoding == "deflate":  # as the HTTP clients read it: a zlib stream, else raw deflate
        try:
            return _zlib(data, zlib.MAX_WBITS, limit)
        except zlib.error:
            return _zlib(data, -zlib.MAX_WBITS, limit)
    if encoding == "br":
        return _brotli(data, limit)
    return None


def _zlib(data: bytes | bytearray, wbits: int, limit: int) -> bytearray:
    """Inflate ``data`` a MiB at a time, stopping one byte past ``limit``: a bomb gets no further."""
    inflater = zlib.decompressobj(wbits)
    out = bytearray()
    pending = data
    while True:  # zlib.error (not its encoding's data) goes to the caller
        room = min(_PIECE, limit + 1 - len(out))
        piece = inflater.decompress(pending, room)
        out += piece
        if len(out) > limit or inflater.eof:
            return out
        pending = inflater.unconsumed_tail
        if not pending and len(piece) < room:
            return out  # all input read and no output held back: a stream cut short, as clients allow


def _brotli(data: bytes | bytearray, limit: int) -> bytearray:
    """Brotli, fed a KiB of input at a time (its decompressor cannot be told to stop at an output size)."""
    try:
        import brotli  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise ImportError("decoding br needs the brotli package, which is not installed") from None
    decompressor: Any = brotli.Decompressor()
    out = bytearray()
    for start in range(0, len(data), _BROTLI_INPUT):
        out += decompressor.process(bytes(data[start:start + _BROTLI_INPUT]))
        if len(out) > limit:
            return out
    return out
