"""The cassette usage bookkeeping without pytest: stems, repetitions, test files not collected, renames."""

from __future__ import annotations

from pathlib import Path

from pytest_agentloom.testing._usage.cassettes import CassetteUsage, file_stem


def write(root: Path, *names: str) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("format_version: 1\n")


def test_a_used_cassette_keeps_its_tape_and_repetitions(tmp_path: Path) -> None:
    write(tmp_path, "test_a.py", "test_ignored.py")
    write(tmp_path / "cassettes", "test_a.py/test_x.yaml", "test_a.py/test_x.tools.yaml", "test_a.py/test_x/1.yaml",
          "test_a.py/test_y.yaml", "test_a.py/test_failed.yaml", "test_ignored.py/test_z.yaml",
          "test_gone.py/TestC.test_w.yaml", "notes/readme.yaml")
    usage = CassetteUsage(tmp_path, "cassettes")
    usage.collect([tmp_path / "test_a.py"])
    worker = CassetteUsage(tmp_path, "cassettes")
    worker.use([str(tmp_path / "cassettes/test_a.py/test_x.yaml")])
    worker.protect(tmp_path / "cassettes/test_a.py/test_failed.yaml")
    usage.merge(worker.to_wire())
    unused = [path.relative_to(tmp_path).as_posix() for path in usage.unused()]
    # test_ignored.py exists but was not collected; notes/ is not laid out as the plugin's cassettes
    assert unused == ["cassettes/test_a.py/test_y.yaml", "cassettes/test_gone.py/TestC.test_w.yaml"]


def test_the_rename_hint_pairs_a_missing_cassette_with_the_closest_unused_one(tmp_path: Path) -> None:
    write(tmp_path, "test_a.py")
    write(tmp_path / "cassettes", "test_a.py/test_login.yaml", "test_a.py/test_login.tools.yaml",
          "test_a.py/test_refund.yaml")
    usage = CassetteUsage(tmp_path, "cassettes")
    usage.collect([tmp_path / "test_a.py"])
    usage.protect(tmp_path / "cassettes/test_a.py/test_login_works.yaml", missing=True)
    hints = usage.rename_hints(usage.unused())
    old, new = tmp_path / "cassettes/test_a.py/test_login", tmp_path / "cassettes/test_a.py/test_login_works"
    assert [line.split()[2:] for line in hints] == [
        [_rel(old, ".yaml"), _rel(new, ".yaml")], [_rel(old, ".tools.yaml"), _rel(new, ".tools.yaml")]]
    assert file_stem("a/b.tools.yaml") == file_stem("a/b.yaml") == "a/b"


def _rel(stem: Path, suffix: str) -> str:
    import os

    return os.path.relpath(str(stem) + suffix)
