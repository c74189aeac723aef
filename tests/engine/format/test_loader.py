"""The loader: every load-time error names the file, the step and the field; valid files load whole."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_agentloom import Workflow, WorkflowError, load_workflow
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.engine._format.model import LLMCallStep, RouterStep, ToolStep

WORKFLOWS = Path(__file__).parent.parent / "workflows"


def write(tmp_path: Path, text: str, name: str = "flow.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load_error(tmp_path: Path, text: str) -> tuple[WorkflowError, Path]:
    path = write(tmp_path, text)
    with pytest.raises(WorkflowError) as info:
        load_workflow(path)
    return info.value, path


def assert_names(err: WorkflowError, path: Path, step: str | None, field: str | None) -> None:
    """The error and its message name the file, the step and the field."""
    message = str(err)
    assert err.file == str(path.resolve())
    assert f"file: {path.resolve()}" in message
    assert err.step_id == step
    assert err.field == field
    if step is not None:
        assert f"step: {step}" in message
    if field is not None:
        assert f"field: {field}" in message


# --------------------------------------------------------------------------- valid files


def test_valid_file_loads_with_one_model_per_step_type() -> None:
    workflow = load_workflow(WORKFLOWS / "triage.yaml")

    assert isinstance(workflow, Workflow)
    assert workflow.name == "triage"
    assert workflow.config.model == "gpt-4o-mini"
    assert [type(step) for step in workflow.steps] == [LLMCallStep, RouterStep, ToolStep, LLMCallStep, ToolStep]
    assert workflow.step("route").targets() == ["file_bug", "answer"]
    assert workflow.source == (WORKFLOWS / "triage.yaml").resolve()


def test_relative_paths_resolve_against_the_workflow_folder_not_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    workflow = load_workflow(WORKFLOWS / "triage.yaml")

    assert workflow.base_dir == WORKFLOWS.resolve()
    assert workflow.resolve_path("prompts/a.txt") == WORKFLOWS.resolve() / "prompts" / "a.txt"
    assert workflow.resolve_path("../x.yaml") == WORKFLOWS.resolve().parent / "x.yaml"
    assert workflow.resolve_path(tmp_path / "abs.txt") == tmp_path / "abs.txt"


def test_load_accepts_a_path_relative_to_the_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", "name: x\nsteps:\n  - {id: a, type: tool, tool_name: t}\n")
    monkeypatch.chdir(tmp_path)

    workflow = load_workflow("sub/flow.yaml")

    assert workflow.base_dir == (tmp_path / "sub").resolve()


def test_the_base_folder_follows_the_file_and_without_one_the_current_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``base_dir`` follows ``source`` (a copy of the workflow at another file: ``with_source``)."""
    workflow = parse_workflow("name: x\nsteps:\n  - {id: a, type: tool, tool_name: t}\n", source=tmp_path / "f.yaml")
    assert workflow.base_dir == tmp_path
    workflow = workflow.with_source(tmp_path / "moved" / "f.yaml")
    assert workflow.base_dir == tmp_path / "moved"
    workflow = workflow.with_source(None)
    monkeypatch.chdir(tmp_path.parent)
    assert workflow.base_dir == Path.cwd()
    monkeypatch.chdir(tmp_path)
    assert workflow.base_dir == tmp_path.resolve()


def test_missing_file_is_a_workflow_error(tmp_path: Path) -> None:
    with pytest.raises(WorkflowError, match="Workflow file not found") as info:
        load_workflow(tmp_path / "nope.yaml")
    assert "nope.yaml" in str(info.value)


def test_a_folder_is_not_a_workflow_file(tmp_path: Path) -> None:
    with pytest.raises(WorkflowError, match="Workflow file cannot be read: the workflow file is a directory") as info:
        load_workflow(tmp_path)
    assert info.value.file == str(tmp_path.resolve())


def test_a_file_that_is_not_utf8_is_a_workflow_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: caf\xe9\n".encode("latin-1"))

    with pytest.raises(WorkflowError, match="Workflow file cannot be read: the workflow file is not UTF-8 text"):
        load_workflow(path)


# --------------------------------------------------------------------------- YAML and top-level shape


def test_yaml_syntax_error_gives_line_and_column() -> None:
    path = WORKFLOWS / "broken_yaml.yaml"
    with pytest.raises(WorkflowError) as info:
        load_workflow(path)
    assert str(info.value).startswith("Invalid YAML at line 5, column 20: mapping values are not allowed")
    assert_names(info.value, path, None, None)
    assert "How to fix:" in str(info.value)


@pytest.mark.parametrize("text", ["- a\n- b\n", "just a string\n", "42\n", ""], ids=["list", "str", "int", "empty"])
def test_a_file_that_is_not_a_mapping_is_rejected(tmp_path: Path, text: str) -> None:
    err, path = load_error(tmp_path, text)
    assert err.headline.startswith("A workflow file must hold a mapping with 'name' and 'steps'")
    assert_names(err, path, None, None)


# --------------------------------------------------------------------------- unknown keys, with hints


@pytest.mark.parametrize(
    ("text", "step", "field", "hint"),
    [
        pytest.param(
            """
            name: x
            stepz: []
            steps: [{id: a, type: tool, tool_name: t}]
            """,
            None, "stepz", "did you mean 'steps'?", id="top-level",
        ),
        pytest.param(
            """
            name: x
            config: {modle: gpt-4o}
            steps: [{id: a, type: tool, tool_name: t}]
            """,
            None, "config.modle", "did you mean 'model'?", id="config",
        ),
        pytest.param(
            """
            name: x
            config: {retry: {backoff_second: 2}}
            steps: [{id: a, type: tool, tool_name: t}]
            """,
            None, "config.retry.backoff_second", "did you mean 'backoff_seconds'?", id="config-retry",
        ),
        pytest.param(
            """
            name: x
            steps: [{id: a, type: llm_call, promt: hi, prompt: hi}]
            """,
            "a", "promt", "did you mean 'prompt'?", id="step",
        ),
        pytest.param(
            """
            name: x
            steps: [{id: a, type: tool, tool_name: t, tool_arg: {}}]
            """,
            "a", "tool_arg", "did you mean 'tool_args'?", id="tool-step",
        ),
        pytest.param(
            """
            name: x
            steps: [{id: a, type: llm_call, prompt: hi, retry: {max_retrys: 2}}]
            """,
            "a", "retry.max_retrys", "did you mean 'max_retries'?", id="step-retry",
        ),
        pytest.param(
            """
            name: x
            steps: [{id: a, type: llm_call, prompt: hi, response_schema: {type: json_schema, schema: {}, shema: {}}}]
            """,
            "a", "response_schema.shema", "did you mean 'schema'?", id="aliased-field",
        ),
        pytest.param(
            """
            name: x
            steps:
              - id: r
                type: router
                conditions: [{expression: "True", target: b, tagret: b}]
              - {id: b, type: tool, tool_name: t}
            """,
            "r", "conditions[0].tagret", "did you mean 'target'?", id="router-condition",
        ),
        pytest.param(
            """
            name: x
            state_schema: {api_key: {redcat: true}}
            steps: [{id: a, type: tool, tool_name: t}]
            """,
            None, "state_schema.api_key.redcat", "did you mean 'redact'?", id="state-schema",
        ),
    ],
)
def test_unknown_keys_are_rejected_with_a_did_you_mean_hint(
    tmp_path: Path, text: str, step: str | None, field: str, hint: str
) -> None:
    err, path = load_error(tmp_path, text)
    key = field.rsplit(".", 1)[-1].split("]")[-1]
    assert err.headline == f"Unknown key '{key}'"
    assert_names(err, path, step, field)
    assert f"How to fix: {hint}" in str(err)


def test_unknown_key_with_nothing_close_lists_the_known_keys(tmp_path: Path) -> None:
    err, _ = load_error(tmp_path, "name: x\nconfig: {zzzzzz: 1}\nsteps: [{id: a, type: tool, tool_name: t}]\n")
    known = (
        "budget_usd, capture_prompts, checkpoint, checkpoint_dir, default_response, embedding_model, fallbacks, "
        "latency_model, latency_ms, max_concurrent_steps, max_retries, model, on_step_failure, provider, providers, "
        "responses_file, retry, sandbox, stream, strict_outputs, timeout"
    )
    assert f"known keys here: {known}." in str(err)


# --------------------------------------------------------------------------- step types and fields


def test_unknown_step_type_suggests_the_closest(tmp_path: Path) -> None:
    err, path = load_error(tmp_path, "name: x\nsteps: [{id: a, type: llm_cal, prompt: hi}]\n")
    assert err.headline == "Unknown step type 'llm_cal'"
    assert_names(err, path, "a", "type")
    assert "did you mean 'llm_call'?" in str(err)


def test_embed_is_a_step_type_and_needs_its_inputs(tmp_path: Path) -> None:
    err, path = load_error(tmp_path, "name: x\nsteps: [{id: a, type: embed}]\n")
    assert err.headline == "Missing required key 'inputs'"
    assert_names(err, path, "a", "inputs")


def test_step_without_type(tmp_path: Path) -> None:
    err, path = load_error(tmp_path, "name: x\nsteps: [{id: a, prompt: hi}]\n")
    assert err.headline == "Step has no 'type'"
    assert_names(err, path, "a", "type")


@pytest.mark.parametrize(
    ("text", "step", "field"),
    [
        pytest.param("steps: [{id: a, type: tool, tool_name: t}]\n", None, "name", id="workflow-name"),
        pytest.param("name: x\n", None, "steps", id="steps"),
        pytest.param("name: x\nsteps: [{id: a, type: tool}]\n", "a", "tool_name", id="tool_name"),
        pytest.param("name: x\nsteps: [{type: tool, tool_name: t}]\n", "steps[0]", "id", id="step-id"),
        pytest.param(
            "name: x\nsteps: [{id: r, type: router, conditions: [{target: r2}]}, {id: r2, type: tool, tool_name: t}]\n",
            "r", "conditions[0].expression", id="condition-expression",
        ),
    ],
)
def test_missing_required_fields(tmp_path: Path, text: str, step: str | None, field: str) -> None:
    err, path = load_error(tmp_path, text)
    key = field.rsplit(".", 1)[-1]
    assert err.headline == f"Missing required key '{key}'"
    assert_names(err, path, step, field)
    assert f"How to fix: add '{key}:' to " in str(err)


def test_invalid_values_name_the_field(tmp_path: Path) -> None:
    err, path = load_error(tmp_path, "name: x\nsteps: [{id: a, type: llm_call, prompt: hi, max_tokens: -1}]\n")
    assert err.headline.startswith("Invalid value for 'max_tokens'")
    assert_names(err, path, "a", "max_tokens")


def test_a_yaml_boolean_where_a_string_belongs_gets_a_quoting_hint(tmp_path: Path) -> None:
    err, path = load_error(tmp_path, "name: x\nsteps: [{id: a, type: router, default: no}]\n")
    assert err.headline == "Invalid value for 'default': Input should be a valid string"
    assert_names(err, path, "a", "default")
    assert "How to fix: YAML reads yes/no/on/off/true/false as booleans; put the value in quotes." in str(err)


def test_empty_steps_is_rejected(tmp_path: Path) -> None:
    err, path = load_error(tmp_path, "name: x\nsteps: []\n")
    assert_names(err, path, None, "steps")


# --------------------------------------------------------------------------- the graph


def test_duplicate_step_ids(tmp_path: Path) -> None:
    err, path = load_error(
        tmp_path, "name: x\nsteps: [{id: a, type: tool, tool_name: t}, {id: a, type: tool, tool_name: u}]\n"
    )
    assert err.headline == "Duplicate step id 'a'"
    assert_names(err, path, "a", "steps[1].id")


def test_depends_on_an_unknown_step_suggests_the_closest(tmp_path: Path) -> None:
    err, path = load_error(
        tmp_path,
        """
        name: x
        steps:
          - {id: fetch, type: tool, tool_name: t}
          - {id: b, type: tool, tool_name: t, depends_on: [fetch, fetc]}
        """,
    )
    assert err.headline == "Step 'b' depends on unknown step 'fetc'"
    assert_names(err, path, "b", "depends_on[1]")
    assert "did you mean 'fetch'?" in str(err)


def test_a_step_depending_on_itself(tmp_path: Path) -> None:
    err, path = load_error(tmp_path, "name: x\nsteps: [{id: a, type: tool, tool_name: t, depends_on: [a]}]\n")
    assert err.headline == "Step 'a' depends on itself"
    assert_names(err, path, "a", "depends_on[0]")


def test_a_cycle_is_named_in_order(tmp_path: Path) -> None:
    err, path = load_error(
        tmp_path,
        """
        name: x
        steps:
          - {id: start, type: tool, tool_name: t}
          - {id: a, type: tool, tool_name: t, depends_on: [start, c]}
          - {id: b, type: tool, tool_name: t, depends_on: [a]}
          - {id: c, type: tool, tool_name: t, depends_on: [b]}
        """,
    )
    assert err.headline == "Dependency cycle: a -> b -> c -> a"
    assert_names(err, path, "a", "depends_on")


def test_a_cycle_through_a_router_target(tmp_path: Path) -> None:
    err, _ = load_error(
        tmp_path,
        """
        name: x
        steps:
          - {id: r, type: router, default: b, depends_on: [b]}
          - {id: b, type: tool, tool_name: t}
        """,
    )
    assert err.headline.startswith("Dependency cycle:")
    assert "r" in err.headline and "b" in err.headline
    assert "a router's targets depend on the router implicitly" in str(err)


@pytest.mark.parametrize(
    ("steps", "field", "headline"),
    [
        pytest.param(
            "[{id: r, type: router, conditions: [{expression: 'True', target: fixx}]},"
            " {id: fix, type: tool, tool_name: t}]",
            "conditions[0].target", "Router 'r' targets unknown step 'fixx'", id="condition-target",
        ),
        pytest.param(
            "[{id: r, type: router, default: fixx}, {id: fix, type: tool, tool_name: t}]",
            "default", "Router 'r' targets unknown step 'fixx'", id="default",
        ),
        pytest.param("[{id: r, type: router, default: r}]", "default", "Router 'r' targets itself", id="itself"),
        pytest.param("[{id: r, type: router}]", "conditions", "Router 'r' has no conditions and no default",
                     id="nothing"),
    ],
)
def test_router_targets(tmp_path: Path, steps: str, field: str, headline: str) -> None:
    err, path = load_error(tmp_path, f"name: x\nsteps: {steps}\n")
    assert err.headline == headline
    assert_names(err, path, "r", field)


@pytest.mark.parametrize(
    ("expression", "why"),
    [
        ("__import__('os')", "function calls are not allowed"),
        ("label.format(1)", "method .format() is not allowed"),
        ("state.__class__", "dunder"),
        ("[x for x in items]", ""),
        ("lambda: 1", ""),
        ("label ==", ""),
    ],
)
def test_router_expressions_outside_the_allowlist_fail_at_load(tmp_path: Path, expression: str, why: str) -> None:
    err, path = load_error(
        tmp_path,
        f"""
        name: x
        steps:
          - id: r
            type: router
            conditions: [{{expression: "{expression}", target: b}}]
          - {{id: b, type: tool, tool_name: t}}
        """,
    )
    assert err.headline.startswith("Router expression not allowed:")
    assert why.lower() in err.headline.lower()
    assert_names(err, path, "r", "conditions[0].expression")


def test_router_expressions_inside_the_allowlist_load(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        name: x
        steps:
          - id: r
            type: router
            conditions:
              - {expression: "steps.c.output.strip().lower() in ['bug', 'crash'] and not done", target: b}
              - {expression: "state.score >= 0.5 or state.items[0].name == 'A'", target: b}
          - {id: b, type: tool, tool_name: t}
        """,
    )
    assert load_workflow(path).step("r").type == "router"


# --------------------------------------------------------------------------- llm_call specifics


def test_llm_call_without_prompt_or_conversation(tmp_path: Path) -> None:
    err, path = load_error(tmp_path, "name: x\nsteps: [{id: ask, type: llm_call, model: gpt-4o}]\n")
    assert err.headline == "llm_call 'ask' has neither 'prompt' nor 'conversation'"
    assert_names(err, path, "ask", "prompt")


@pytest.mark.parametrize("field", ["prompt", "system_prompt"])
@pytest.mark.parametrize(
    ("text", "python_says"),
    [
        ('Return JSON like {"label": "x"}', "Invalid format specifier"),
        ("an open { brace", "expected '}' before end of string"),
        ("a closing } brace", "Single '}' encountered in format string"),
        ("{state.x!z}", "Unknown conversion specifier z"),
    ],
)
def test_broken_braces_fail_at_load(tmp_path: Path, field: str, text: str, python_says: str) -> None:
    other = "system_prompt: ok" if field == "prompt" else "prompt: ok"
    err, path = load_error(
        tmp_path, f"name: x\nsteps:\n  - id: ask\n    type: llm_call\n    {other}\n    {field}: '{text}'\n"
    )
    assert err.headline.startswith("Prompt template error: ")
    assert python_says in err.headline
    assert_names(err, path, "ask", field)
    assert "How to fix: write literal braces twice: {{ and }}." in str(err)


def test_doubled_braces_load(tmp_path: Path) -> None:
    path = write(tmp_path, "name: x\nsteps:\n  - {id: a, type: llm_call, prompt: 'JSON like {{\"label\": \"x\"}}'}\n")
    assert load_workflow(path).step("a").prompt == 'JSON like {{"label": "x"}}'


# --------------------------------------------------------------------------- several problems at once


def test_several_problems_in_one_file_are_all_reported() -> None:
    path = WORKFLOWS / "many_problems.yaml"
    with pytest.raises(WorkflowError) as info:
        load_workflow(path)
    err = info.value
    message = str(err)

    assert message.startswith(f"4 problems in workflow {path.resolve()}:")
    assert [(p.headline, p.step_id, p.field) for p in err.problems] == [
        ("Duplicate step id 'summarize'", "summarize", "steps[1].id"),
        ("Step 'summarize' depends on unknown step 'sumarize'", "summarize", "depends_on[0]"),
        ("Router 'pick' targets unknown step 'nowhere'", "pick", "conditions[0].target"),
        ("llm_call 'summarize' has neither 'prompt' nor 'conversation'", "summarize", "prompt"),
    ]
    assert all(p.file == str(path.resolve()) for p in err.problems)
    assert err.file == str(path.resolve())
    for number, problem in enumerate(err.problems, 1):
        assert f"  {number}. {problem.headline}" in message


def test_several_schema_problems_are_all_reported(tmp_path: Path) -> None:
    err, path = load_error(
        tmp_path,
        """
        name: x
        steps:
          - {id: a, type: llm_call, promt: hi}
          - {id: b, type: tool}
          - {id: c, type: router, conditions: [{expresion: x, target: a}]}
        """,
    )
    assert [(p.headline, p.step_id, p.field) for p in err.problems] == [
        ("Unknown key 'promt'", "a", "promt"),
        ("Missing required key 'tool_name'", "b", "tool_name"),
        ("Missing required key 'expression'", "c", "conditions[0].expression"),
        ("Unknown key 'expresion'", "c", "conditions[0].expresion"),
    ]
    assert str(err).startswith(f"4 problems in workflow {path.resolve()}:")


def test_several_step_type_problems_are_all_reported(tmp_path: Path) -> None:
    err, _ = load_error(tmp_path, "name: x\nsteps: [{id: a, type: embeds}, {id: b, type: bogus}]\n")
    assert [(p.step_id, p.field) for p in err.problems] == [("a", "type"), ("b", "type")]


def test_graph_problems_are_reported_with_schema_and_type_problems(tmp_path: Path) -> None:
    err, path = load_error(
        tmp_path,
        """
        name: x
        steps:
          - {id: a, type: llm_call, prompt: hi, temprature: 1}
          - {id: a, type: tool, tool_name: t, depends_on: [zz]}
          - {id: r, type: router, conditions: [{expression: "True"}, {expression: "True", target: nope}]}
          - {id: e, type: embedd, depends_on: [a]}
        """,
    )
    assert [(p.headline, p.step_id, p.field) for p in err.problems] == [
        ("Unknown step type 'embedd'", "e", "type"),
        ("Unknown key 'temprature'", "a", "temprature"),
        ("Missing required key 'target'", "r", "conditions[0].target"),
        ("Duplicate step id 'a'", "a", "steps[1].id"),
        ("Step 'a' depends on unknown step 'zz'", "a", "depends_on[0]"),
        ("Router 'r' targets unknown step 'nope'", "r", "conditions[1].target"),
    ]
    assert str(err).startswith(f"6 problems in workflow {path.resolve()}:")


def test_a_cycle_is_reported_with_schema_problems(tmp_path: Path) -> None:
    err, _ = load_error(
        tmp_path,
        """
        name: x
        steps:
          - {id: a, type: tool, tool_name: t, depends_on: [b], oops: 1}
          - {id: b, type: router, default: c, depends_on: [a]}
          - {id: c, type: tool, tool_name: t}
        """,
    )
    assert [(p.headline, p.step_id) for p in err.problems] == [
        ("Unknown key 'oops'", "a"), ("Dependency cycle: a -> b -> a", "a"),
    ]


def test_malformed_graph_fields_are_reported_once_as_schema_problems(tmp_path: Path) -> None:
    err, _ = load_error(
        tmp_path,
        """
        name: x
        steps:
          - {id: a, type: tool, tool_name: t, depends_on: b}
          - {id: r, type: router, conditions: go, default: 7}
          - {type: tool, tool_name: t}
          - {id: c, type: tool, tool_name: t, depends_on: [a, 3]}
        """,
    )
    assert [(p.headline.split(":")[0], p.step_id, p.field) for p in err.problems] == [
        ("Invalid value for 'depends_on'", "a", "depends_on"),
        ("Invalid value for 'conditions'", "r", "conditions"),
        ("Invalid value for 'default'", "r", "default"),
        ("Missing required key 'id'", "steps[2]", "id"),
        ("Invalid value for 'depends_on[1]'", "c", "depends_on[1]"),
    ]


def test_router_expressions_and_templates_are_reported_with_schema_problems(tmp_path: Path) -> None:
    err, _ = load_error(
        tmp_path,
        """
        name: x
        steps:
          - {id: a, type: tool, oops: 1}
          - {id: r, type: router, conditions: [{expression: "ok", target: a}, {expression: "x ==", target: a}]}
          - {id: l, type: llm_call, prompt: "Hi {state.name", system_prompt: "fine {state.x}"}
          - {id: g, type: agent, agent: nobody, prompt: "Go {"}
          - {id: n, type: router, conditions: [{expression: 3, target: a}]}
        """,
    )
    assert [(p.headline.split(":")[0], p.step_id, p.field) for p in err.problems] == [
        ("Missing required key 'tool_name'", "a", "tool_name"),
        ("Unknown key 'oops'", "a", "oops"),
        ("Invalid value for 'conditions[0].expression'", "n", "conditions[0].expression"),
        ("Router expression not allowed", "r", "conditions[1].expression"),
        ("Prompt template error", "l", "prompt"),
        ("Prompt template error", "g", "prompt"),
    ]


@pytest.mark.parametrize("kind", ["[]", "{}", "[router]"])
def test_a_step_type_that_is_not_a_string_is_a_workflow_error(tmp_path: Path, kind: str) -> None:
    err, path = load_error(tmp_path, f"name: x\nsteps: [{{id: a, type: {kind}}}, {{id: b, type: tool, tool_name: t}}]")
    assert err.headline.startswith("Unknown step type")
    assert_names(err, path, "a", "type")


# --------------------------------------------------------------------------- parse_workflow


def test_parse_workflow_names_a_string_source() -> None:
    with pytest.raises(WorkflowError) as info:
        parse_workflow("name: x\nsteps: [{id: a, type: tool}]\n")
    assert info.value.file == "<string>"


def test_parse_workflow_with_a_source_anchors_paths(tmp_path: Path) -> None:
    workflow = parse_workflow("name: x\nsteps: [{id: a, type: tool, tool_name: t}]\n", source=tmp_path / "w.yaml")
    assert workflow.resolve_path("data.json") == (tmp_path / "data.json").resolve()
