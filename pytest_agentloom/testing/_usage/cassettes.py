"""Cassettes and tool tapes no test used: plain Python (no pytest), kept by the session, merged from workers.

A test's files share one stem, ``<cassette dir>/<test file>/<test name>``: the cassette ``<stem>.yaml``, its
tool tape ``<stem>.tools.yaml`` and, for a live run's repetitions, ``<stem>/<K>.yaml``. A stem is *used* when
a test of this session opened its cassette, and *protected* when its test failed or was skipped (its run may
not have reached the cassette). A file is unused when its stem is neither, and its test file was collected
or is gone: the cassettes of a test file that exists but was not collected (``--ignore``) are not judged.
"""

from __future__ import annotations

import difflib
import os
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CassetteUsage", "file_stem"]

_TAPE = ".tools.yaml"
_TEST_FILE_SUFFIXES = (".py", ".yaml", ".yml")


def file_stem(path: str) -> str:
    """The stem a cassette file belongs to: ``x.yaml``, ``x.tools.yaml`` -> ``x``."""
    if path.endswith(_TAPE):
        return path[: -len(_TAPE)]
    return path.removesuffix(".yaml")


@dataclass
class CassetteUsage:
    """The stems used and protected, the test files collected, and what is unused at the end.

    Paths are kept relative to the rootdir (``/`` separated), so a shard's report reads the same on
    any machine (see :mod:`.shard_report`).
    """

    rootdir: Path
    cassette_dir: str  # relative to the rootdir when inside it
    used: set[str] = field(default_factory=set)
    protected: set[str] = field(default_factory=set)
    test_files: set[str] = field(default_factory=set)
    #: stems whose test failed with no cassette on disk: candidates for a renamed test's file
    missing: set[str] = field(default_factory=set)

    def relative(self, path: str | os.PathLike[str]) -> str:
        """``path`` from the rootdir, ``/`` separated (as given when outside it)."""
        text = os.fspath(path)
        root = os.fspath(self.rootdir)
        if text.startswith(root + os.sep):  # the cassette folder's files: no file system call each
            return Path(text[len(root) + 1:]).as_posix()
        try:
            return Path(text).resolve().relative_to(self.rootdir.resolve()).as_posix()
        except ValueError:
            return Path(text).as_posix()

    def use(self, paths: Iterable[str]) -> None:
        """Note the cassettes and tool tapes this session's tests claimed (absolute paths)."""
        self.used.update(file_stem(self.relative(path)) for path in paths)

    def protect(self, cassette: Path, *, missing: bool = False) -> None:
        stem = file_stem(self.relative(cassette))
        self.protected.add(stem)
        if missing:
            self.missing.add(stem)

    def collect(self, test_files: Iterable[str | os.PathLike[str]]) -> None:
        self.test_files.update(self.relative(path) for path in test_files)

    def to_wire(self) -> dict[str, list[str]]:
        return {"used": sorted(self.used), "protected": sorted(self.protected),
                "test_files": sorted(self.test_files), "missing": sorted(self.missing)}

    def merge(self, wire: Mapping[str, Any]) -> None:
        self.used.update(wire.get("used", ()))
        self.protected.update(wire.get("protected", ()))
        self.test_files.update(wire.get("test_files", ()))
        self.missing.update(wire.get("missing", ()))

    # -- the end of a whole run ---------------------------------------------------------------------------

    def unused(self) -> list[Path]:
        """The cassette and tool tape files of the cassette folder that no test of the suite used."""
        base = self.rootdir / self.cassette_dir
        if not base.is_dir():
            return []
        found = []
        for path in sorted(base.rglob("*.yaml")):
            relative = self.relative(path)
            if self._judged(relative) and not self._belongs(relative, self.used | self.protected):
                found.append(path)
        return found

    def _judged(self, relative: str) -> bool:
        """Whether the file's test file was collected, or is gone (the file is then surely unused)."""
        parts = relative.split("/")
        prefix = self.cassette_dir.rstrip("/").split("/") if self.cassette_dir not in ("", ".") else []
        inner = parts[len(prefix):]
        for end in range(1, len(inner)):
            if inner[end - 1].endswith(_TEST_FILE_SUFFIXES):
                test_file = "/".join(inner[:end])
                return test_file in self.test_files or not (self.rootdir / test_file).exists()
        return False  # not laid out as the plugin writes cassettes: someone else's file

    @staticmethod
    def _belongs(relative: str, stems: set[str]) -> bool:
        stem = file_stem(relative)
        if stem in stems:
            return True
        parent = stem.rpartition("/")[0]  # a repetition: <stem>/<K>.yaml
        return parent in stems

    def rename_hints(self, unused: list[Path]) -> list[str]:
        """``git mv`` commands for tests that failed with no cassette while an unused one sits close by."""
        olds = {file_stem(self.relative(path)) for path in unused if not str(path).endswith(_TAPE)}
        lines = []
        for new in sorted(self.missing):
            folder = new.rpartition("/")[0]
            near = sorted(old for old in olds if old.rpartition("/")[0] == folder) or sorted(olds)
            match = difflib.get_close_matches(new, near, n=1, cutoff=0.0)
            if not match:
                continue
            old = match[0]
            olds.discard(old)
            lines.append(f"  git mv {self._shown(old + '.yaml')} {self._shown(new + '.yaml')}")
            if (self.rootdir / (old + _TAPE)).is_file():
                lines.append(f"  git mv {self._shown(old + _TAPE)} {self._shown(new + _TAPE)}")
        return lines

    def _shown(self, relative: str) -> str:
        """A path of the rootdir as the user types it from the current folder, quoted for a shell."""
        try:
            return shlex.quote(os.path.relpath(self.rootdir / relative))
        except ValueError:
            return shlex.quote(str(self.rootdir / relative))

    def delete(self, paths: Iterable[Path]) -> None:
        """Delete unused files, and the folders they leave empty up to the cassette folder."""
        base = (self.rootdir / self.cassette_dir).resolve()
        for path in paths:
            path.unlink(missing_ok=True)
            folder = path.parent.resolve()
            while folder != base and base in folder.parents and folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
                folder = folder.parent
