"""Adopting a drift check's live recordings: ``agentloom drift --adopt TEST ...``.

A drift check leaves, per test, a live cassette, its tool tape and the snapshots the
live run wrote in its scratch folder, and a manifest (``drift.json``) saying which
committed file each of them would replace and how the live run ended. Adopting a
test copies its files over the committed ones, so that a reviewed live behaviour
becomes the recording CI replays, without re-recording.

It fails closed:

- a test whose live run did not pass is refused, unless forced;
- a manifest path that leaves the rootdir (absolute, ``..``) or points into the
  scratch folder is refused, and so is a missing scratch file;
- every file is staged first (a temporary file beside its destination, written
  and flushed); only when all are staged is each moved into place
  (``os.replace``), so a failure while staging changes no committed file.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..._core.files import write_text_atomic
from ..._core.suggest import did_you_mean
from ...errors import DriftError, ErrorCode, render_message

__all__ = ["MANIFEST", "Adopted", "adopt", "newest_check", "write_manifest"]

#: The manifest a drift check writes into its scratch folder.
MANIFEST = "drift.json"
_KIND = "agentloom.drift"


def write_manifest(folder: Path, rootdir: Path, tests: Mapping[str, Mapping[str, Any]]) -> None:
    """Write (or extend: a later check may reuse the folder) ``folder/drift.json`` with ``tests``: per node id,
    its live ``outcome``, ``verdict`` and ``files`` (``[scratch path, committed path]`` pairs, relative)."""
    path = folder / MANIFEST
    known: dict[str, Any] = {}
    if path.is_file():
        try:
            known = dict(json.loads(path.read_text(encoding="utf-8")).get("tests", {}))
        except (ValueError, AttributeError):
            known = {}
    known.update({nodeid: dict(entry) for nodeid, entry in tests.items()})
    data = {"kind": _KIND, "version": 1, "rootdir": str(rootdir), "tests": dict(sorted(known.items()))}
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def newest_check(base: Path) -> Path:
    """The newest drift check under ``base`` (``.agentloom/drift``: folders named by UTC time) with a manifest."""
    checks = sorted(path.parent for path in base.glob(f"*/{MANIFEST}")) if base.is_dir() else []
    if not checks:
        raise DriftError(render_message(f"No drift check to adopt from: no folder under {base} holds a {MANIFEST}.",
                                        hint="run agentloom drift first, or name its folder with --dir DIR"),
                         code=ErrorCode.DRIFT_ADOPT_REFUSED)
    return checks[-1]


@dataclass(frozen=True)
class Adopted:
    """What an adoption changed: each committed file, ``new``, ``changed`` or ``unchanged``."""

    files: tuple[tuple[str, str], ...]

    def lines(self) -> list[str]:
        changed = [(path, state) for path, state in self.files if state != "unchanged"]
        head = f"agentloom drift --adopt: {len(changed)} file{'s' if len(changed) != 1 else ''} changed"
        return [head + (":" if changed else " (the committed files already hold the live recordings)")] + [
            f"  {state}: {path}" for path, state in changed]


def adopt(folder: Path, names: Sequence[str], *, force: bool = False) -> Adopted:
    """Copy the named tests' live files of the drift check in ``folder`` over the committed ones."""
    manifest = _read_manifest(folder)
    rootdir = Path(manifest["rootdir"])
    pairs: list[tuple[Path, Path]] = []
    for nodeid in _chosen(manifest["tests"], names, folder):
        entry = manifest["tests"][nodeid]
        if entry.get("outcome") != "passed" and not force:
            raise _refused(f"The live run of {nodeid} {entry.get('outcome', 'did not run')}: its recording is not "
                           "adopted.", hint="study it first (agentloom run --replay ...); to adopt it anyway, add "
                                            "--force")
        pairs += [_pair(folder, rootdir, nodeid, scratch, committed) for scratch, committed in entry.get("files", ())]
    return Adopted(tuple(_replace_all(pairs, rootdir)))


def _read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _refused(f"{folder} holds no {MANIFEST}: it is not the folder of a finished drift check.",
                       hint="name the folder agentloom drift printed (--dir DIR)") from None
    except ValueError as exc:
        raise _refused(f"{path} is not JSON ({exc}).", hint="run the drift check again") from None
    if not isinstance(data, dict) or data.get("kind") != _KIND or not isinstance(data.get("tests"), dict) \
            or not isinstance(data.get("rootdir"), str):
        raise _refused(f"{path} is not a drift check's manifest.", hint="run the drift check again")
    return data


def _chosen(tests: Mapping[str, Any], names: Iterable[str], folder: Path) -> list[str]:
    """Node ids for ``names``: a node id, or a part of exactly one node id."""
    chosen = []
    for name in names:
        if name in tests:
            chosen.append(name)
            continue
        matches = [nodeid for nodeid in tests if name in nodeid]
        if len(matches) == 1:
            chosen.append(matches[0])
            continue
        if matches:
            raise _refused(f"'{name}' names {len(matches)} tests of the drift check in {folder}.",
                           details=[f"  {nodeid}" for nodeid in sorted(matches)[:10]],
                           hint="give the whole node id")
        hint = did_you_mean(name, tests)
        raise _refused(f"'{name}' is not a test of the drift check in {folder}.",
                       details=[f"  {nodeid}" for nodeid in sorted(tests)[:10]],
                       hint=f"{hint + ' ' if hint else ''}name one of the tests listed")
    return list(dict.fromkeys(chosen))


def _pair(folder: Path, rootdir: Path, nodeid: str, scratch: Any, committed: Any) -> tuple[Path, Path]:
    """The scratch file and its committed destination, both checked to stay where they belong."""
    for text in (scratch, committed):
        relative = PurePosixPath(str(text))
        if not isinstance(text, str) or relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise _refused(f"The manifest names the path {text!r} for {nodeid}: only relative paths inside the "
                           "scratch folder and the rootdir are adopted.", hint="run the drift check again")
    source, target = folder / scratch, rootdir / committed
    if folder.resolve() in target.resolve().parents:
        raise _refused(f"The manifest sends {scratch} of {nodeid} into the scratch folder itself.",
                       hint="run the drift check again")
    if not source.is_file() or source.is_symlink():
        raise _refused(f"The live file {source} of {nodeid} is missing.", hint="run the drift check again")
    return source, target


def _replace_all(pairs: list[tuple[Path, Path]], rootdir: Path) -> list[tuple[str, str]]:
    """Stage every file beside its destination, then move each into place; on a failure while staging, remove
    what was staged and change nothing."""
    staged: list[tuple[Path, Path, str]] = []
    states = []
    try:
        for source, target in pairs:
            data = source.read_bytes()
            shown = target.relative_to(rootdir).as_posix()
            state = "new" if not target.exists() else "unchanged" if target.read_bytes() == data else "changed"
            states.append((shown, state))
            if state != "unchanged":
                staged.append((_stage(target, data), target, shown))
    except BaseException:
        for temporary, _, _ in staged:
            temporary.unlink(missing_ok=True)
        raise
    for temporary, target, _ in staged:
        os.replace(temporary, target)
    return states


def _stage(target: Path, data: bytes) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".adopt", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


def _refused(headline: str, *, hint: str, details: Sequence[str] = ()) -> DriftError:
    return DriftError(render_message(headline, details=details, hint=hint), code=ErrorCode.DRIFT_ADOPT_REFUSED)
