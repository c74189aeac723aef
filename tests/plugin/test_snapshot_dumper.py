"""The snapshot text: libyaml's emitter only where it writes PyYAML's bytes, and data that reads back as written.

The bytes of every committed snapshot, of a big state, and of random documents built from the characters and
shapes where the two emitters are known to differ (see pytest_agentloom/testing/_snapshots/dumper.py).
"""

from __future__ import annotations

import string
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentloom._core.yaml_io import load_yaml
from pytest_agentloom.testing._snapshots import dumper
from pytest_agentloom.testing._snapshots.dumper import dump_yaml, dump_yaml_python, fast_dumper_agrees

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted(ROOT.glob("examples/**/__agentloom_snapshots__/**/*.yaml")) + sorted(
    ROOT.glob("tests/**/__agentloom_snapshots__/**/*.yaml"))
needs_libyaml = pytest.mark.skipif(getattr(yaml, "CSafeDumper", None) is None, reason="PyYAML without libyaml")

# characters of every kind the emitters treat differently, and the texts YAML gives a meaning
ALPHABET = string.ascii_letters + string.digits + " \n'\"#:-|>{}[],&*!%@`?\t\r\x00\x85\xa0äöü€中\u2028\ufeff😀"
TEXT = st.one_of(st.text(alphabet=ALPHABET, max_size=260), st.sampled_from(
    ["", " ", "\n", "a\n", "a\n\n", "\n\nb", "yes", "null", "1.0", "~", "- a", "a: b", "#x", " lead", "trail ",
     "line \nnext", "x" * 130, "ä" * 70, "2024-01-01", ".inf", "0o17", "<<", "=", "---", "..."]))
SCALARS = st.one_of(TEXT, st.integers(-10**12, 10**12), st.floats(allow_nan=False, allow_infinity=False),
                    st.booleans(), st.none())
DATA = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(TEXT, inner, max_size=4)), max_leaves=30)


def _fast(data: Any) -> str:
    return yaml.dump(data, Dumper=dumper._FAST, sort_keys=False, allow_unicode=True, width=100,
                     default_flow_style=False)


@needs_libyaml
@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: path.name)
def test_every_committed_snapshot_is_written_with_the_same_bytes(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    assert dump_yaml_python(data) == dump_yaml(data) == path.read_text()
    if fast_dumper_agrees(data):
        assert _fast(data) == path.read_text()


def test_most_committed_snapshots_take_the_fast_emitter() -> None:
    fast = [fast_dumper_agrees(yaml.safe_load(path.read_text())) for path in COMMITTED]
    assert len(fast) >= 10 and sum(fast) >= len(fast) * 0.7, fast


@needs_libyaml
def test_a_big_state_takes_the_fast_emitter_with_the_same_bytes() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from big_states import records
    finally:
        sys.path.remove(str(ROOT / "bench"))
    data = {"format_version": 2, "state": records(0.3), "steps": {"answer": {"status": "success",
                                                                             "output": "Line one.\nLine two.\n"}}}
    assert fast_dumper_agrees(data)
    assert _fast(data) == dump_yaml_python(data)


@needs_libyaml
@settings(max_examples=400, deadline=None, derandomize=True)
@given(DATA)
def test_where_the_fast_emitter_is_taken_it_writes_the_same_bytes(data: Any) -> None:
    document = {"state": data}
    if fast_dumper_agrees(document):
        assert _fast(document) == dump_yaml_python(document)
    assert dump_yaml(document) == dump_yaml_python(document)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(DATA)
def test_plain_data_the_fast_emitter_takes_reads_back_as_written(data: Any) -> None:
    """What lets a snapshot be compared without writing its text: the file's data is the data (the other
    documents, holding a line separator YAML reads as a space or the like, are written and read back first)."""
    document = {"value": data}
    if fast_dumper_agrees(document):
        assert load_yaml(dump_yaml(document)) == document
    assert load_yaml(dump_yaml(document)) == load_yaml(dump_yaml(load_yaml(dump_yaml(document))))


@needs_libyaml
@pytest.mark.parametrize("odd", [{"k": "tab\there"}, {"k": "emoji 😀"}, {"k": "ends in a blank line\n\n"},
                                 {"k": "\n"}, {"k": "space before \na break"}, {"k": "two lines\nend "},
                                 {"": 1}, {"x" * 101: 1}, {"ä" * 51: 1}, {"k": "bom\ufeff"}, {"k": "sep\u2028"},
                                 {1: "a non-string key"}, {"k": ("a", "tuple")}])
def test_documents_the_emitters_write_apart_take_the_python_one(odd: dict[Any, Any]) -> None:
    assert not fast_dumper_agrees({"state": odd})
