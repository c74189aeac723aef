"""file_write and file_read open beneath the allowed folder without following links (tools/_beneath.py).

A folder swapped for a symbolic link between the sandbox's check and the open must fail the call
with ``sandbox_refused``, never write (or read) outside the allowed folders.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom.errors import ToolError
from pytest_agentloom.tools import Sandbox, SandboxRefusal, Tool, builtin_tools
from pytest_agentloom.tools._beneath import supported
from pytest_agentloom.tools._sandbox import SandboxConfig

pytestmark = pytest.mark.skipif(not supported(), reason="no openat/O_NOFOLLOW on this system")


def tools(tmp_path: Path, sandbox: Sandbox | None = None, **config: Any) -> dict[str, Tool]:
    sandbox = sandbox or Sandbox(SandboxConfig(**config), base_dir=tmp_path)
    return {made.name: made for made in builtin_tools(sandbox)}


def call(made: dict[str, Tool], name: str, **arguments: Any) -> Any:
    return asyncio.run(made[name].invoke(arguments))


class SwapAfterCheck(Sandbox):
    """A sandbox whose folder ``out/d`` becomes a link to ``outside`` right after each check passed."""

    def __init__(self, tmp_path: Path, **config: Any) -> None:
        super().__init__(SandboxConfig(**config), base_dir=tmp_path)
        self.tmp_path = tmp_path

    def _swap(self) -> None:
        folder = self.tmp_path / "out" / "d"
        folder.rename(self.tmp_path / "out" / "was-d")
        folder.symlink_to(self.tmp_path / "outside", target_is_directory=True)

    def check_write(self, path: str | os.PathLike[str], size: int) -> Path:
        target = super().check_write(path, size)
        self._swap()
        return target

    def check_read(self, path: str | os.PathLike[str], tool: str = "file_read") -> Path:
        target = super().check_read(path, tool)
        self._swap()
        return target


@pytest.fixture
def folders(tmp_path: Path) -> Path:
    (tmp_path / "out" / "d").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    return tmp_path


def test_a_folder_swapped_for_a_link_after_the_check_fails_the_write(folders: Path) -> None:
    made = tools(folders, SwapAfterCheck(folders, writable_paths=["out"]))
    with pytest.raises(SandboxRefusal) as info:
        call(made, "file_write", path="out/d/note.txt", content="escaped")
    assert info.value.code == "sandbox_refused" and info.value.rule == "writable_paths"
    assert "'d' is now a symbolic link" in str(info.value)
    assert list((folders / "outside").iterdir()) == []


def test_a_file_swapped_for_a_link_after_the_check_fails_the_write(folders: Path) -> None:
    class SwapFile(Sandbox):
        def check_write(self, path: str | os.PathLike[str], size: int) -> Path:
            target = super().check_write(path, size)
            (folders / "out" / "note.txt").symlink_to(folders / "outside" / "note.txt")
            return target

    made = tools(folders, SwapFile(SandboxConfig(writable_paths=["out"]), base_dir=folders))
    with pytest.raises(SandboxRefusal):
        call(made, "file_write", path="out/note.txt", content="escaped")
    assert list((folders / "outside").iterdir()) == []


def test_a_folder_swapped_for_a_link_after_the_check_fails_the_read(folders: Path) -> None:
    (folders / "out" / "d" / "note.txt").write_text("inside")
    (folders / "outside" / "note.txt").write_text("SECRET outside")
    made = tools(folders, SwapAfterCheck(folders, readable_paths=["out"]))
    with pytest.raises(SandboxRefusal) as info:
        call(made, "file_read", path="out/d/note.txt")
    assert info.value.rule == "readable_paths" and "SECRET" not in str(info.value)


def test_links_inside_the_allowed_folder_still_work_when_they_stay(folders: Path) -> None:
    (folders / "out" / "alias").symlink_to(folders / "out" / "d", target_is_directory=True)
    made = tools(folders, writable_paths=["out"])
    assert call(made, "file_write", path="out/alias/new/deeper.txt", content="ok")["bytes"] == 2
    assert (folders / "out" / "d" / "new" / "deeper.txt").read_text() == "ok"
    assert call(made, "file_write", path="out/alias/new/deeper.txt", content="!", append=True)["bytes"] == 1
    assert call(made, "file_read", path="out/d/new/deeper.txt") == "ok!"


def test_a_missing_allowed_folder_is_made_as_before(tmp_path: Path) -> None:
    made = tools(tmp_path, writable_paths=["build/out"])
    call(made, "file_write", path="build/out/a/b.txt", content="x")
    assert (tmp_path / "build" / "out" / "a" / "b.txt").read_text() == "x"


#: swaps out/d for a link to outside and back, forever, holding each state a little while (another
#: process, so it runs truly beside the writes; on the code before this check it won within ~100 writes)
RACER = """
import os, random, sys, time
folder, parked, outside = sys.argv[1:4]
while True:
    try:
        os.rename(folder, parked)
        os.symlink(outside, folder)
        time.sleep(random.random() * 0.0003)
        os.unlink(folder)
        os.rename(parked, folder)
        time.sleep(random.random() * 0.0003)
    except OSError:
        pass
"""


@pytest.mark.slow  # 3,000 writes against a racing process
def test_a_racing_link_swap_never_lets_a_byte_out(folders: Path) -> None:
    made = tools(folders, writable_paths=["out"])
    folder, parked, outside = folders / "out" / "d", folders / "out" / "parked", folders / "outside"
    racer = subprocess.Popen([sys.executable, "-c", RACER, str(folder), str(parked), str(outside)])
    outcomes = {"written": 0, "refused": 0, "other": 0}

    async def writes() -> None:  # one event loop for all of them: the writes, not loop starts, fill the time
        for _ in range(3_000):
            try:
                await made["file_write"].invoke({"path": "out/d/note.txt", "content": "x"})
                outcomes["written"] += 1
            except SandboxRefusal:
                outcomes["refused"] += 1
            except (ToolError, OSError):  # the folder was parked at that moment: not found, or made again
                outcomes["other"] += 1

    try:
        asyncio.run(writes())
    finally:
        racer.kill()
        racer.wait()
    assert sum(outcomes.values()) == 3_000
    assert list(outside.iterdir()) == [], outcomes
