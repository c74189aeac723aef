"""Strict by default in tests: missing template keys fail (or warn), unused scripted replies fail; small things."""

from __future__ import annotations

import pytest

TYPO = """\
name: typo
state: {email: {sender: ""}}
steps:
  - id: greet
    type: llm_call
    model: gpt-4o-mini
    prompt: "Reply to {state.emial.sender}"
    output: reply
"""

TYPO_TEST = """
def test_typo(agentloom):
    result = agentloom.run("typo.yaml", state={"email": {"sender": "ada"}}, provider=agentloom.scripted(greet="hi"))
    assert result.ok
"""


def test_a_missing_template_key_fails_by_default_at_the_workflow_line_with_the_closest_key(
        pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", typo=TYPO)
    pytester.makepyfile(test_typo=TYPO_TEST)
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "E*MissingTemplateKeyWarning: Template placeholder {state.emial.sender} rendered empty in step 'greet': "
        "the state has no 'emial.sender'.",
        f"E*  workflow: {pytester.path / 'typo.yaml'}:7",
        "E*How to fix: did you mean 'email.sender'? fix the name in the template, or give the run that key in "
        "its state; to let a missing key only warn, set ini agentloom_missing_template_keys = warn (or "
        "@pytest.mark.agentloom(missing_template_keys='warn')).",
    ], consecutive=True)
    output = result.stdout.str()
    assert "site-packages" not in output and "pytest_agentloom/" not in output
    assert "test_typo.py:2: " in output  # the test's own line that ran it


@pytest.mark.parametrize("how", ["ini", "marker"])
def test_the_ini_or_the_marker_relaxes_it_to_a_warning_filed_at_the_workflow_line(
        pytester: pytest.Pytester, how: str) -> None:
    pytester.makefile(".yaml", typo=TYPO)
    if how == "ini":
        pytester.makeini("[pytest]\nagentloom_missing_template_keys = warn\n")
        pytester.makepyfile(test_typo=TYPO_TEST)
    else:
        pytester.makepyfile(test_typo="import pytest\n\n"
                            "pytestmark = pytest.mark.agentloom(missing_template_keys='warn')\n" + TYPO_TEST)
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines([
        "*typo.yaml:7: MissingTemplateKeyWarning: Template placeholder {state.emial.sender} rendered empty in "
        "step 'greet': the state has no 'emial.sender'.",
        "*How to fix: did you mean 'email.sender'? * it only warns because missing_template_keys is 'warn'.",
    ])
    assert "scenarios" not in result.stdout.str() and "pytest_agentloom" not in result.stdout.str().replace(
        "pytest_agentloom.MissingTemplateKeyWarning", "")


def test_w_error_still_fails_a_relaxed_run(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", typo=TYPO)
    pytester.makeini("[pytest]\nagentloom_missing_template_keys = warn\n")
    pytester.makepyfile(test_typo=TYPO_TEST)
    result = pytester.runpytest_inprocess("-W", "error::pytest_agentloom.MissingTemplateKeyWarning")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E*MissingTemplateKeyWarning: Template placeholder {state.emial.sender} *"])


ROWS = """\
- id: fine
  workflow: typo.yaml
  state: {emial: {sender: ada}}
  script: {greet: hi}
- id: typo
  workflow: typo.yaml
  state: {email: {sender: ada}}
  script: {greet: hi}
"""


@pytest.mark.parametrize("mode", ["error", "warn"])
def test_a_yaml_table_row_names_the_row_and_the_workflow_line_never_the_package(
        pytester: pytest.Pytester, mode: str) -> None:
    pytester.makefile(".yaml", typo=TYPO)
    pytester.makeini(f"[pytest]\nagentloom_missing_template_keys = {mode}\n")
    (pytester.path / "test_rows.agentloom.yaml").write_text(ROWS)
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    output = result.stdout.str()
    lines = [
        "*Template placeholder {state.emial.sender} rendered empty in step 'greet': the state has no 'emial.sender'.",
        f"*  workflow: {pytester.path / 'typo.yaml'}:7",
        f"*  row: typo ({pytester.path / 'test_rows.agentloom.yaml'}:5)",
        "*How to fix: did you mean 'email.sender'? *",
    ]
    if mode == "error":
        result.assert_outcomes(passed=1, failed=1)
    else:
        result.assert_outcomes(passed=2, warnings=1)
        lines[0] = "*typo.yaml:7: MissingTemplateKeyWarning: " + lines[0][1:]
    result.stdout.fnmatch_lines(lines, consecutive=True)
    assert "testing/_scenarios" not in output and "site-packages" not in output


UNUSED = """
import pytest
from pytest_agentloom import Scripted

def test_unused(agentloom):
    agentloom.run("typo.yaml", state={"emial": {"sender": "ada"}},
                  provider=agentloom.scripted(greet=["hi", "again"], other="never asked"))

def test_allowed(agentloom):
    agentloom.run("typo.yaml", state={"emial": {"sender": "ada"}},
                  provider=agentloom.scripted(greet=["hi", "again"], allow_unused=True))

def test_allowed_on_the_class(agentloom):
    agentloom.run("typo.yaml", state={"emial": {"sender": "ada"}},
                  provider=Scripted({"greet": ["hi", "again"]}, allow_unused=True))

def test_failing_anyway(agentloom):
    agentloom.run("typo.yaml", state={"emial": {"sender": "ada"}}, provider=Scripted({"greet": ["hi", "x"]}))
    assert False, "the test's own failure"
"""


def test_unused_scripted_replies_fail_a_passing_test_unless_allowed(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", typo=TYPO)
    pytester.makepyfile(test_unused=UNUSED)
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines([
        "Test test_unused.py::test_unused passed, but its scripted provider kept replies that no request used: "
        "the workflow did less than the script says.",
        "  step 'greet': 1 of 2 scripted replies never used",
        "  step 'other': 1 of 1 scripted reply never used",
        "How to fix: remove the replies the workflow does not need, or keep them on purpose with "
        "agentloom.scripted(..., allow_unused=True) (Scripted(..., allow_unused=True)).",
    ], consecutive=True)
    assert "test_failing_anyway passed, but" not in result.stdout.str()  # its own failure is what it shows


TOOLS = """\
name: tools
steps:
  - id: count
    type: tool
    tool_name: count_words
    tool_args: {text: "a b c"}
    output: words
"""


def test_agentloom_tools_and_the_marker_take_a_list_of_tools(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", tools=TOOLS)
    pytester.makeconftest("""
        import pytest
        from pytest_agentloom.tools import tool

        @tool
        def count_words(text: str) -> int:
            return len(text.split())

        @pytest.fixture
        def agentloom_tools():
            return [count_words]
    """)
    pytester.makepyfile(test_tools="""
        import pytest
        from pytest_agentloom.tools import tool

        @tool(name="count_words")
        def double_count(text: str) -> int:
            return 2 * len(text.split())

        def test_fixture_list(agentloom):
            assert agentloom.run("tools.yaml").state["words"] == 3

        @pytest.mark.agentloom(tools=[double_count])
        def test_marker_list(agentloom):
            assert agentloom.run("tools.yaml").state["words"] == 6
    """)
    pytester.runpytest_inprocess().assert_outcomes(passed=2)


def test_async_tests_await_arun(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", typo=TYPO)
    pytester.makepyfile(test_async="""
        import pytest

        @pytest.fixture
        def anyio_backend():
            return "asyncio"

        @pytest.mark.anyio
        async def test_arun(agentloom):
            result = await agentloom.arun("typo.yaml", state={"emial": {"sender": "ada"}},
                                          provider=agentloom.scripted(greet="hi"))
            assert result.state["reply"] == "hi" and result in agentloom.results
    """)
    pytester.runpytest_inprocess("-p", "anyio").assert_outcomes(passed=1)


CHAIN = """\
name: chain
state: {ticket: "", category: ""}
steps:
  - id: classify
    type: llm_call
    model: gpt-4o-mini
    prompt: "Classify: {state.ticket}"
    output: category
  - id: draft
    type: llm_call
    model: gpt-4o-mini
    depends_on: [classify]
    prompt: "Draft a reply to a {state.category} ticket"
    output: reply
  - id: polish
    type: llm_call
    model: gpt-4o-mini
    depends_on: [draft]
    prompt: "Polish: {state.reply}"
    output: final
"""


def test_only_and_start_at_run_part_of_a_workflow(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", chain=CHAIN)
    pytester.makepyfile(test_part="""
        import pytest
        from pytest_agentloom.errors import UsageError

        def test_only(agentloom):
            result = agentloom.run("chain.yaml", state={"category": "bug"}, only="draft",
                                   provider=agentloom.scripted(draft="Sorry about the bug."))
            result.assert_steps("draft")
            assert result.state["reply"] == "Sorry about the bug."

        def test_start_at(agentloom):
            provider = agentloom.scripted(draft="Sorry.", polish="Sorry!")
            result = agentloom.run("chain.yaml", state={"category": "bug"}, start_at="draft", provider=provider)
            result.assert_steps("draft", "polish")
            assert provider.calls("draft")[0].messages[-1]["content"] == "Draft a reply to a bug ticket"

        def test_unknown_step(agentloom):
            with pytest.raises(UsageError, match="only='drfat', which is no step of workflow 'chain'"):
                agentloom.run("chain.yaml", only="drfat", provider=agentloom.scripted())
    """)
    pytester.runpytest_inprocess().assert_outcomes(passed=3)
