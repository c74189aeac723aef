"""Opening a file beneath an allowed folder so that a symbolic link swapped in meanwhile cannot lead out.

:meth:`~._sandbox.Sandbox.check_write` resolves a path and checks it lies under ``writable_paths``;
opening that path again by name would follow whatever links are there *by then*: a folder replaced
by a link between the check and the open (a race another process can win within a few thousand
tries) would send the bytes outside. :func:`open_beneath` instead holds the allowed folder open and
walks the checked path one part at a time relative to the part before (``openat``), each opened
with ``O_NOFOLLOW`` (and ``O_DIRECTORY`` but the last): a link anywhere on the way fails the open
with an ``OSError`` of errno ``ELOOP`` whose ``filename`` is that part (:func:`link_on_the_way`).
Where the system has no ``dir_fd`` (Windows), the path is opened by name, as before.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

__all__ = ["link_on_the_way", "open_beneath", "supported"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def link_on_the_way(part: str) -> OSError:
    """The error of a part of the path that became a symbolic link (or stopped being a folder) after the check."""
    return OSError(errno.ELOOP, "a symbolic link (or not a folder) on the way", part)


def supported() -> bool:
    """Whether this system opens relative to a held folder without following links (POSIX)."""
    return bool(_NOFOLLOW and _DIRECTORY) and os.open in os.supports_dir_fd and os.mkdir in os.supports_dir_fd


def open_beneath(root: Path, parts: Sequence[str], flags: int, *, make_folders: bool = False,
                 mode: int = 0o666) -> int:
    """A file descriptor of ``root``/``parts`` opened with ``flags``, no link followed below ``root``.

    ``make_folders`` creates missing folders on the way (each relative to its parent, never through a
    link). Raises :func:`link_on_the_way`'s error when a part is a link, other ``OSError`` as ``os.open`` does.
    """
    if not supported():
        target = root.joinpath(*parts)
        if make_folders:
            target.parent.mkdir(parents=True, exist_ok=True)
        return os.open(target, flags | _CLOEXEC, mode)
    if not parts:
        raise IsADirectoryError(errno.EISDIR, "an allowed folder itself is not a file", str(root))
    folder = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for part in parts[:-1]:
            inner = _step(folder, part, make_folders)
            os.close(folder)
            folder = inner
        return _open_last(folder, parts[-1], flags | _NOFOLLOW | _CLOEXEC, mode)
    finally:
        os.close(folder)


def _step(folder: int, part: str, make_folders: bool) -> int:
    """The folder ``part`` of ``folder``, opened (made first if missing and allowed)."""
    try:
        if make_folders:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=folder)
        return os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=folder)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) or _is_link(folder, part):
            raise link_on_the_way(part) from None
        raise


def _open_last(folder: int, name: str, flags: int, mode: int) -> int:
    try:
        return os.open(name, flags, mode, dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP or _is_link(folder, name):
            raise link_on_the_way(name) from None
        raise


def _is_link(folder: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False
