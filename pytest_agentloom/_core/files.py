"""Writing files so that nothing a user keeps is ever half written.

Every file the package writes (snapshots, cassettes, tool recordings,
checkpoints, run records, the salt) goes through :func:`write_text_atomic`:
the text goes to a temporary file in the same folder, which then replaces the
target in one ``os.replace``. A reader (or a crash) sees the old file or the
new one, never a torn one, and the temporary file is removed when the write
fails. The temporary file is created with mode ``0o666``, which the system
narrows by the umask (or a folder's default ACL) exactly as for an ordinary
``open()``: most of these files are meant to be committed and shared, and
letting the kernel apply the umask costs nothing, where reading it costs a file
read per write. ``private=True`` keeps a file the owner's only (``0o600``,
whatever the umask): checkpoints and the salt.

A process killed in the middle of a write (``kill -9``) cannot remove its
temporary file. Each temporary file's name carries the writer's host and process
id (``.<name>.<host>.<pid>.<random>.tmp``); the first write of a process into a
folder removes the temporary files there that this host wrote and whose writer is
no longer running (POSIX only). A folder the write itself had to create has
nothing to sweep: a test suite writes one run record into each test's new folder,
and listing every such folder was a fixed cost per test. Files of other hosts (a shared network folder, a
container sharing a volume) are left alone: their process ids mean nothing here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import re
import socket
from pathlib import Path
from typing import Any

from .speedups import speedups_on

__all__ = ["one_to_one_name", "remove_stale_temporaries", "resolved", "write_json_atomic", "write_text_atomic"]

#: folders whose leftover temporary files this process already removed (as written and resolved); cleared when
#: full, which only means a folder is listed once more
_SWEPT: set[str] = set()
_MAX_SWEPT = 1_024
_TEMPORARY = re.compile(r"^\..+\.(?P<host>[A-Za-z0-9-]+)\.(?P<pid>[0-9]+)\.[a-z0-9_]{8}\.tmp$")
_NAME_CHARACTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"  # as tempfile's names
_HOST = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40] or "host"


def write_text_atomic(path: Path, text: str, *, exclusive: bool = False, durable: bool = False,
                      private: bool = False) -> bool:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically, creating its folder.

    With ``exclusive`` the file is only created, never replaced: the answer is ``False``
    (and nothing is written) when ``path`` already exists, so two processes racing to create
    it agree on one content. Otherwise the answer is ``True``. ``durable`` flushes the bytes to
    the disk before the rename (files a user keeps: snapshots, cassettes, tool recordings).
    ``private`` keeps the file readable by its owner only (``0o600``) whatever the umask.
    """
    if not _make_folder(path.parent):
        remove_stale_temporaries(path.parent)
    data = text.encode("utf-8")
    handle, temporary = _open_temporary(path, 0o600 if private else 0o666)
    try:
        try:
            _write_all(handle, data)
            if durable:
                os.fsync(handle)
        finally:
            os.close(handle)
        if private:  # the umask can only narrow 0o600; a private file is exactly the owner's read and write
            os.chmod(temporary, 0o600)
        if exclusive:
            return _create(Path(temporary), path)
        os.replace(temporary, path)
        temporary = ""  # moved into place: nothing left to remove (and no stat to ask)
        return True
    finally:
        if temporary and os.path.exists(temporary):
            os.unlink(temporary)


def _write_all(handle: int, data: bytes) -> None:
    """Write every byte of ``data`` to the file descriptor ``handle`` (``os.write`` may write fewer)."""
    view = memoryview(data)
    while view:
        view = view[os.write(handle, view):]


def _make_folder(folder: Path) -> bool:
    """Create ``folder`` (and its parents) if missing; whether this call created it (so it holds nothing)."""
    try:
        folder.mkdir()
    except FileExistsError:
        return False
    except FileNotFoundError:
        folder.mkdir(parents=True, exist_ok=True)  # a parent is missing too (exist_ok: another writer raced us)
    return True


def _open_temporary(path: Path, mode: int) -> tuple[int, str]:
    """A new, empty temporary file beside ``path`` (``.<name>.<host>.<pid>.<random>.tmp``), opened for writing.

    As ``tempfile.mkstemp``, but created with ``mode`` less the umask, as ``open()`` creates files,
    instead of the owner-only ``0o600`` that would then need a ``chmod`` and the umask read back.
    """
    prefix = f"{path.parent}{os.sep}.{path.name}.{_HOST}.{os.getpid()}."
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        name = prefix + "".join(random.choices(_NAME_CHARACTERS, k=8)) + ".tmp"
        try:
            return os.open(name, flags, mode), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary file name beside {path}")


def _create(temporary: Path, path: Path) -> bool:
    try:
        os.link(temporary, path)  # unlike os.replace, fails when the file appeared meanwhile
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links: replace, accepting the (tiny) race
        if path.exists():
            return False
        os.replace(temporary, path)
    return True


def remove_stale_temporaries(folder: Path) -> None:
    """Remove the temporary files in ``folder`` left by writers that died mid-write (once per process).

    Only names this module makes are touched, and only when the process id in the name is not running.
    The folders swept are kept (at most :data:`_MAX_SWEPT`), unless ``AGENTLOOM_SPEEDUPS=0``: a snapshot
    folder of 1,000 files is listed once per process, not once per snapshot written.
    """
    remember = speedups_on()
    if os.name != "posix" or (remember and folder.is_absolute() and str(folder) in _SWEPT):
        return  # an absolute path seen before is not resolved again (a syscall per part of it)
    key = str(folder.resolve())
    swept = remember and key in _SWEPT
    if remember:
        if len(_SWEPT) >= _MAX_SWEPT:
            _SWEPT.clear()
        _SWEPT.update((key, str(folder)) if folder.is_absolute() else (key,))
    if swept:
        return
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            match = _TEMPORARY.match(entry.name)
            if (match and match["host"] == _HOST and not _running(int(match["pid"]))
                    and entry.is_file(follow_symlinks=False)):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process (or a number no process has)
        return True
    return True


def write_json_atomic(path: Path, data: Any, *, private: bool = False) -> Path:
    """Write ``data`` as indented JSON with sorted keys (stable bytes for stable data); return ``path``."""
    write_text_atomic(path, json.dumps(data, sort_keys=True, ensure_ascii=False, indent=2) + "\n", private=private)
    return path


def one_to_one_name(name: str, safe: str, *, limit: int | None = None) -> str:
    """The file name for ``name``, given ``safe``, its form with unsafe characters replaced.

    Replacing characters maps many names to one (``a b``, ``a?b`` and ``a/b`` all give ``a_b``), so
    when ``safe`` differs from ``name``, or is longer than ``limit``, a short hash of ``name`` is added:
    distinct names give distinct files. A name that needed no change keeps it, so files already
    committed under such names are found again.
    """
    if safe == name and (limit is None or len(safe) <= limit):
        return safe
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:10]
    kept = safe if limit is None else safe[: limit - 11]
    return f"{kept}-{digest}"


#: Absolute paths this process found to be their own resolution: no symbolic link, no ``..`` in them.
_CANONICAL: set[str] = set()
_MAX_CANONICAL = 10_000


def resolved(path: Path) -> Path:
    """``path.expanduser().resolve()``, with fewer system calls for a path under a folder already resolved.

    ``resolve`` looks at every part of a path (a ``lstat`` each, in Python). A test's run folder
    (``<base temp>/agentloom/<test>-<n>/runs``) and its workflow file differ from the previous test's only
    in their last parts: when the folder holding a path was found canonical, only the last part is
    looked at (is it a symbolic link?). A folder made a symbolic link since then would be named as it is
    written, which still reaches the same file the link's target does. A path found canonical itself
    (each row of a scenario table names the same workflow file) is given back while it is still no link.
    With ``AGENTLOOM_SPEEDUPS=0`` it is ``path.expanduser().resolve()``.
    """
    if not speedups_on():
        return path.expanduser().resolve()
    if str(path) in _CANONICAL and not os.path.islink(path):
        return path
    path = path.expanduser()
    if not path.is_absolute() or path.name in ("", ".", ".."):
        return _remember(path.resolve())
    parent = path.parent
    if str(parent) not in _CANONICAL and resolved(parent) != parent:
        return _remember(path.resolve())
    if os.path.islink(path):
        return _remember(path.resolve())
    return _remember(path)


def _remember(path: Path) -> Path:
    if len(_CANONICAL) >= _MAX_CANONICAL:
        _CANONICAL.clear()
    _CANONICAL.add(str(path))
    return path
