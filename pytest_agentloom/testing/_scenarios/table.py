"""Scenario tables: one row per run of a workflow, with what the run must show.

A table is a YAML list, a JSON Lines file or a CSV file whose cells hold JSON
(``id`` and ``workflow`` may be plain text). Each row has::

    id: refund-request              # the test id
    workflow: triage.yaml           # relative to the table's folder
    state: {ticket: "..."}          # added to the workflow's state
    script: {classify: billing}     # scripted replies per step id (forms below)
    allow_unused: true              # replies of the script that no request used do not fail the row
    config: {budget_usd: 0.01}      # config overrides for this run
    resume: {decision: approved, script: {triage: "..."}}  # if the run pauses: resume it, with these replies
    expect:
      status: success
      reason: completed
      steps: {classify: success, escalate: skipped}
      sequence: [classify, route, refund]        # exact order of steps run
      tool_calls: [[lookup_order, {order_id: 42}]]
      outputs: {classify: billing}
      finish_reasons: {triage: done}             # each step's finish_reason (an agent's stop reason)
      decisions: {triage: ["1 proposal get_ticket", "1 check get_ticket ok", ...]}  # Trace.decisions()
      state: {category: billing}                 # deep partial match
      snapshot: true

Script replies take the forms of :class:`~pytest_agentloom.Scripted`: a string,
``{text: ..., input_tokens: ..., output_tokens: ..., finish_reason: ...}``,
``{error: 429, message: ...}``, ``{tool_call: name, arguments: {...}}`` (with ``input_tokens``,
``output_tokens`` and ``cost`` if the call should carry them),
``{misbehave: repeats, tool: name, arguments: {...}}`` (a misbehaving model from
:mod:`pytest_agentloom.providers._scripted`: ``never_finishes``, ``repeats``,
``calls_unknown_tool``, ``invalid_call``, ``claims_done``), or a list of those
for successive calls. With ``resume``, a run that pauses (an approval gate, or
an agent's call that needs approval) is resumed with ``decision`` (``approved``,
``rejected`` or ``cancelled``); ``expect`` is checked on the resumed run, and
``expect.tool_calls`` counts the calls of both parts. A first row ``- defaults: {script: {...},
allow_unused: ...}`` (YAML and JSON Lines) is what every row starts from: a row's ``script`` adds
steps to the default one and replaces the replies of the steps it names. Everything is checked when
the table is read, so a bad table fails collection naming the file, the row and the field.
"""

from __future__ import annotations

import csv
import functools
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._core.json_io import load_json
from ..._core.suggest import did_you_mean
from ..._core.yaml_io import DEFAULT_LIMITS, load_yaml_items, read_text_capped
from ...errors import DataReadError, JsonReadError, ScenarioTableError
from ...providers._script_data import ScriptDataError, replies_from_data
from ...providers._scripted import Scripted

if TYPE_CHECKING:
    from ...engine._outcome.result import WorkflowResult
    from .._harness import AgentloomHarness

__all__ = ["Scenario", "ScenarioTableError", "load_table"]

ROW_KEYS = ("id", "description", "workflow", "state", "script", "allow_unused", "config", "resume", "inject",
            "expect")
#: what a table's first row ``{defaults: {...}}`` may give every row
DEFAULT_KEYS = ("script", "allow_unused")
EXPECT_KEYS = (
    "status", "reason", "steps", "sequence", "tool_calls", "outputs", "finish_reasons", "decisions", "state",
    "snapshot",
)
DECISIONS = ("approved", "rejected", "cancelled")
_SENTINEL = object()


@dataclass(repr=False)
class Scenario:
    """One row of a table, checked. Give it to a test through the ``scenario`` fixture."""

    __test__ = False

    id: str
    source: Path
    line: int
    workflow: str | None = None
    description: str | None = None
    state: dict[str, Any] = field(default_factory=dict)
    script: dict[str, Any] | None = None
    config: dict[str, Any] = field(default_factory=dict)
    expect: dict[str, Any] = field(default_factory=dict)
    resume: dict[str, Any] | None = None
    allow_unused: bool = False
    #: faults injected into the row's run (docs/resilience.md), e.g. ["classify#1=429"]; None: the test's
    inject: list[str] | None = None

    def __repr__(self) -> str:
        return f"<Scenario {self.id!r} {self.location}>"

    @property
    def location(self) -> str:
        """``file:line`` of the row, relative to the current directory when possible."""
        import os

        try:
            return f"{os.path.relpath(self.source)}:{self.line}"
        except ValueError:
            return f"{self.source}:{self.line}"

    def provider(self) -> Scripted | None:
        """A scripted provider built from the row's ``script``; ``None`` when the row has no script."""
        if self.script is None:
            return None
        if _plain_script(self.script):  # text replies are read as they are: nothing to convert
            provider = Scripted(self.script)
            provider.written_as_data = True  # its messages show the table's YAML, not Python
        else:
            provider = Scripted.from_data(self.script)
        provider.allow_unused = self.allow_unused
        return provider

    def workflow_path(self) -> Path | None:
        """The row's workflow, relative to the table's folder (``None`` when the row names none)."""
        return None if self.workflow is None else _workflow_path(self.source, self.workflow)

    def run(self, agentloom: AgentloomHarness) -> WorkflowResult:
        """Run the row's workflow (relative to the table's folder) with its state, script and config."""
        __tracebackhide__ = True
        with agentloom.running_row(self.id, self.source, self.line):
            result = agentloom.run(self.workflow_path(), state=self.state, provider=self.provider(),
                                   inject=self.inject, **self.config)
            if self.resume is None or result.status.value != "paused":
                return result
            script = self.resume.get("script") or {}
            provider = Scripted.from_data(script)
            provider.allow_unused = self.allow_unused
            return agentloom.resume(result, self.resume["decision"], provider=provider)

    def check(self, result: WorkflowResult, agentloom: AgentloomHarness | None = None) -> None:
        """Check every expectation of the row; one AssertionError lists all that failed.

        ``expect.snapshot: true`` needs the harness (pass ``agentloom``).
        """
        __tracebackhide__ = True
        problems = mismatches(self.expect, result)
        snapshot_error = None
        if self.expect.get("snapshot"):
            if agentloom is None:
                problems.append("snapshot: expect.snapshot is true but check() got no agentloom harness")
            else:
                try:
                    agentloom.assert_snapshot(result)
                except AssertionError as exc:
                    snapshot_error = str(exc)
                    problems.append("snapshot: " + snapshot_error.splitlines()[0])
        if not problems:
            return
        count = len(problems)
        lines = [f"Scenario '{self.id}' ({self.location}): {count} expectation{'s' if count != 1 else ''} failed"]
        lines += [f"  - {problem}" for problem in problems]
        if snapshot_error and "\n" in snapshot_error:
            lines.append(snapshot_error.split("\n", 1)[1])
        lines.append("Trace:")
        lines += [f"  {event.line()}" for event in _relevant(result)]
        raise AssertionError("\n".join(lines))


@functools.lru_cache(maxsize=1024)
def _workflow_path(table: Path, workflow: str) -> Path:
    """``workflow`` relative to ``table``'s folder: one object for every row of a table that names the same file,
    so that what a path works out about itself (its text, its hash) is worked out once, not per row."""
    return table.parent / workflow


def _plain_script(script: Mapping[Any, Any]) -> bool:
    """Whether every reply of ``script`` is text (alone or in a list) under a text step id: the script is then
    what :func:`~pytest_agentloom.providers._script_data.replies_from_data` would make of it."""
    for step_id, value in script.items():
        if type(step_id) is not str:
            return False
        if type(value) is not str and not (type(value) is list and all(type(item) is str for item in value)):
            return False
    return True


def _relevant(result: WorkflowResult) -> list[Any]:
    kinds = {"step_start", "step_skip", "step_end", "router_choice", "tool_call", "retry", "run_end"}
    return [event for event in result.trace if event.kind in kinds]


# -- checking ---------------------------------------------------------------------------------------------


def mismatches(expect: Mapping[str, Any], result: WorkflowResult) -> list[str]:
    """Every expectation of ``expect`` that ``result`` does not meet, one line each."""
    problems: list[str] = []
    if "status" in expect and result.status.value != expect["status"]:
        why = f" (step '{result.failed_step}': {result.steps[result.failed_step].error})" if result.failed_step else ""
        problems.append(f"status: expected {expect['status']!r}, got {result.status.value!r}{why}")
    if "reason" in expect and result.reason.value != expect["reason"]:
        problems.append(f"reason: expected {expect['reason']!r}, got {result.reason.value!r}")
    for step_id, wanted in (expect.get("steps") or {}).items():
        step = result.steps.get(step_id)
        got = step.status.value if step else "not in the workflow's results"
        if got != wanted:
            problems.append(f"steps.{step_id}: expected {wanted!r}, got {got!r}")
    if "sequence" in expect:
        ran = result.trace.step_ids()
        if ran != list(expect["sequence"]):
            problems.append(f"sequence: expected {list(expect['sequence'])}, got {ran}")
    if "tool_calls" in expect:
        want = [_tool_pair(item) for item in expect["tool_calls"]]
        got_calls = [(e.data.get("tool"), e.data.get("args")) for e in _tool_events(result)]
        if len(want) != len(got_calls) or any(
            name != got_name or (args is not None and args != got_args)
            for (name, args), (got_name, got_args) in zip(want, got_calls, strict=False)
        ):
            problems.append(f"tool_calls: expected {_pairs(want)}, got {_pairs(got_calls)}")
    for step_id, wanted in (expect.get("finish_reasons") or {}).items():
        step = result.steps.get(step_id)
        got = "no such step result" if step is None else repr(step.finish_reason)
        if step is None or step.finish_reason != wanted:
            problems.append(f"finish_reasons.{step_id}: expected {wanted!r}, got {got}")
    for step_id, wanted in (expect.get("decisions") or {}).items():
        got_lines = _decisions(result, str(step_id))
        if got_lines != list(wanted):
            problems.append(f"decisions.{step_id}: expected {list(wanted)}, got {got_lines}")
    for step_id, wanted in (expect.get("outputs") or {}).items():
        step = result.steps.get(step_id)
        if step is None or step.output != wanted:
            got = "no such step result" if step is None else repr(step.output)
            problems.append(f"outputs.{step_id}: expected {wanted!r}, got {got}")
    if "state" in expect:
        problems += [f"state{line}" for line in partial_mismatches(expect["state"], result.state)]
    return problems


def _decisions(result: WorkflowResult, step_id: str) -> list[str]:
    """An agent step's decisions, those before a pause first when the run was resumed."""
    earlier = result.resumed_from
    return [*(_decisions(earlier, step_id) if earlier is not None else []), *result.trace.decisions(step_id)]


def _tool_events(result: WorkflowResult) -> list[Any]:
    """The tool calls of a run, those before a pause first when it was resumed."""
    earlier = result.resumed_from
    return [*(_tool_events(earlier) if earlier is not None else []), *result.trace.events("tool_call")]


def partial_mismatches(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Deep partial match: dicts need only the expected keys; lists need the same length, item by item."""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return [f"{path}: expected a mapping, got {actual!r}"]
        found = []
        for key, value in expected.items():
            where = f"{path}.{key}"
            if key not in actual:
                found.append(f"{where}: missing (expected {value!r})")
            else:
                found += partial_mismatches(value, actual[key], where)
        return found
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{path}: expected {len(expected)} items, got {len(actual)}: {actual!r}"]
        return [line for index, (want, got) in enumerate(zip(expected, actual, strict=True))
                for line in partial_mismatches(want, got, f"{path}[{index}]")]
    if expected != actual:
        return [f"{path}: expected {expected!r}, got {actual!r}"]
    return []


def _tool_pair(item: Any) -> tuple[str, Any]:
    if isinstance(item, str):
        return item, None
    if isinstance(item, Mapping):
        return item["tool"], item.get("args")
    return item[0], (item[1] if len(item) > 1 else None)


def _pairs(pairs: list[tuple[Any, Any]]) -> str:
    return "[" + ", ".join(name if args is None else f"{name}({json.dumps(args, sort_keys=True)})"
                           for name, args in pairs) + "]"


# -- reading ----------------------------------------------------------------------------------------------


def load_table(path: Path, *, default_workflow: str | None = None) -> list[Scenario]:
    """Read and check a table (``.yaml``/``.yml``, ``.jsonl``, ``.csv``); raise :class:`ScenarioTableError`."""
    try:
        text = read_text_capped(path, max_bytes=DEFAULT_LIMITS.max_bytes, what="table")
    except FileNotFoundError:
        raise ScenarioTableError("the file does not exist", file=path,
                                 hint="check the path; it is relative to the test file's folder.") from None
    except DataReadError as exc:
        raise ScenarioTableError(exc.problem, file=path, hint=exc.hint) from None
    rows = _read_rows(text, path, default_workflow)
    _check_script_steps(rows)
    return rows


def _check_script_steps(rows: list[Scenario]) -> None:
    """A row's ``script`` (and ``resume.script``) keys must be step ids of its workflow: a mistyped one
    (``clasify``) would leave the step without replies and fail the run far from the table's line.

    The rows of a table mostly share one workflow: each file's step ids are read once per table."""
    read: dict[Path | None, list[str] | None] = {}
    for row in rows:
        scripts = [("script", row.script or {}), ("resume.script", (row.resume or {}).get("script") or {})]
        if row.inject:
            _check_inject_targets(row)
        if not any(script for _, script in scripts):
            continue
        path = row.workflow_path()
        steps = read[path] if path in read else read.setdefault(path, _step_ids(path))
        if steps is None:
            continue
        for where, script in scripts:
            for step_id in script:
                if str(step_id) not in steps:
                    hint = did_you_mean(str(step_id), steps)
                    raise ScenarioTableError(
                        f"'{where}' has replies for '{step_id}', which is no step of {row.workflow}", file=row.source,
                        row=row.id, field=f"{where}.{step_id}", line=row.line,
                        hint=(hint + " " if hint else "") + f"the steps are: {', '.join(steps)}.",
                    )


def _check_inject_targets(row: Scenario) -> None:
    """The steps and tools a row's faults name must be its workflow's (tools given in Python are only known
    when the row runs: a name that is neither a step nor a tool of the file is checked then)."""
    from ...errors import UsageError, WorkflowError
    from ...providers._faults import check_faults, parse_faults
    from .._injection import model_steps, tool_names
    from .._workflow_cache import load_cached

    path = row.workflow_path()
    if path is None:
        return
    try:
        workflow = load_cached(path)
    except WorkflowError:
        return
    steps, tools = model_steps(workflow), tool_names(workflow, {})
    for fault in parse_faults(row.inject, "inject"):
        if fault.name in steps or not (fault.tool or tools):  # a tool given in Python: checked at run time
            try:
                check_faults([fault], steps, tools, str(row.workflow))
            except UsageError as exc:
                raise ScenarioTableError(_fault_problem(exc), file=row.source, row=row.id, field="inject",
                                         line=row.line, hint=getattr(exc, "fix", None)) from None


def _step_ids(path: Path | None) -> list[str] | None:
    """Every step id a scripted provider can be asked for by ``path``'s workflow (a subworkflow's steps as
    ``<step>/<child step>``); ``None`` when the workflow does not load (its run names the problem)."""
    from ...errors import WorkflowError
    from .._workflow_cache import load_cached

    if path is None:
        return None
    try:
        workflow = load_cached(path)
    except WorkflowError:
        return None
    return _ids_of(workflow, "")


def _ids_of(workflow: Any, prefix: str) -> list[str]:
    ids: list[str] = []
    for step in workflow.steps:
        ids.append(prefix + step.id)
        child = workflow.compiled.children.get(step.id)
        if child is not None:
            ids += _ids_of(child, f"{prefix}{step.id}/")
    return ids


def _read_rows(text: str, path: Path, default_workflow: str | None) -> list[Scenario]:
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        raw = _read_yaml(text, path)
    elif suffix in (".jsonl", ".ndjson"):
        raw = _read_jsonl(text, path)
    elif suffix == ".csv":
        raw = _read_csv(text, path)
    else:
        raise ScenarioTableError(f"unknown table format '{suffix}'", file=path,
                                 hint="use .yaml (a list of rows), .jsonl (one JSON object a line) or .csv.")
    defaults = _defaults(raw, path)
    if not raw:
        raise ScenarioTableError("the table has no rows", file=path, hint="add at least one row with an 'id'.")
    scenarios: list[Scenario] = []
    seen: dict[str, int] = {}
    for index, (line, row) in enumerate(raw):
        scenario = _check_row(_with_defaults(row, defaults), index, line, path, default_workflow)
        if scenario.id in seen:
            raise ScenarioTableError(
                f"duplicate id '{scenario.id}' (first used on line {seen[scenario.id]})", file=path,
                row=scenario.id, field="id", line=line, hint="give every row its own id.",
            )
        seen[scenario.id] = line
        scenarios.append(scenario)
    return scenarios


def _defaults(raw: list[tuple[int, Any]], path: Path) -> dict[str, Any]:
    """A first row ``{defaults: {script: {...}, allow_unused: ...}}``, taken out of ``raw``: what every row
    starts from (the replies of the steps every row runs the same way, e.g. an agent's upstream steps)."""
    if not raw or not isinstance(raw[0][1], dict) or "defaults" not in raw[0][1]:
        return {}
    line, row = raw.pop(0)
    defaults = row["defaults"]

    def fail(message: str, field: str, hint: str | None = None) -> ScenarioTableError:
        return ScenarioTableError(message, file=path, row="defaults", field=field, line=line, hint=hint)

    if set(row) != {"defaults"} or not isinstance(defaults, dict):
        raise fail("the defaults row holds one key, 'defaults', mapping to what every row starts from",
                   "defaults", f"write - defaults: {{{', '.join(f'{key}: ...' for key in DEFAULT_KEYS)}}}")
    _unknown(defaults, DEFAULT_KEYS, "defaults.", fail)
    if "script" in defaults:
        if not isinstance(defaults["script"], dict):
            raise fail("'defaults.script' must map step ids to replies", "defaults.script")
        _check_script(defaults["script"], "defaults.script", fail)
    if not isinstance(defaults.get("allow_unused", False), bool):
        raise fail("'defaults.allow_unused' must be true or false", "defaults.allow_unused")
    return defaults


def _with_defaults(row: Any, defaults: Mapping[str, Any]) -> Any:
    """``row`` over the table's defaults: a step the row scripts itself takes the row's replies."""
    if not defaults or not isinstance(row, dict):
        return row
    merged = dict(row)
    if "script" in defaults and (row.get("script") is None or isinstance(row.get("script"), dict)):
        merged["script"] = {**defaults["script"], **(row.get("script") or {})}
    if "allow_unused" in defaults and "allow_unused" not in row:
        merged["allow_unused"] = defaults["allow_unused"]
    return merged


def _read_yaml(text: str, path: Path) -> list[tuple[int, Any]]:
    """The rows and the line each starts on (the reader's node tree has the lines)."""
    try:
        data, lines = load_yaml_items(text, file=path)
    except DataReadError as exc:
        raise ScenarioTableError(exc.problem, file=path, line=exc.line, hint=exc.hint) from None
    if data is None:
        return []
    if not isinstance(data, list) or lines is None:
        raise ScenarioTableError(f"a YAML table must be a list of rows, got {type(data).__name__}", file=path,
                                 hint="start each row with '- id: ...'.")
    return list(zip(lines, data, strict=True))


def _read_jsonl(text: str, path: Path) -> list[tuple[int, Any]]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append((number, load_json(line, file=str(path))))
        except JsonReadError as exc:
            raise ScenarioTableError(f"line is not valid JSON: {exc.problem}", file=path, line=number,
                                     hint=exc.hint) from None
    return rows


def _read_csv(text: str, path: Path) -> list[tuple[int, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    rows: list[tuple[int, Any]] = []
    line = 1
    try:
        header = reader.fieldnames or []
    except csv.Error as exc:
        raise ScenarioTableError(f"the CSV header cannot be read: {exc}", file=path, line=1) from None
    _check_header(header, path)
    records = iter(reader)
    while True:
        try:
            record = next(records)
        except StopIteration:
            break
        except csv.Error as exc:  # a cell over the field size limit, a NUL, a broken quote
            raise ScenarioTableError(f"the CSV cannot be read: {_csv_problem(exc)}", file=path,
                                     line=line + 1, hint=_CSV_HINT) from None  # the row that starts there
        row_line = line + 1
        line = reader.line_num
        row: dict[str, Any] = {}
        row_id = record.get("id") or f"#{len(rows) + 1}"
        for column, cell in record.items():
            if column is None:
                raise ScenarioTableError("the row has more cells than the header has columns", file=path,
                                         row=row_id, line=row_line)
            if cell is None or cell.strip() == "":
                continue
            if column in ("id", "workflow", "description"):
                row[column] = cell.strip()
                continue
            try:
                row[column] = load_json(cell, file=str(path))
            except JsonReadError as exc:
                raise ScenarioTableError(
                    f"cell is not valid JSON: {exc.problem}", file=path, row=row_id, field=column, line=row_line,
                    hint="CSV cells other than id, workflow and description hold JSON, e.g. "
                         "\"{\"\"ticket\"\": \"\"hello\"\"}\".",
                ) from None
        rows.append((row_line, row))
    return rows


_CSV_HINT = ("keep each cell under 128 KB (the csv module's limit; put large data in a YAML or JSON Lines "
             "table), and check the quotes.")


def _check_header(header: Sequence[str], path: Path) -> None:
    """Refuse a header that names a column twice: csv.DictReader would silently keep the last cell."""
    seen: set[str] = set()
    for column in header:
        if column in seen:
            raise ScenarioTableError(f"the header names the column '{column}' twice", file=path, line=1,
                                     field=column, hint="give every column its own name; merge the two cells.")
        seen.add(column)


def _csv_problem(exc: csv.Error) -> str:
    text = str(exc)
    return "a cell is larger than 128 KB" if "field larger than field limit" in text else text


def _check_row(row: Any, index: int, line: int, path: Path, default_workflow: str | None) -> Scenario:
    label = f"#{index + 1}"
    if not isinstance(row, dict):
        raise ScenarioTableError(f"a row must be a mapping, got {type(row).__name__}", file=path, row=label,
                                 line=line)
    row_id = row.get("id")
    if not isinstance(row_id, (str, int)) or isinstance(row_id, bool) or str(row_id).strip() == "":
        raise ScenarioTableError("the row has no 'id'", file=path, row=label, field="id", line=line,
                                 hint="add 'id: <unique name>': it becomes the test id.")
    row_id = str(row_id)

    def fail(message: str, field: str, hint: str | None = None) -> ScenarioTableError:
        return ScenarioTableError(message, file=path, row=row_id, field=field, line=line, hint=hint)

    _unknown(row, ROW_KEYS, "", fail)
    workflow = row.get("workflow", default_workflow)
    if workflow is None:
        raise fail("the row has no 'workflow'", "workflow",
                   "add 'workflow: <path to the workflow file>' (relative to the table), or give a default "
                   "with @pytest.mark.agentloom(workflow=...).")
    if not isinstance(workflow, str):
        raise fail(f"'workflow' must be a path string (got {workflow!r})", "workflow")
    for key in ("state", "config", "expect"):
        if key in row and not isinstance(row[key], dict):
            raise fail(f"'{key}' must be a mapping (got {row[key]!r} that is a {type(row[key]).__name__})", key)
    script = row.get("script")
    if script is not None:
        if not isinstance(script, dict):
            raise fail(f"'script' must map step ids to replies (got {type(script).__name__})", "script")
        _check_script(script, "script", fail)
    if "config" in row:
        _check_config(row["config"], fail)
    if not isinstance(row.get("allow_unused", False), bool):
        raise fail(f"'allow_unused' must be true or false (got {row['allow_unused']!r})", "allow_unused")
    resume = row.get("resume")
    if resume is not None:
        if not isinstance(resume, dict) or resume.get("decision") not in DECISIONS:
            raise fail(f"'resume' must be {{decision: {' | '.join(DECISIONS)}, script: {{...}}}} (got {resume!r})",
                       "resume")
        _unknown(resume, ("decision", "script"), "resume.", fail)
        _check_script(resume.get("script") or {}, "resume.script", fail)
    inject = _check_inject(row.get("inject"), fail)
    expect = row.get("expect") or {}
    _unknown(expect, EXPECT_KEYS, "expect.", fail)
    _check_expect(expect, fail)
    return Scenario(
        id=row_id, source=path, line=line, workflow=workflow, description=row.get("description"),
        state=dict(row.get("state") or {}), script=script, config=dict(row.get("config") or {}), expect=expect,
        resume=dict(resume) if resume is not None else None, allow_unused=bool(row.get("allow_unused", False)),
        inject=inject,
    )


def _check_inject(value: Any, fail: Any) -> list[str] | None:
    """A row's ``inject``: a fault (``classify#1=429``) or a list of them, each of a known kind."""
    from ...errors import UsageError
    from ...providers._faults import parse_faults

    if value is None:
        return None
    try:
        faults = parse_faults(value, "inject")
    except UsageError as exc:
        raise fail(_fault_problem(exc), "inject", getattr(exc, "fix", None)) from None
    return [fault.spec for fault in faults]


def _unknown(data: Mapping[str, Any], allowed: tuple[str, ...], prefix: str, fail: Any) -> None:
    for key in data:
        if key not in allowed:
            hint = did_you_mean(str(key), allowed)
            raise fail(f"unknown key '{prefix}{key}'", f"{prefix}{key}",
                       (hint + " " if hint else "") + f"known keys: {', '.join(allowed)}.")


def _check_script(script: Any, where: str, fail: Any) -> None:
    """A row's script, read as ``--script`` files are (:meth:`Scripted.from_data`); a bad reply fails its row.
    Text replies are always good: read once per row of a table at collection, they are not read twice."""
    if isinstance(script, Mapping) and _plain_script(script):
        return
    try:
        replies_from_data(script, where=where)
    except ScriptDataError as exc:
        raise fail(exc.headline, exc.where, exc.hint) from None


def _check_config(config: dict[str, Any], fail: Any) -> None:
    from pydantic import ValidationError

    from ...engine._format.model import WorkflowConfig

    try:
        WorkflowConfig.model_validate(config)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        if first["type"] == "extra_forbidden":
            hint = did_you_mean(key, WorkflowConfig.model_fields)
            known = ", ".join(WorkflowConfig.model_fields)
            raise fail(f"unknown key 'config.{key}'", f"config.{key}",
                       (hint + " " if hint else "") + f"known keys: {known}.") from None
        raise fail(f"invalid value for 'config.{key}': {first['msg']}", f"config.{key}") from None


@functools.cache
def _expected_values() -> tuple[dict[str, list[str]], list[str]]:
    """The values ``expect.status``/``expect.reason`` and ``expect.steps.<id>`` may take (listed once, not per row)."""
    from ...engine._outcome.result import RunStatus, StepStatus, TerminationReason

    choices = {"status": [s.value for s in RunStatus], "reason": [r.value for r in TerminationReason]}
    return choices, [s.value for s in StepStatus]


def _check_expect(expect: dict[str, Any], fail: Any) -> None:
    choices, step_values = _expected_values()
    for key, allowed in choices.items():
        if key in expect and expect[key] not in allowed:
            hint = did_you_mean(str(expect[key]), allowed)
            raise fail(f"'expect.{key}' must be one of {', '.join(allowed)} (got {expect[key]!r})", f"expect.{key}",
                       hint)
    for step_id, status in (expect.get("steps") or {}).items():
        if status not in step_values:
            raise fail(f"'expect.steps.{step_id}' must be one of {', '.join(step_values)} (got {status!r})",
                       f"expect.steps.{step_id}")
    for key in ("steps", "outputs", "finish_reasons", "decisions", "state"):
        if key in expect and not isinstance(expect[key], dict):
            raise fail(f"'expect.{key}' must be a mapping", f"expect.{key}")
    if "sequence" in expect and not (
        isinstance(expect["sequence"], list) and all(isinstance(item, str) for item in expect["sequence"])
    ):
        raise fail("'expect.sequence' must be a list of step ids", "expect.sequence")
    for position, item in enumerate(expect.get("tool_calls") or []):
        ok = isinstance(item, str) or (isinstance(item, dict) and "tool" in item and set(item) <= {"tool", "args"}) or (
            isinstance(item, list) and 1 <= len(item) <= 2 and isinstance(item[0], str)
        )
        if not ok:
            raise fail(f"a tool call must be a name, [name, args] or {{tool: name, args: {{...}}}} (got {item!r})",
                       f"expect.tool_calls[{position}]")
    if "snapshot" in expect and not isinstance(expect["snapshot"], bool):
        raise fail("'expect.snapshot' must be true or false", "expect.snapshot")


def _fault_problem(exc: Exception) -> str:
    """A refused fault's headline as a table's problem: the row and field say where it is."""
    return str(getattr(exc, "headline", exc)).removeprefix("inject: ")
