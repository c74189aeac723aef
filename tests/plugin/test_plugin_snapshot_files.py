"""The snapshot module without pytest: names, YAML form, atomic writes, diffs, the unused-file bookkeeping."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pytest_agentloom.core.diffs import path_diff
from pytest_agentloom.core.files import write_text_atomic
from pytest_agentloom.testing.snapshots import SnapshotSession, dump_yaml, sanitize


def test_sanitize_keeps_brackets_and_replaces_the_rest() -> None:
    assert sanitize("test_x[a-1]") == "test_x[a-1]"
    assert sanitize("test_x[a/b c:d]") == "test_x[a_b_c_d]"
    long = sanitize("t" * 500)
    assert len(long) == 120 and long != sanitize("t" * 501)


def test_multiline_strings_are_literal_blocks_and_order_is_kept() -> None:
    text = dump_yaml({"z": 1, "a": "one\ntwo", "m": "single"})
    assert text == "z: 1\na: |-\n  one\n  two\nm: single\n"
    assert yaml.safe_load(text) == {"z": 1, "a": "one\ntwo", "m": "single"}


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


def test_diff_lines_are_sorted_paths_and_cut_at_the_limit() -> None:
    old = {"state": {"b": 1, "a": "x", "gone": True, "items": [1, 2]}}
    new = {"state": {"b": 2, "a": "y", "new": None, "items": [1, 2, 3]}}
    assert path_diff(old, new) == [
        "state.a: 'x' -> 'y'",
        "state.b: 1 -> 2",
        "state.gone: removed True",
        "state.items[2]: added 3",
        "state.new: added None",
    ]
    many = path_diff({f"k{i:02d}": i for i in range(30)}, {f"k{i:02d}": -i for i in range(1, 30)}, limit=5)
    assert many == ["k00: removed 0", "k01: 1 -> -1", "k02: 2 -> -2", "k03: 3 -> -3", "... and 26 more differences"]


def test_unused_skips_used_and_protected_files_and_merges_workers(tmp_path: Path) -> None:
    root = tmp_path / "__snapshots__"
    names = ["m/test_a.yaml", "m/test_a.2.yaml", "m/test_ab.yaml", "m/test_b[1].yaml", "other/test_c.yaml"]
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("format_version: 1\n")
    controller, worker = SnapshotSession(), SnapshotSession()
    controller.roots.add(str(root))
    worker.used.add(str(root / "m/test_b[1].yaml"))
    worker.protect(root / "m" / "test_a")  # a failed test: test_a.yaml and test_a.2.yaml, not test_ab.yaml
    controller.merge(worker.to_wire())
    assert [p.relative_to(root).as_posix() for p in controller.unused()] == ["m/test_ab.yaml", "other/test_c.yaml"]
