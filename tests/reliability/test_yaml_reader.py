"""The one YAML reader (_core.yaml_io) and the strict JSON reader (_core.json_io), and that every file type we
read goes through them: duplicate keys, alias bombs, self-references, deep nesting, sizes, each a named error
naming the file and the line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pytest_agentloom._core import yaml_io
from pytest_agentloom._core.json_io import load_json
from pytest_agentloom._core.yaml_io import YamlLimits, load_yaml, parse_yaml, read_text_capped, read_yaml_file
from pytest_agentloom.engine._format.loader import load_workflow, parse_workflow
from pytest_agentloom.errors import (
    CassetteFormatError,
    CheckpointError,
    DataReadError,
    JsonReadError,
    ScenarioTableError,
    WorkflowError,
    YamlReadError,
)

#: nine levels of nine: 387,420,489 strings from a 419-byte file
BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{c}: &{c} [{', '.join(['*' + p] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
)

REDACT_TWICE = """\
name: keys
state: {api_key: sk-live-123}
state_schema:
  api_key: {redact: true}
  api_key: {redact: false}
steps:
  - {id: s, type: tool, tool_name: echo, output: o}
"""


def refused(text: str, **limits: int) -> YamlReadError:
    with pytest.raises(YamlReadError) as info:
        load_yaml(text, file="f.yaml", limits=YamlLimits(**limits))
    assert info.value.code == "invalid_yaml"
    assert str(info.value).startswith("Cannot read f.yaml: ")
    assert "How to fix: " in str(info.value)
    return info.value


# -- the reader ----------------------------------------------------------------------------------------------


def test_it_reads_what_safe_load_reads() -> None:
    text = ("name: x\nitems: [1, 2.5, true, null, '3']\nwhen: 2024-01-02\nnested: {a: {b: [c]}}\n"
            "base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\nblock: |\n  two\n  lines\n")
    assert load_yaml(text) == yaml.safe_load(text)
    assert load_yaml(text)["derived"] == {"x": 1, "y": 3}  # a merge key's values may be overridden
    assert load_yaml("") is None
    assert load_yaml("# only a comment\n") is None


def test_it_parses_with_libyaml() -> None:
    assert issubclass(yaml_io._Loader, yaml.CSafeLoader)  # a test may look inside; the package does not


def test_a_duplicate_key_names_the_key_and_both_lines() -> None:
    error = refused("a: 1\nb: 2\na: 3\n")
    assert (error.line, error.column) == (3, 1)
    assert error.problem == "the key 'a' appears twice in one mapping (first on line 1)"


def test_the_redaction_switch_cannot_be_flipped_by_a_second_key(tmp_path: Path) -> None:
    path = tmp_path / "keys.yaml"
    path.write_text(REDACT_TWICE)
    with pytest.raises(WorkflowError) as info:
        load_workflow(path)
    assert str(info.value).startswith("Invalid YAML at line 5, column 3: the key 'api_key' appears twice")
    assert info.value.file == str(path)


@pytest.mark.parametrize("text", ["1: a\ntrue: b\n", "x: 1\n'x': 2\n", "{a: 1, a: 1}"])
def test_keys_that_read_as_the_same_value_are_duplicates(text: str) -> None:
    assert "appears twice" in refused(text).problem


def test_a_key_repeated_in_different_mappings_is_fine() -> None:
    assert load_yaml("- {a: 1}\n- {a: 2}\n") == [{"a": 1}, {"a": 2}]


def test_the_anchor_bomb_is_refused_before_anything_is_built() -> None:
    error = refused(BOMB)
    assert "aliases stand for more than" in error.problem and error.line is not None


def test_aliases_are_limited_in_count_and_in_expanded_size() -> None:
    assert load_yaml("a: &a [1, 2]\nb: [*a, *a]\n") == {"a": [1, 2], "b": [[1, 2], [1, 2]]}
    assert "more than 3 aliases" in refused("a: &a 1\nb: [*a, *a, *a, *a]\n", max_aliases=3).problem
    many = "a: &a [" + ", ".join(["x"] * 100) + "]\nb: [*a, *a, *a]\n"
    assert "aliases stand for more than 250 values" in refused(many, max_alias_values=250).problem
    text = "a: &a " + "y" * 1000 + "\nb: [*a, *a, *a]\n"
    assert "2,000 characters" in refused(text, max_alias_chars=2000).problem


@pytest.mark.parametrize("text", ["state: &s {self: *s}", "&l [1, *l]", "a: &a {b: {c: *a}}"])
def test_an_anchor_that_contains_itself_is_refused(text: str) -> None:
    assert "refers to a value that contains it" in refused(text).problem


def test_an_alias_to_no_anchor_is_refused() -> None:
    assert "refers to no anchor" in refused("a: *nothing\n").problem


@pytest.mark.parametrize("depth", [201, 2_000, 100_000])
def test_deep_nesting_is_refused_without_recursion(depth: int) -> None:
    # libyaml's own composer would crash the interpreter (a segfault) at 100,000 levels
    error = refused("x: " + "[" * depth + "]" * depth)
    assert error.problem == "the data is nested more than 200 levels deep"


def test_nesting_up_to_the_limit_reads() -> None:
    assert load_yaml("[" * 200 + "]" * 200) is not None


def test_a_second_document_is_refused() -> None:
    assert "more than one YAML document" in refused("a: 1\n---\nb: 2\n").problem


def test_a_text_over_the_size_cap_is_refused() -> None:
    assert "over the limit of 10" in refused("a: 123456789\n", max_bytes=10).problem


def test_values_python_cannot_hold_are_named_errors() -> None:
    assert "4300 digits" in refused("x: " + "9" * 5000).problem
    assert "invalid Unicode character escape" in refused('name: "a\\ud800b"').problem


def test_syntax_errors_carry_line_and_column() -> None:
    error = refused("a: [1, 2\nb: 3\n")
    assert error.line == 2 and error.problem.startswith("invalid YAML: ")


def test_parse_yaml_gives_nodes_for_line_numbers() -> None:
    data, node = parse_yaml("- a\n- b\n")
    assert data == ["a", "b"]
    assert [item.start_mark.line + 1 for item in node.value] == [1, 2]


def test_read_text_capped_refuses_what_is_not_a_small_regular_utf8_file(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text("a: 1\n")
    assert read_yaml_file(tmp_path / "ok.yaml") == {"a": 1}
    (tmp_path / "latin1.yaml").write_bytes(b"a: caf\xe9\n")
    (tmp_path / "big.yaml").write_text("a: " + "x" * 100)
    cases = {
        tmp_path: "is a directory",
        Path("/dev/zero"): "not a regular file",
        tmp_path / "latin1.yaml": "is not UTF-8 text (byte 6 cannot be decoded)",
        tmp_path / "big.yaml": "over the limit of 50",
        tmp_path / "a\0b": "cannot be opened",
    }
    for path, problem in cases.items():
        with pytest.raises(DataReadError) as info:
            read_text_capped(path, max_bytes=50)
        assert problem in info.value.problem, path
        assert info.value.code == "unreadable_file"
    with pytest.raises(FileNotFoundError):
        read_text_capped(tmp_path / "missing.yaml", max_bytes=50)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(DataReadError, match="not a regular file"):
        read_text_capped(tmp_path / "pipe", max_bytes=50)


# -- JSON ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "problem"), [
    ('{"a": 1, "a": 2}', "the key 'a' appears twice in one object"),
    ("[" * 5000 + "]" * 5000, "nested more than 200 levels deep"),
    ("9" * 5000, "4300 digits"),
    ('"\\ud800"', "lone surrogate"),
    ("[1,", "invalid JSON: Expecting value"),
])
def test_json_we_refuse(text: str, problem: str) -> None:
    with pytest.raises(JsonReadError) as info:
        load_json(text, file="row.jsonl")
    assert problem in info.value.problem and info.value.file == "row.jsonl"


def test_json_we_read() -> None:
    assert load_json('{"x": "[[[", "y": [{"a": "\\ud83d\\ude00"}]}') == {"x": "[[[", "y": [{"a": "\U0001f600"}]}


# -- every file type we read goes through the readers ---------------------------------------------------------


def test_no_module_reads_yaml_by_itself() -> None:
    package = Path(__file__).parents[2] / "pytest_agentloom"
    readers = ("safe_load(", "yaml.load(", "SafeLoader", "yaml.compose(", "full_load(", "unsafe_load(")
    found = [f"{path.relative_to(package)}: {word}" for path in sorted(package.rglob("*.py"))
             if path.name != "yaml_io.py" for word in readers if word in path.read_text(encoding="utf-8")]
    assert not found, f"read YAML with pytest_agentloom._core.yaml_io instead: {found}"


def test_duplicate_keys_in_a_scenario_table(tmp_path: Path) -> None:
    from pytest_agentloom.testing._scenarios.table import load_table

    table = tmp_path / "t.yaml"
    table.write_text("- id: a\n  state: {}\n  state: {x: 1}\n")
    with pytest.raises(ScenarioTableError) as info:
        load_table(table, default_workflow="f.yaml")
    assert f"{table}:3" in str(info.value) and "the key 'state' appears twice" in str(info.value)
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text('{"id": "a", "id": "b"}\n')
    with pytest.raises(ScenarioTableError, match="the key 'id' appears twice"):
        load_table(jsonl, default_workflow="f.yaml")


def test_duplicate_keys_in_a_cassette() -> None:
    from pytest_agentloom.replay._cassette_file import loads

    with pytest.raises(CassetteFormatError) as info:
        loads("format_version: 1\nformat_version: 1\ninteractions: []\n", path="c.yaml")
    assert "the key 'format_version' appears twice" in str(info.value) and "(at line 2, column 1)" in str(info.value)


def test_duplicate_keys_in_a_tool_tape(tmp_path: Path) -> None:
    from pytest_agentloom.errors import ArtifactError
    from pytest_agentloom.replay._tool_tape import ToolTape

    tape = tmp_path / "t.tools.yaml"
    tape.write_text("format_version: 1\ncalls: []\ncalls: []\n")
    with pytest.raises(ArtifactError, match="the key 'calls' appears twice"):
        ToolTape(tape, recording=False)


def test_duplicate_keys_in_a_checkpoint(tmp_path: Path) -> None:
    from pytest_agentloom.engine._persist.checkpoints import load_checkpoint

    path = tmp_path / "run.json"
    path.write_text('{"kind": "x", "kind": "y"}')
    with pytest.raises(CheckpointError, match="the key 'kind' appears twice"):
        load_checkpoint(path)


def test_duplicate_keys_in_a_snapshot(tmp_path: Path, snapshot_run) -> None:
    from pytest_agentloom.errors import ArtifactError

    session, result = snapshot_run(update=False)
    path = tmp_path / "snap.yaml"
    path.write_text("format_version: 1\nstatus: success\nstatus: failed\n")
    with pytest.raises(ArtifactError, match="the key 'status' appears twice"):
        session.assert_match(path, result, label="snap", nodeid="t.py::test")


def test_duplicate_keys_in_a_script_file(tmp_path: Path, cli) -> None:
    (tmp_path / "flow.yaml").write_text("name: f\nsteps:\n  - {id: s, type: llm_call, model: m, prompt: hi}\n")
    (tmp_path / "replies.yaml").write_text("s: one\ns: two\n")
    done = cli("run", "flow.yaml", "--script", "replies.yaml", "--no-record")
    assert done.returncode == 2, done.stderr
    assert "replies.yaml" in done.stderr and "the key 's' appears twice" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_workflow_with_the_anchor_bomb_in_its_state_does_not_validate() -> None:
    text = "name: bomb\nstate:\n" + "\n".join("  " + line for line in BOMB.splitlines()) + "\nsteps: []\n"
    with pytest.raises(WorkflowError, match="aliases stand for more than"):
        parse_workflow(text)

