"""One error tree in errors.py, drawn in its docstring, and one list of codes (ErrorCode) that the package follows."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import pytest_agentloom
from pytest_agentloom.errors import AgentloomError, ErrorCode, StepError

PACKAGE = Path(pytest_agentloom.__file__).resolve().parent
ERRORS_PAGE = PACKAGE.parent / "docs" / "errors.md"  # the errors reference
CODES = {member.value for member in ErrorCode}


# -- every code literal in the package is an ErrorCode ----------------------------------------------------------


def _strings(node: ast.expr | None) -> Iterator[str]:
    """The string constants ``node`` can evaluate to: a literal, either side of ``a if c else b``, ``a or b``,
    and the default of ``getattr(error, "code", "default")``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.IfExp):
        yield from _strings(node.body)
        yield from _strings(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from _strings(value)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
            and len(node.args) == 3:
        yield from _strings(node.args[2])


def _assigned_to_code(node: ast.Assign | ast.AnnAssign) -> Iterator[ast.expr | None]:
    """The values ``node`` assigns to a name ``code``, unpacking included (``code, why = "x", None``)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        if isinstance(target, ast.Name) and target.id == "code":
            yield node.value
        elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
            for element, value in zip(target.elts, node.value.elts, strict=False):
                if isinstance(element, ast.Name) and element.id == "code":
                    yield value


def _code_positions(tree: ast.Module) -> dict[str, int]:
    """Functions of a module with a parameter named ``code``: name -> its position among the call's arguments."""
    positions = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names = [arg.arg for arg in node.args.posonlyargs + node.args.args]
            if names and names[0] in ("self", "cls"):
                names = names[1:]
            if "code" in names:
                positions[node.name] = names.index("code")
    return positions


def code_literals() -> Iterator[tuple[str, int, str]]:
    """(file, line, code) for every string the package gives as a code.

    That is: a ``code=`` or ``error_code=`` keyword, an assignment to ``code`` (a class
    attribute or a local), and a positional argument in the place of a parameter named
    ``code`` of a function of the same module (the runner's ``_skip(step_id, why, code)``).
    """
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = str(path.relative_to(PACKAGE.parent))
        positions = _code_positions(tree)
        for node in ast.walk(tree):
            values: list[ast.expr | None] = []
            if isinstance(node, ast.Call):
                values += [kw.value for kw in node.keywords if kw.arg in ("code", "error_code")]
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
                index = positions.get(name or "")
                if index is not None and index < len(node.args):
                    values.append(node.args[index])
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                values += list(_assigned_to_code(node))
            for value in values:
                for text in _strings(value):
                    yield where, getattr(value, "lineno", 0), text


def test_the_scan_sees_the_codes_it_should() -> None:
    """Guard the scan itself: it finds codes of each kind it looks for, in the engine too."""
    found = {(where, code) for where, _, code in code_literals()}
    assert ("pytest_agentloom/engine/_steps/router.py", "router_no_match") in found  # a code= keyword
    assert ("pytest_agentloom/engine/_run/loop.py", "not_chosen") in found  # positional, into _skip's 'code'
    assert ("pytest_agentloom/engine/_calls/agent_loop.py", "empty_answer") in found  # unpacked into a local
    assert ("pytest_agentloom/engine/_steps/tool.py", "tool_error") in found  # getattr's default


def test_every_code_literal_in_the_package_is_an_error_code() -> None:
    unknown = [f"{where}:{line}: {code!r}" for where, line, code in code_literals() if code not in CODES]
    assert not unknown, (
        "codes that are not in pytest_agentloom.errors.ErrorCode:\n  " + "\n  ".join(unknown)
        + "\nHow to fix: add them to ErrorCode, with a one-line comment, and to docs/errors.md's Error codes table."
    )


def test_agent_stop_reasons_and_check_codes_are_error_codes() -> None:
    """An agent's stop reason becomes its step's error_code; check codes are the ``code`` of trace events."""
    from pytest_agentloom.engine._calls import agent_loop as agents

    failing_stops = set(agents.STOP_REASONS) - {"done", "needs_approval"}  # done succeeds, needs_approval pauses
    assert failing_stops <= CODES, failing_stops - CODES
    assert set(agents.CHECK_CODES) <= CODES, set(agents.CHECK_CODES) - CODES


def test_classes_keep_their_code_as_a_plain_string() -> None:
    """YAML's safe dumper refuses str subclasses, and codes end up in snapshots, tapes and checkpoints."""
    import yaml

    def every_class(cls: type[AgentloomError]) -> Iterator[type[AgentloomError]]:
        yield cls
        for sub in cls.__subclasses__():
            yield from every_class(sub)

    for cls in every_class(AgentloomError):
        assert type(cls.code) is str, cls
    error = StepError("x", code=ErrorCode.TIMEOUT)
    assert type(error.code) is str and error.code == ErrorCode.TIMEOUT == "timeout"
    assert yaml.safe_dump({"code": error.code}) == "code: timeout\n"


def test_error_codes_are_unique_snake_case_and_named_after_their_value() -> None:
    for member in ErrorCode:
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", member.value), member
        assert member.name == member.value.upper(), member


# -- the docs/errors.md table lists exactly the enum ----------------------------------------------------------


def readme_codes() -> list[str]:
    """The first column of the table under the "Error codes" heading of docs/errors.md, in order."""
    text = ERRORS_PAGE.read_text(encoding="utf-8")
    match = re.search(r"^#+ Error codes\n(.*?)(?=^#)", text, flags=re.M | re.S)
    assert match, "docs/errors.md has no 'Error codes' section"
    rows = re.findall(r"^\| `([a-z_]+)` \|", match.group(1), flags=re.M)
    assert rows, "the Error codes section of docs/errors.md has no table rows"
    return rows


def test_the_readme_table_lists_every_error_code_in_order() -> None:
    listed = readme_codes()
    assert len(listed) == len(set(listed)), "a code is listed twice in docs/errors.md"
    missing = [code.value for code in ErrorCode if code.value not in listed]
    extra = [code for code in listed if code not in CODES]
    assert not missing and not extra, f"docs/errors.md Error codes table: missing {missing}, not in ErrorCode {extra}"
    assert listed == [code.value for code in ErrorCode], "docs/errors.md lists the codes in another order"


def test_each_code_has_a_one_line_comment_in_errors_py() -> None:
    source = (PACKAGE / "errors.py").read_text(encoding="utf-8")
    bare = [code.name for code in ErrorCode
            if not re.search(rf'^    {code.name} = "{code.value}"  # \S', source, flags=re.M)]
    assert not bare, f"ErrorCode members without a one-line comment: {bare}"


# -- provider error categories ------------------------------------------------------------------------------------


def test_a_provider_error_leaves_retrying_to_its_status_unless_its_kind_says_never() -> None:
    from pytest_agentloom.errors import ProviderConfigError, ProviderError

    plain = ProviderError("down", status=503, provider="p")
    assert plain.retryable is None and plain.code == "provider_error"
    assert str(plain) == "provider error (HTTP 503): down"
    missing = ProviderConfigError("provider 'p' has no API key.\nHow to fix: export P_KEY=...", provider="p")
    assert missing.retryable is False and missing.code == "missing_credentials" and missing.status is None
    assert str(missing) == "provider 'p' has no API key.\nHow to fix: export P_KEY=..."  # as written, no prefix
    assert isinstance(missing, ProviderError) and not isinstance(missing, StepError)


def test_a_missing_key_fails_its_step_once_with_its_own_code(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_agentloom import VirtualClock, run_workflow
    from pytest_agentloom.engine import parse_workflow
    from pytest_agentloom.providers import OpenAIProvider

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    workflow = parse_workflow("name: t\nconfig: {model: gpt-4o}\nsteps:\n  - {id: a, type: llm_call, prompt: hi}\n")
    result = run_workflow(workflow, provider=OpenAIProvider(base_url="http://127.0.0.1:9/v1"), clock=VirtualClock(),
                          runs_dir=False)
    step = result.steps["a"]
    assert (step.error_code, step.attempts) == ("missing_credentials", 1), step.error


# -- one tree, drawn ------------------------------------------------------------------------------------------------

# Exceptions raised and caught inside the providers, never seen by users; shared by three modules, so not
# _private. Private ones (cli._Usage) are left out of the walk. errors.py's docstring names them all.
INTERNAL_SIGNALS = {"pytest_agentloom.providers._http.HTTPStatusFailure"}


def package_exception_classes(*, internal: bool = False) -> dict[str, type[BaseException]]:
    """Every public exception class defined in a module of the package: ``module.Name`` -> class.

    With ``internal``, the internal signals instead: private names, and :data:`INTERNAL_SIGNALS`.
    """
    import importlib
    import pkgutil

    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(pytest_agentloom.__path__, "pytest_agentloom."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == info.name:
                where = f"{info.name}.{name}"
                if (name.startswith("_") or where in INTERNAL_SIGNALS) == internal:
                    found[where] = value
    return found


def drawn_names() -> list[str]:
    """The class names in the tree drawn at the top of errors.py's docstring."""
    import pytest_agentloom.errors as errors

    doc = errors.__doc__ or ""
    drawing = doc.split("::\n\n", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^ {4}(?:(?:[│ ]   )*[├└]── )?([A-Z]\w+)", drawing, flags=re.M)


def test_the_walk_finds_exceptions_all_over_the_package() -> None:
    """Guard the walk itself: it sees errors.py and the modules beyond it (a provider's internal signal)."""
    assert "pytest_agentloom.errors.CassetteMismatchError" in package_exception_classes()
    assert "pytest_agentloom.providers._http.HTTPStatusFailure" in package_exception_classes(internal=True)


def test_every_exception_class_of_the_package_is_defined_in_errors_py() -> None:
    outside = {where for where, cls in package_exception_classes().items()
               if cls.__module__ != "pytest_agentloom.errors"}
    assert outside == set(), "define these in pytest_agentloom/errors.py (and draw them there)"


def test_every_exception_class_of_the_package_is_an_agentloom_error() -> None:
    strays = [where for where, cls in package_exception_classes().items() if not issubclass(cls, AgentloomError)]
    assert strays == []


def test_the_docstring_draws_every_class_and_only_those() -> None:
    names = drawn_names()
    assert names[0] == "AgentloomError"
    classes = {where.rpartition(".")[2] for where in package_exception_classes()}
    assert sorted(set(names)) == sorted(classes)


def test_the_internal_signals_are_named_in_the_docstring() -> None:
    """They stay where they are, but the docstring says so, so a reader of errors.py knows they exist."""
    import pytest_agentloom.errors as errors

    internal = package_exception_classes(internal=True)
    assert set(internal) >= INTERNAL_SIGNALS
    for where in internal:
        short = where.removeprefix("pytest_agentloom.")
        assert f"``{short}``" in (errors.__doc__ or ""), f"name {short} among the internal signals of errors.py"


def test_each_class_in_errors_py_says_in_one_line_what_it_means() -> None:
    import pytest_agentloom.errors as errors

    for name, cls in vars(errors).items():
        if isinstance(cls, type) and issubclass(cls, BaseException) and cls.__module__ == errors.__name__:
            first = (cls.__doc__ or "").strip().splitlines()
            assert first and first[0].endswith("."), f"{name} needs a one-line docstring"


def test_the_public_errors_are_all_exported() -> None:
    import pytest_agentloom.errors as errors

    defined = {name for name, cls in vars(errors).items()
               if isinstance(cls, type) and issubclass(cls, BaseException) and cls.__module__ == errors.__name__}
    assert defined <= set(errors.__all__)
