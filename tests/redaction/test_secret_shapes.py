"""Every shape of secret is scrubbed: keys named by ``api_key_env``, credential-style variables, and each
redacted value in its raw, JSON-escaped, URL-encoded and base64 forms; a secret dict key sorts alike."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from pytest_agentloom._redaction.api_keys import api_keys_from_env, redact_api_keys
from pytest_agentloom._redaction.http_traffic import HttpRedactor
from pytest_agentloom._redaction.policy import POLICY
from pytest_agentloom._redaction.redactor import Redactor
from pytest_agentloom._redaction.sorted_json import resorted
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.engine._format.redaction_patterns import redactor_for
from pytest_agentloom.testing._secrets_scan import check_no_secrets

SECRET = 'päss"wört\\canary-42'
KEY = "sk-team/canary+key=9f8e7d6c"


def every_form(value: str) -> dict[str, str]:
    raw = value.encode()
    return {"raw": value, "json": json.dumps(value)[1:-1], "url": quote(value, safe=""), "plus": quote_plus(value),
            "base64": base64.b64encode(raw).decode(), "urlsafe": base64.urlsafe_b64encode(raw).decode(),
            **{f"inside base64 after {n}": base64.b64encode(b"u" * n + raw + b"tail").decode() for n in range(3)}}


@pytest.mark.parametrize("name", ["TEAM_OPENAI_KEY", "GITHUB_TOKEN", "CLIENT_SECRET", "DB_PASSWORD", "X_API_KEY"])
def test_credential_style_variables_are_scrubbed(name: str) -> None:
    assert api_keys_from_env({name: KEY, "EDITOR": "vim-is-not-a-key"}) == [KEY]
    assert redact_api_keys(f"say {KEY}", {name: KEY}) == f"say {POLICY.api_key_marker}"


def test_a_variable_named_by_api_key_env_is_scrubbed_whatever_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_CRED_FOR_TEAM", KEY)
    assert KEY not in api_keys_from_env()
    workflow = parse_workflow(
        "name: w\nconfig: {providers: {openai: {api_key_env: LLM_CRED_FOR_TEAM}}}\n"
        "steps: [{id: a, type: tool, tool_name: t}]\n")
    redactor = redactor_for(workflow)
    assert KEY in redactor.api_keys
    assert redactor.redact_strings({"error": f"401: Incorrect API key provided: {KEY}"}, []) == {
        "error": f"401: Incorrect API key provided: {POLICY.api_key_marker}"}


@pytest.mark.parametrize("form", sorted(every_form(SECRET)))
def test_a_redacted_value_is_replaced_in_each_form(form: str) -> None:
    text = every_form(SECRET)[form]
    redactor = Redactor(["token"], salt="salt")
    marker = redactor.marker(SECRET)
    assert marker in redactor.redact_text(f"x {text} y", [SECRET])
    http = HttpRedactor(secrets=[SECRET], marker=redactor.marker)
    assert marker in http.text(f"x {text} y")
    with pytest.raises(AssertionError, match="found in 1 place"):
        check_no_secrets([SECRET], [], {"file": f"x {text} y"})


@pytest.mark.parametrize("form", sorted(every_form(KEY)))
def test_an_api_key_is_replaced_in_each_form(form: str) -> None:
    text = every_form(KEY)[form]
    assert POLICY.api_key_marker in Redactor([], env={"TEAM_OPENAI_KEY": KEY}).redact_text(f"x {text}", [])
    assert POLICY.api_key_marker in HttpRedactor(api_keys=[KEY]).text(f"x {text}")
    assert POLICY.api_key_marker in redact_api_keys(f"x {text}", {"TEAM_OPENAI_KEY": KEY})


def test_tool_call_arguments_echoing_a_non_ascii_secret_lose_it() -> None:
    """The model writes its tool call's arguments as JSON text: the secret arrives as ``p\\u00e4ss...``."""
    redactor = Redactor(["token"], salt="salt")
    arguments = json.dumps({"token": SECRET})
    assert "\\u00e4" in arguments
    redacted = redactor.redact_strings({"arguments": arguments}, [SECRET])["arguments"]
    assert json.loads(redacted) == {"token": redactor.marker(SECRET)}


def test_a_sorted_json_text_with_a_secret_key_is_sorted_again() -> None:
    redactor = Redactor(["token"], salt="salt")
    recorded = json.dumps({"id": 7, SECRET: "open"}, sort_keys=True, ensure_ascii=False)  # "id" < "p..."
    replayed = json.dumps({"id": 7, redactor.marker(SECRET): "open"}, sort_keys=True, ensure_ascii=False)
    assert recorded.index('"id"') < recorded.index("päss")
    assert redactor.redact_text(recorded, [SECRET]) == replayed  # scrubbed, then sorted: as the replay sends it
    assert HttpRedactor(secrets=[SECRET], marker=redactor.marker).text(recorded) == replayed
    assert resorted("plain text", "plain <x>") == "plain <x>" and resorted("[1]", "[2]") == "[2]"
    unsorted = json.dumps({"z": 1, SECRET: 2}, ensure_ascii=False)  # not written sorted: order kept
    assert resorted(unsorted, unsorted.replace(SECRET, "<m>")) == unsorted.replace(SECRET, "<m>")


def test_markers_compare_alike_unless_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    one, other = Redactor(["t"], salt="s").marker("real-token"), Redactor(["t"], salt="s").marker("dummy-token")
    assert one != other
    assert POLICY.alike({one: [f"Bearer {one}"]}) == POLICY.alike({other: [f"Bearer {other}"]})
    monkeypatch.delenv(POLICY.exact_markers_env, raising=False)
    assert not POLICY.exact_markers()
    monkeypatch.setenv(POLICY.exact_markers_env, "exact")
    assert POLICY.exact_markers()


def test_the_scan_names_the_form_it_found(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match=r"\(encoded\) at line 1"):
        check_no_secrets([KEY], [], {"report": quote(KEY, safe="")})
    check_no_secrets([KEY], [], {"report": "nothing here"})


def test_short_values_have_no_base64_form_to_find_everywhere() -> None:
    assert all(len(form) >= POLICY.min_base64_fragment for form in POLICY.encoded_forms("x")[1:]
               if form != "x")
    check_no_secrets(["x"], [], {"report": "eA eA== plain"})  # "x" in base64: too short to be evidence


def test_a_deeply_nested_json_text_holding_a_secret_is_scrubbed_without_a_crash() -> None:
    deep = "[" * 100_000 + f'"{SECRET[:4]}-deep"' + "]" * 100_000
    redactor = Redactor(["token"], salt="salt")
    assert SECRET[:4] not in redactor.redact_text(deep, [f"{SECRET[:4]}-deep"])
