"""Redaction rules (docs/redaction.md: Redaction), one test (or table) per rule, on the Redactor itself.

The end-to-end tests (result, checkpoints, run records, a canary searched in
every file written) are in test_checkpoints.py.
"""

from __future__ import annotations

import re

import pytest

from pytest_agentloom._redaction.redactor import MARKER_PATTERN, Redactor, env_patterns, make_marker
from pytest_agentloom._redaction.salt import SALT_ENV, SALT_FILE, find_project_root, load_salt
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.engine._format.redaction_patterns import child_redactor, redactor_for
from pytest_agentloom.errors import UsageError

SALT = b"test-salt"


def redactor(*patterns: str, outputs: dict[str, str | None] | None = None) -> Redactor:
    return Redactor(patterns, salt=SALT, step_outputs=outputs)


def m(value: object) -> str:
    return make_marker(value, salt=SALT)


# -- markers ----------------------------------------------------------------------------------------------


def test_marker_shape_is_redacted_sha256_with_16_hex_digits():
    assert re.fullmatch(r"<REDACTED:sha256=[0-9a-f]{16}>", m("sk-live-1"))
    assert MARKER_PATTERN.fullmatch(m("sk-live-1"))


def test_same_value_gives_same_marker_and_different_values_differ():
    assert m("hunter2") == m("hunter2")
    assert m("hunter2") != m("hunter3")


def test_marker_is_keyed_so_another_salt_gives_another_marker():
    assert make_marker("1234", salt=b"a") != make_marker("1234", salt=b"b")


def test_marker_is_not_the_plain_sha256_of_the_value():
    import hashlib

    assert hashlib.sha256(b"1234").hexdigest()[:16] not in m("1234")


def test_non_string_values_are_hashed_by_their_json_form():
    assert m(42) == m(42)
    assert m(42) != m("x42")
    assert m({"b": 1, "a": 2}) == m({"a": 2, "b": 1})


# -- patterns -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "key", "redacted"),
    [
        ("api_key", "api_key", True),
        ("api_key", "api_key2", False),
        ("*_token", "github_token", True),
        ("*_token", "token", False),
        ("*password*", "db_password_old", True),
        ("api_?ey", "api_key", True),
        ("[ab]_secret", "a_secret", True),
        ("[ab]_secret", "c_secret", False),
        ("API_KEY", "api_key", False),  # case-sensitive
        ("api_key", "API_KEY", False),
    ],
)
def test_patterns_are_case_sensitive_shell_globs_on_key_names(pattern, key, redacted):
    out = redactor(pattern).redact_state({key: "value-1234"})
    assert (out[key] == m("value-1234")) is redacted


def test_nested_keys_match_by_name():
    out = redactor("access_token").redact_state({"credentials": {"access_token": "abcd", "user": "bob"}})
    assert out == {"credentials": {"access_token": m("abcd"), "user": "bob"}}


def test_nested_keys_match_by_dotted_path():
    r = redactor("credentials.access_token")
    state = {"credentials": {"access_token": "abcd"}, "other": {"access_token": "efgh"}}
    out = r.redact_state(state)
    assert out["credentials"]["access_token"] == m("abcd")
    assert out["other"]["access_token"] == "efgh"


def test_dotted_path_globs_and_list_positions_left_out_of_the_path():
    out = redactor("users.pass*").redact_state({"users": [{"name": "a", "password": "p1p1"}, {"password": "p2p2"}]})
    assert out == {"users": [{"name": "a", "password": m("p1p1")}, {"password": m("p2p2")}]}


def test_a_matching_list_has_each_value_redacted():
    out = redactor("keys").redact_state({"keys": ["k1", "k2", 3]})
    assert out == {"keys": [m("k1"), m("k2"), m(3)]}


def test_a_matching_dict_has_each_value_redacted_recursively_keeping_its_shape():
    out = redactor("creds").redact_state({"creds": {"a": "x1", "b": {"c": ["y1", 2]}}})
    assert out == {"creds": {"a": m("x1"), "b": {"c": [m("y1"), m(2)]}}}


def test_env_patterns_are_comma_separated_and_add_to_the_file_patterns():
    assert env_patterns({"AGENTLOOM_REDACT_STATE_KEYS": "api_key, *_token,,*password* "}) == (
        "api_key", "*_token", "*password*",
    )
    assert env_patterns({}) == ()
    workflow = parse_workflow(
        "name: w\nstate: {api_key: a, db_password: b, plain: c}\nstate_schema: {api_key: {redact: true}}\n"
        "steps: [{id: s, type: tool, tool_name: t}]\n"
    )
    r = redactor_for(workflow, env={"AGENTLOOM_REDACT_STATE_KEYS": "*password*"}, salt=SALT)
    assert r.patterns == ("api_key", "*password*")
    out = r.redact_state(workflow.state)
    assert out == {"api_key": m("a"), "db_password": m("b"), "plain": "c"}


def test_only_redact_true_keys_of_the_schema_are_patterns():
    workflow = parse_workflow(
        "name: w\nstate_schema: {a: {redact: true}, b: {redact: false}, c: {description: x}}\n"
        "steps: [{id: s, type: tool, tool_name: t}]\n"
    )
    assert redactor_for(workflow, env={}, salt=SALT).patterns == ("a",)


def test_token_glob_never_touches_agentloom_fields():
    r = redactor("*token*", outputs={"ask": "answer"})
    state = {"steps": {"ask": {"output": "hi there", "status": "success"}}, "github_token": "ghp_abcd"}
    out = r.redact_state(state)
    assert out["steps"] == {"ask": {"output": "hi there", "status": "success"}}
    assert out["github_token"] == m("ghp_abcd")
    definition = {"name": "w", "steps": [{"id": "ask", "type": "llm_call", "max_tokens": 50, "prompt": "p"}]}
    assert r.redact_definition(definition, [])["steps"][0]["max_tokens"] == 50


def test_steps_output_is_redacted_whole_when_the_output_key_matches():
    r = redactor("api_key", "report.secret", outputs={"fetch": "api_key", "write": "report.secret", "other": "x"})
    state = {
        "api_key": "sk-1234",
        "report": {"secret": {"a": "v1v1"}},
        "x": "plain",
        "steps": {
            "fetch": {"output": "sk-1234", "status": "success"},
            "write": {"output": {"a": "v1v1"}, "status": "success"},
            "other": {"output": "plain", "status": "success"},
        },
    }
    out = r.redact_state(state)
    assert out["steps"]["fetch"] == {"output": m("sk-1234"), "status": "success"}
    assert out["steps"]["write"]["output"] == {"a": m("v1v1")}
    assert out["steps"]["other"]["output"] == "plain"


def test_state_in_memory_is_never_changed():
    state = {"api_key": "sk-1234", "nested": {"api_key": "zz"}}
    redactor("api_key").redact_state(state)
    assert state == {"api_key": "sk-1234", "nested": {"api_key": "zz"}}


def test_secret_values_are_scrubbed_from_other_strings():
    r = redactor("api_key")
    out = r.redact_state({"api_key": "sk-live-abc", "prompt": "call with sk-live-abc please"})
    assert out["prompt"] == f"call with {m('sk-live-abc')} please"


def test_secret_values_lists_every_redacted_value_longest_first_and_skips_tiny_ones():
    r = redactor("*_key", "pin")
    values = r.secret_values({"a_key": "abcd", "b_key": ["abcdefgh", 12345], "pin": "12", "plain": "zzzzzz"})
    assert values == ["abcdefgh", "12345", "abcd"]


def test_no_patterns_means_nothing_changes_and_no_salt_is_needed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(SALT_ENV, raising=False)
    r = Redactor(())
    assert not r.active
    assert r.redact_state({"api_key": "x"}) == {"api_key": "x"}
    assert not (tmp_path / SALT_FILE).exists()


def test_definition_redacts_state_block_tool_args_input_and_webhook_headers():
    r = redactor("api_key", "Authorization")
    definition = {
        "name": "w",
        "state": {"api_key": "sk-9999", "q": "x"},
        "steps": [
            {"id": "t", "type": "tool", "tool_args": {"api_key": "{state.api_key}", "url": "u"}},
            {"id": "g", "type": "approval_gate", "notify": {"url": "http://h", "headers": {"Authorization": "B x"}}},
        ],
    }
    out = r.redact_definition(definition, ["sk-9999"])
    assert out["state"] == {"api_key": m("sk-9999"), "q": "x"}
    assert out["steps"][0]["tool_args"] == {"api_key": m("{state.api_key}"), "url": "u"}
    assert out["steps"][1]["notify"]["headers"] == {"Authorization": m("B x")}
    assert out["steps"][1]["notify"]["url"] == "http://h"


def test_child_redactor_inherits_the_parent_patterns():
    parent = parse_workflow(
        "name: p\nstate_schema: {api_key: {redact: true}}\nsteps: [{id: s, type: tool, tool_name: t}]\n"
    )
    child = parse_workflow("name: c\nstate_schema: {pin: {redact: true}}\nsteps: [{id: s, type: tool, tool_name: t}]\n")
    r = child_redactor(redactor_for(parent, env={}, salt=SALT), child)
    assert set(r.patterns) == {"api_key", "pin"}



def test_redactors_of_one_workflow_follow_the_environment_the_salt_and_the_file_on_every_call(tmp_path):
    """What ``redactor_for`` keeps per workflow (the definition's patterns and outputs) never hides a change."""
    workflow = parse_workflow(
        "name: w\nstate_schema: {api_key: {redact: true}}\nsteps: [{id: s, type: tool, tool_name: t, output: out}]\n"
    )
    first = redactor_for(workflow, env={}, salt=SALT)
    assert first.patterns == ("api_key",) and first.step_outputs == {"s": "out"} and first.api_keys == ()
    again = redactor_for(workflow, env={"AGENTLOOM_REDACT_STATE_KEYS": "*password*"}, salt=SALT)
    assert again.patterns == ("api_key", "*password*")  # an environment pattern that came
    keyed = redactor_for(workflow, env={"ZZ_API_KEY": "sk-value-long-enough"}, salt=SALT)
    assert keyed.patterns == ("api_key",) and keyed.api_keys == ("sk-value-long-enough",)  # it went; a key came
    assert redactor_for(workflow, env={}, salt=b"other").marker("x") != first.marker("x")
    assert redactor_for(workflow, env={}, inherited=["pin"], salt=SALT).patterns == ("pin", "api_key")
    assert redactor_for(workflow, env={}, salt=SALT).patterns == ("api_key",)
    salted = [redactor_for(workflow, env={SALT_ENV: salt}).marker("x") for salt in ("one", "two")]
    assert salted == [make_marker("x", salt=b"one"), make_marker("x", salt=b"two")]  # each reads its own salt
    workflow = workflow.with_source(tmp_path / "elsewhere" / "w.yaml")  # the salt is looked for from its folder
    assert redactor_for(workflow, env={})._salt_start == tmp_path / "elsewhere"
    first.step_outputs["s"] = None
    assert redactor_for(workflow, env={}).step_outputs == {"s": "out"}  # a redactor's own copy


# -- the salt -----------------------------------------------------------------------------------------------


def test_salt_comes_from_the_environment_first(tmp_path):
    assert load_salt(tmp_path, env={SALT_ENV: "abc"}) == b"abc"
    assert not (tmp_path / SALT_FILE).exists()


def test_salt_file_is_created_once_in_the_project_root_and_reused(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    nested = tmp_path / "flows" / "deep"
    nested.mkdir(parents=True)
    first = load_salt(nested, env={})
    assert (tmp_path / SALT_FILE).read_text().strip() == first.decode()
    assert len(first) == 64
    assert load_salt(nested, env={}) == first
    assert find_project_root(nested / "x.yaml") == tmp_path


def test_an_existing_salt_file_wins_over_a_nearer_project_marker(tmp_path):
    (tmp_path / SALT_FILE).parent.mkdir()
    (tmp_path / SALT_FILE).write_text("committed-salt\n")
    inner = tmp_path / "pkg"
    inner.mkdir()
    (inner / "pyproject.toml").write_text("")
    assert load_salt(inner, env={}) == b"committed-salt"


def test_rotating_the_salt_changes_markers(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    before = Redactor(["k"], salt_start=tmp_path, env={}).marker("v")
    (tmp_path / SALT_FILE).unlink()
    after = Redactor(["k"], salt_start=tmp_path, env={}).marker("v")
    assert before != after


def test_a_secret_shorter_than_4_characters_is_redacted_by_key_only():
    out = redactor("pin").redact_state({"pin": "12", "note": "the pin is 12", "nested": {"pin": 7}})
    assert out == {"pin": m("12"), "note": "the pin is 12", "nested": {"pin": m(7)}}


@pytest.mark.parametrize("content", ["", "\n", "   \t\n"])
def test_an_empty_or_blank_salt_file_is_an_error_naming_the_file_and_the_fix(tmp_path, content):
    (tmp_path / SALT_FILE).parent.mkdir()
    (tmp_path / SALT_FILE).write_text(content)
    with pytest.raises(UsageError) as caught:
        load_salt(tmp_path, env={})
    assert str(tmp_path / SALT_FILE) in str(caught.value) and "How to fix: delete" in str(caught.value)
    assert (tmp_path / SALT_FILE).read_text() == content  # left for the user to look at, never rewritten


def test_a_blank_salt_variable_counts_as_unset_and_the_file_is_used(tmp_path):
    (tmp_path / SALT_FILE).parent.mkdir()
    (tmp_path / SALT_FILE).write_text("file-salt\n")
    assert load_salt(tmp_path, env={SALT_ENV: "  "}) == b"file-salt"


def test_an_empty_explicit_salt_is_refused_when_a_marker_is_needed():
    with pytest.raises(UsageError, match="redaction_salt is empty"):
        Redactor(["api_key"], salt=" ").marker("sk-1234")


def test_a_secret_used_as_a_dictionary_key_is_replaced_in_keys_too():
    r = redactor("token")
    state = {"token": "tok-abcdef-123", "lookup": {"tok-abcdef-123": {"owner": "ann"}}, "tok-abcdef-123": 1}
    out = r.redact_state(state)
    assert out["lookup"] == {m("tok-abcdef-123"): {"owner": "ann"}}
    assert m("tok-abcdef-123") in out and "tok-abcdef-123" not in str(out)
    assert r.redact_strings({"x": {"tok-abcdef-123": "v"}}, ["tok-abcdef-123"]) == {"x": {m("tok-abcdef-123"): "v"}}


def test_the_results_state_is_a_copy():
    """Changing the returned state leaves the workflow's state alone."""
    from pytest_agentloom import Scripted, VirtualClock, run_workflow

    workflow = parse_workflow(
        "name: big\nconfig: {model: gpt-4o-mini}\nstate: {rows: [{n: 1}, {n: 2}]}\n"
        "steps:\n  - {id: a, type: llm_call, prompt: 'go', output: answer}\n"
    )
    result = run_workflow(workflow, provider=Scripted({"a": "done"}), clock=VirtualClock(), runs_dir=False)
    assert result.state["rows"] == [{"n": 1}, {"n": 2}] and result.state["answer"] == "done"
    result.state["rows"][0]["n"] = 99
    assert workflow.state["rows"][0]["n"] == 1
