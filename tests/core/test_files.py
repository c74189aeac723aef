"""Atomic writes: a reader sees the old file or the new one, nothing is left behind (not even by a killed
writer, once the folder is written again), permissions follow the umask unless a file is private."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pytest_agentloom._core import files as files_module
from pytest_agentloom._core.files import write_json_atomic, write_text_atomic


def test_atomic_write_leaves_no_temporary_file_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "deep" / "snap.yaml"
    write_text_atomic(target, "a: 1\n")
    assert target.read_text() == "a: 1\n"

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_text_atomic(target, "a: 2\n")
    assert target.read_text() == "a: 1\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["snap.yaml"]


def test_a_failed_write_of_the_text_removes_the_temporary_file(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "tape.yaml"
    target.write_text("kept\n")

    def boom(fd: int) -> None:
        raise OSError("no space left")

    monkeypatch.setattr("os.fsync", boom)
    with pytest.raises(OSError, match="no space left"):
        write_text_atomic(target, "new\n", durable=True)
    assert target.read_text() == "kept\n" and sorted(p.name for p in tmp_path.iterdir()) == ["tape.yaml"]


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_files_get_the_permissions_the_umask_gives_not_owner_only(tmp_path: Path, umask: int) -> None:
    previous = os.umask(umask)
    try:
        write_text_atomic(tmp_path / "snap.yaml", "a: 1\n")
        write_json_atomic(tmp_path / "record.json", {"b": [1], "a": 2})
    finally:
        os.umask(previous)
    for name in ("snap.yaml", "record.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~umask
    assert (tmp_path / "record.json").read_text() == '{\n  "a": 2,\n  "b": [\n    1\n  ]\n}\n'


def test_an_exclusive_write_never_replaces_a_file_that_appeared(tmp_path: Path) -> None:
    target = tmp_path / ".agentloom" / "salt"
    assert write_text_atomic(target, "first\n", exclusive=True) is True
    assert write_text_atomic(target, "second\n", exclusive=True) is False
    assert target.read_text() == "first\n" and sorted(p.name for p in target.parent.iterdir()) == ["salt"]


def test_a_private_file_is_the_owners_only_whatever_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o002)
    try:
        write_text_atomic(tmp_path / "salt", "x\n", private=True)
        write_json_atomic(tmp_path / "checkpoint.json", {"a": 1}, private=True)
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "salt").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "checkpoint.json").stat().st_mode) == 0o600


@pytest.mark.skipif(os.name != "posix", reason="process ids are checked with os.kill(pid, 0)")
def test_the_first_write_into_a_folder_removes_temporary_files_of_dead_writers(tmp_path: Path) -> None:
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    host = files_module._HOST
    names = {
        f".run.json.{host}.{dead_pid}.abcd_123.tmp": False,  # its writer is gone: removed
        f".snap.yaml.{host}.{os.getpid()}.zzzzzzzz.tmp": True,  # a writer still running (this process): kept
        f".run.json.other-host.{dead_pid}.abcd_123.tmp": True,  # another host's: its pids mean nothing here
        ".notes.txt.tmp": True,  # not a name this module makes: kept
        "data.json": True,
    }
    for name in names:
        (tmp_path / name).write_text("x")
    write_text_atomic(tmp_path / "new.yaml", "a: 1\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*(n for n, kept in names.items() if kept),
                                                                  "new.yaml"])


def test_a_folder_the_write_created_is_not_listed_for_leftovers(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    listed: list[str] = []
    real_scandir = os.scandir

    def scandir(folder: str) -> object:
        listed.append(str(folder))
        return real_scandir(folder)

    monkeypatch.setattr(os, "scandir", scandir)
    write_json_atomic(tmp_path / "new" / "deeper" / "record.json", {"a": 1})  # both folders made by the write
    assert listed == []
    write_json_atomic(tmp_path / "record.json", {"a": 1})  # tmp_path existed: its leftovers are looked for
    assert listed == [str(tmp_path)]


def test_the_temporary_file_carries_a_name_the_sweep_recognises(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real_replace = os.replace

    def replace(source: str, target: str) -> None:
        seen.append(os.path.basename(source))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    write_text_atomic(tmp_path / "snap.yaml", "a: 1\n")
    match = files_module._TEMPORARY.match(seen[0])
    assert match and match["host"] == files_module._HOST and int(match["pid"]) == os.getpid()


def test_resolved_is_what_resolve_gives_and_follows_links_made_later(tmp_path: Path) -> None:
    from pytest_agentloom._core.files import resolved

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    paths = [tmp_path / "real" / "x", tmp_path / "link" / "x", tmp_path / "link", tmp_path / "real" / ".." / "real",
             Path("relative") / "x", Path("~") / "x", Path("/")]
    for path in paths * 2:  # the second time, folders are known
        assert resolved(path) == path.expanduser().resolve()
    (tmp_path / "real" / "later").symlink_to(tmp_path)  # the last part is always looked at
    assert resolved(tmp_path / "real" / "later") == tmp_path.resolve()
