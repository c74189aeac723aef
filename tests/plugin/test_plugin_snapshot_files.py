"""The snapshot module without pytest: names, YAML form, the unused-file bookkeeping."""

from __future__ import annotations

from pathlib import Path

import yaml

from pytest_agentloom.testing._snapshots.compare import SnapshotSession, dump_yaml, sanitize


def test_sanitize_keeps_safe_names_and_hashes_the_ones_it_changed() -> None:
    assert sanitize("test_x[a-1]") == "test_x[a-1]"
    assert sanitize("test_x[a/b c:d]") == "test_x[a_b_c_d]-6dab5391a0"
    ids = ["a b", "a_b", "a?b", "a/b", "a:b", "a\\b", "a\tb"]
    names = [sanitize(f"test_x[{param}]") for param in ids]
    assert len(set(names)) == len(ids) and names[1] == "test_x[a_b]"
    long = sanitize("t" * 500)
    assert len(long) == 120 and long != sanitize("t" * 501)


def test_multiline_strings_are_literal_blocks_and_order_is_kept() -> None:
    text = dump_yaml({"z": 1, "a": "one\ntwo", "m": "single"})
    assert text == "z: 1\na: |-\n  one\n  two\nm: single\n"
    assert yaml.safe_load(text) == {"z": 1, "a": "one\ntwo", "m": "single"}


def test_unused_skips_used_and_protected_files_and_merges_workers(tmp_path: Path) -> None:
    root = tmp_path / "__agentloom_snapshots__"
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


def test_a_snapshot_passes_whichever_secret_a_marker_stands_for(tmp_path: Path, monkeypatch) -> None:
    """Markers compare alike (a CI job's dummy secret passes the real one's snapshot) and the file is not
    rewritten for them; ``AGENTLOOM_SECRET_MARKERS=exact`` compares the digests."""
    import pytest

    from pytest_agentloom import Scripted, run_workflow

    flow = tmp_path / "flow.yaml"
    flow.write_text("name: f\nstate_schema: {token: {redact: true}}\nstate: {token: ''}\n"
                    "steps:\n  - {id: s, type: llm_call, model: m, prompt: 'use {state.token}', output: o}\n")

    def run(token: str):  # a WorkflowResult
        return run_workflow(flow, provider=Scripted({"s": "done"}), state={"token": token}, runs_dir=False,
                            redaction_salt="salt")

    path = tmp_path / "__snapshots__" / "t.yaml"
    monkeypatch.delenv("AGENTLOOM_SECRET_MARKERS", raising=False)
    SnapshotSession(create=True).assert_match(path, run("real-token-1"), label="t", nodeid="t")
    written = path.read_text()
    assert "real-token-1" not in written and written.count("<REDACTED:sha256=") == 1
    SnapshotSession().assert_match(path, run("dummy-token-2"), label="t", nodeid="t")
    updating = SnapshotSession(update=True)
    updating.assert_match(path, run("dummy-token-2"), label="t", nodeid="t")
    assert path.read_text() == written and not updating.updated
    monkeypatch.setenv("AGENTLOOM_SECRET_MARKERS", "exact")
    with pytest.raises(AssertionError, match=r"state\.token"):
        SnapshotSession().assert_match(path, run("dummy-token-2"), label="t", nodeid="t")
