"""The redaction policy is the one place the rules of redaction live, and the writers take them from it."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from pytest_agentloom._redaction.api_keys import api_keys_from_env
from pytest_agentloom._redaction.http_traffic import HttpRedactor
from pytest_agentloom._redaction.policy import POLICY, RedactionPolicy
from pytest_agentloom._redaction.redactor import Redactor, make_marker
from pytest_agentloom._redaction.streamed_text import StreamedTextRedactor
from pytest_agentloom.testing._secrets_scan import check_no_secrets

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_agentloom"
POLICY_FILE = PACKAGE / "_redaction" / "policy.py"
#: spellings that are rules (how a marker is written or recognised): only the policy may hold them
RULE_SPELLINGS = ("<REDACTED:sha256=", "<REDACTED>", "<SCRUBBED>", "[0-9a-f]")
#: the modules that once held their own copy of a rule
ONCE_DUPLICATED = ("_redaction", "replay", "testing/_secrets_scan.py", "engine/_persist")


def _code_strings(tree: ast.AST) -> list[ast.Constant]:
    """The string constants of a module that are not docstrings."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [node for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings]


def test_the_marker_spellings_are_written_only_in_the_policy():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == POLICY_FILE:
            continue
        for node in _code_strings(ast.parse(path.read_text(encoding="utf-8"))):
            text = node.value.replace("<REDACTED:sha256=…>", "")  # a message showing the user a marker's shape
            found += [f"{path.relative_to(PACKAGE)}:{node.lineno}: {spelling}" for spelling in RULE_SPELLINGS
                      if spelling in text]
    assert found == []


def test_the_length_limits_are_numbers_only_in_the_policy():
    """No module that once had its own minimum length assigns a number to a name any more."""
    found = []
    for place in ONCE_DUPLICATED:
        root = PACKAGE / place
        for path in sorted(root.rglob("*.py") if root.is_dir() else [root]):
            if path == POLICY_FILE:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                        and type(node.value.value) is int and any("LEN" in getattr(t, "id", "") or "MIN" in
                                                                   getattr(t, "id", "") for t in node.targets):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert found == []


def test_the_policy_is_frozen_and_spells_the_markers_as_before():
    with pytest.raises(dataclasses.FrozenInstanceError):
        POLICY.digest_length = 8  # type: ignore[misc]
    marker = make_marker("sk-live-1", salt=b"salt")
    assert marker.startswith("<REDACTED:sha256=") and len(marker) == len("<REDACTED:sha256=>") + 16
    assert POLICY.is_marker(marker) and not POLICY.is_marker(marker[:-2] + ">")
    assert POLICY.same_in_replay(f"a {marker} b") == POLICY.same_in_replay(f"a {make_marker('x', salt=b's')} b")
    assert POLICY.written_forms('é"') == ['é"', '\\u00e9\\"', 'é\\"']


def test_the_length_limits_come_from_the_policy():
    assert api_keys_from_env({"A_API_KEY": "x" * (POLICY.min_api_key_length - 1)}) == []
    assert api_keys_from_env({"a_api_key": "y" * POLICY.min_api_key_length}) == ["y" * POLICY.min_api_key_length]
    redactor = Redactor(["pin", "pass"], salt="salt")
    short, long = "1" * (POLICY.min_secret_text_length - 1), "2" * POLICY.min_secret_text_length
    assert redactor.secret_values({"pin": short, "pass": long}) == [long]


def test_the_writers_take_their_rules_from_the_policy_they_are_given():
    policy = RedactionPolicy(marker_prefix="<HIDDEN:sha256=", digest_length=8, api_key_marker="<GONE>")
    redactor = Redactor(["api_key"], salt="salt", policy=policy)
    assert redactor.policy.patterns == ("api_key",) and redactor.policy.salt == b"salt"
    marker = redactor.redact_state({"api_key": "sk-secret-1"})["api_key"]
    assert policy.is_marker(marker) and len(marker) == len("<HIDDEN:sha256=>") + 8
    assert redactor.marker(marker) == marker  # recognised as a marker: redacting twice changes nothing
    child = redactor.with_definition(["token"], salt_start=None, step_outputs={})
    assert child.policy.marker_prefix == "<HIDDEN:sha256=" and child.patterns == ("token",)
    cassette = HttpRedactor(secrets=["sk-secret-1"], marker=redactor.marker, api_keys=["sk-abcdefgh123"],
                            policy=redactor.policy)
    assert cassette.text("sk-secret-1 / sk-abcdefgh123") == f"{marker} / <GONE>"
    streamed = StreamedTextRedactor(policy.api_key_pairs(["sk-abcdefgh123"]))
    assert streamed.feed("key sk-abcd") + streamed.feed("efgh123!") + streamed.flush() == "key <GONE>!"


def test_the_secrets_scan_searches_the_forms_the_writers_replace(tmp_path):
    value = 'pass "word" é'
    written = tmp_path / "record.json"
    written.write_text(json.dumps({"note": value}))  # the JSON form only: quotes escaped, é as \u00e9
    with pytest.raises(AssertionError, match=r"record\.json"):
        check_no_secrets([value], [written], {})
    scrubbed = HttpRedactor(api_keys=[value]).text(written.read_text())
    assert POLICY.api_key_marker in scrubbed
    check_no_secrets([value], [], {"the scrubbed file": scrubbed})
