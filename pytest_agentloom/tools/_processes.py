"""Running a command and reading a file for the built-in tools, within limits of bytes and time.

``shell_command`` runs programs the workflow does not control: one may print
forever (``cat /dev/zero``), outlive its timeout, or leave children holding
its pipes. :func:`run_command` therefore reads both pipes as the output comes
(so the child never blocks on a full pipe), keeps at most
:data:`MAX_OUTPUT_BYTES` of each, and stops the command's whole process group
when a limit is hit, then drains and reaps it. The error says which limit hit:
``output_limit`` for bytes, ``timeout`` for time.

``file_read`` reads regular files only (a FIFO would block, ``/dev/zero``
never ends) and never more than it returns.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ErrorCode, ToolError, render_message

__all__ = ["MAX_OUTPUT_BYTES", "read_text_prefix", "run_command"]

MAX_OUTPUT_BYTES = 1_000_000
"""Most bytes kept of a command's stdout (and of its stderr); more stops the command."""

_RETURNED_CHARS = 100_000
_GRACE_SECONDS = 5.0  # after the kill: time for the pipes to close and the process to be reaped
_CHUNK = 65_536


async def run_command(argv: Sequence[str], *, cwd: Path, timeout: float, max_bytes: int = MAX_OUTPUT_BYTES,
                      env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run ``argv`` without a shell; its exit code and (decoded, shortened) output, or a :class:`ToolError`."""
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True,  # its own process group, so all of it can be stopped
    )
    over: list[str] = []

    def full(name: str) -> None:
        over.append(name)
        _kill_group(process)

    assert process.stdout is not None and process.stderr is not None
    readers = asyncio.gather(_read_capped(process.stdout, max_bytes, lambda: full("stdout")),
                             _read_capped(process.stderr, max_bytes, lambda: full("stderr")))
    timed_out = False
    try:
        await asyncio.wait_for(asyncio.shield(readers), timeout)
        await asyncio.wait_for(process.wait(), timeout)
    except TimeoutError:
        timed_out = True
        _kill_group(process)
    finally:
        await _reap(process, readers)
    command = " ".join(argv)
    if timed_out and not over:
        raise ToolError(f"shell_command stopped: it ran past its timeout of {timeout:g}s: {command}",
                        code=ErrorCode.TIMEOUT)
    if over:
        raise ToolError(
            render_message(
                f"shell_command stopped: its {over[0]} passed {max_bytes:,} bytes: {command}.",
                hint="make the "
                     "command print less (filter its output, or write it to a file and read the part you need)",
                     inline=True),
            code=ErrorCode.OUTPUT_LIMIT)
    stdout, stderr = readers.result()
    return {
        "exit_code": process.returncode,
        "stdout": stdout.decode("utf-8", errors="replace")[:_RETURNED_CHARS],
        "stderr": stderr.decode("utf-8", errors="replace")[:_RETURNED_CHARS],
    }


async def _read_capped(stream: asyncio.StreamReader, cap: int, on_full: Any) -> bytes:
    """Read ``stream`` to its end, keeping the first ``cap`` bytes; call ``on_full`` once when more come."""
    kept = bytearray()
    full = False
    while chunk := await stream.read(_CHUNK):
        if full:
            continue  # keep draining (the command is being stopped), so the pipe closes
        room = cap - len(kept)
        kept += chunk[:room]
        if len(chunk) > room:
            full = True
            on_full()
    return bytes(kept)


def _kill_group(process: asyncio.subprocess.Process) -> None:
    """Stop the command and everything it started (its group outlives it while a child holds a pipe)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()


async def _reap(process: asyncio.subprocess.Process, readers: asyncio.Future[Any]) -> None:
    """Wait (briefly) for the pipes to drain and the process to exit; never leave a zombie or a reader behind."""
    try:
        await asyncio.wait_for(asyncio.shield(readers), _GRACE_SECONDS)
    except TimeoutError:  # a descendant left the group and holds a pipe: stop reading it
        readers.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await readers
    except asyncio.CancelledError:
        _kill_group(process)
        readers.cancel()
        raise
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), _GRACE_SECONDS)


def read_text_prefix(path: Path, max_chars: int, *, opener: Callable[[], int] | None = None) -> str:
    """The first ``max_chars`` characters of the regular UTF-8 file at ``path``, reading no more than that.

    ``opener`` opens it (the sandbox's, which follows no link); by default ``path`` is opened by name.
    """
    try:
        fd = opener() if opener is not None else os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ToolError(f"file_read: cannot open '{path}': {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, socket or device)"
        raise ToolError(f"file_read: '{path}' is {kind}; only regular files can be read")
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(max_chars * 4 + 4)  # a character is at most 4 bytes in UTF-8
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        text = decoder.decode(data, final=False)  # an incomplete character at the cut is left out
    except UnicodeDecodeError as exc:
        raise ToolError(f"file_read: '{path}' is not UTF-8 text (byte {exc.start} cannot be decoded)") from None
    return text[:max_chars]
