"""The ``agentloom`` command: run, validate and resume workflows, list checkpointed runs.

::

    agentloom run FILE [--state key=value ...] [--json] [--model M] [--provider P] [--stream]
                       [--checkpoint] [--replay CASSETTE | --record CASSETTE] [--script FILE] [--tools MOD:ATTR]
    agentloom validate FILE [FILE ...]
    agentloom resume RUN_ID [--approve | --reject | --cancel] [--state key=value ...] [--json]
    agentloom runs [--json]
    agentloom visualize FILE [--format mermaid|ascii|svg] [--output PATH]
    agentloom drift [--dir DIR] [--report PATH.md|PATH.html] [-- PYTEST_ARGS ...]
    agentloom drift --adopt TEST [TEST ...] [--dir DIR] [--force]
    agentloom fork FILE --replay CASSETTE --at STEP [--script FILE | --model M] [--state key=value ...]
    agentloom combine SHARD_REPORT ... [--report PATH] [--cov-report json:PATH] [--fail-under N] [--delete-unused]

Exit codes (:data:`EXIT_CODES`):

====  =================================================================
0     the run succeeded (``validate``: every file is valid)
1     the run failed (a step failed)
2     usage error (bad arguments, a ``--state`` without ``=``)
3     invalid workflow (load-time errors; ``validate`` found problems)
4     the run is paused, waiting at an approval gate
5     the run stopped at its budget (``config.budget_usd``)
6     the run stopped at its timeout (``config.timeout``)
7     the run was cancelled
8     the run could not start or resume: checkpoint, cassette or provider setup
====  =================================================================

``drift`` runs pytest and exits with pytest's own status (0: every compared
test passed live; 1: a test failed live or nothing could be compared; 4: a
refused flag or folder); ``drift --adopt`` exits 0 when the files are adopted, 1
when it refuses (a failed live run without ``--force``, an unknown test, a broken
manifest). ``fork`` exits 0 when both runs ended (its verdict is printed), 1 when the
forked run failed, 8 when the cassette cannot be replayed. ``combine`` exits 0 when the shards' reports pass, 1 when
unused files or the coverage bar fail them (or they miss tests), 8 when a report
cannot be used (another version or suite).
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import re
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .engine._entry.options import mock_provider
from .engine._entry.resume_workflow import resume_workflow
from .engine._entry.run_workflow import run_workflow
from .engine._format.loader import load_workflow
from .engine._format.model import Workflow
from .engine._outcome.result import RunStatus, WorkflowResult
from .engine._persist.checkpoints import CheckpointError, list_checkpoints
from .engine._persist.checkpoints import default_checkpoint_dir as _default_checkpoint_dir
from .engine._persist.records import resolve_runs_dir
from .errors import AgentloomError, UnreadDecisionWarning, UsageError, WorkflowError, render_message

__all__ = ["EXIT_CODES", "main", "parse_state_args", "parse_state_value"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INVALID_WORKFLOW = 3
EXIT_PAUSED = 4
EXIT_BUDGET = 5
EXIT_TIMEOUT = 6
EXIT_CANCELLED = 7
EXIT_SETUP = 8

EXIT_CODES: dict[str, int] = {
    "success": EXIT_OK,
    "failed": EXIT_FAILED,
    "usage_error": EXIT_USAGE,
    "invalid_workflow": EXIT_INVALID_WORKFLOW,
    "paused": EXIT_PAUSED,
    "budget_exceeded": EXIT_BUDGET,
    "timeout": EXIT_TIMEOUT,
    "cancelled": EXIT_CANCELLED,
    "setup_error": EXIT_SETUP,
}

_STATUS_EXIT = {
    RunStatus.SUCCESS: EXIT_OK,
    RunStatus.FAILED: EXIT_FAILED,
    RunStatus.PAUSED: EXIT_PAUSED,
    RunStatus.BUDGET_EXCEEDED: EXIT_BUDGET,
    RunStatus.TIMEOUT: EXIT_TIMEOUT,
    RunStatus.CANCELLED: EXIT_CANCELLED,
}

_NUMBER_START = re.compile(r"-?[0-9]")


class _Usage(Exception):
    """A command-line mistake: printed, exit code 2."""


# -- --state key=value ----------------------------------------------------------------------------------------


def parse_state_value(text: str) -> Any:
    """A ``--state`` value: JSON when it looks like JSON and parses, else the text as written.

    Looks like JSON: starts with ``[``, ``{`` or ``"``, with a number (an
    optional ``-`` and a digit), or with ``true``, ``false`` or ``null``.
    """
    looks_like_json = text[:1] in ("[", "{", '"') or bool(_NUMBER_START.match(text)) or text.startswith(
        ("true", "false", "null"))
    if not looks_like_json:
        return text
    try:
        return json.loads(text, parse_constant=_not_json)
    except RecursionError:
        raise _Usage(render_message("--state: the JSON value is nested too deeply.",
                                    hint="flatten it, or quote it as a "
                                         "string", inline=True)) from None
    except ValueError:
        return text


def _not_json(name: str) -> Any:
    """Python's json reads NaN and Infinity, which JSON does not have: such a value stays a string."""
    raise ValueError(f"{name} is not JSON")


def parse_state_args(items: Sequence[str] | None) -> dict[str, Any]:
    """``["k=v", ...]`` as top-level keys; the key is taken as written, dots included."""
    state: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep:
            raise _Usage(render_message(f"--state needs key=value, got {item!r}.",
                                        hint=f"--state {item}=VALUE", inline=True))
        if not key:
            raise _Usage(f"--state needs a key before '=', got {item!r}")
        if key in state:
            print(f"agentloom: --state {key} given more than once; the last value wins", file=sys.stderr)
        state[key] = parse_state_value(value)
    return state


# -- building the run ---------------------------------------------------------------------------------------------


def _load_tools(specs: Sequence[str] | None) -> dict[str, Callable[..., Any]]:
    """``--tools package.module:attr``: a mapping of names to callables, a list of tools, or one callable."""
    tools: dict[str, Callable[..., Any]] = {}
    if specs:
        _import_from_the_current_folder()
    for spec in specs or ():
        module_name, _, attr = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise _Usage(f"--tools {spec}: cannot import {module_name!r}: {exc}") from None
        value = getattr(module, attr or "TOOLS", None)
        if value is None:
            raise _Usage(f"--tools {spec}: module {module_name!r} has no attribute {attr or 'TOOLS'!r}")
        if isinstance(value, Mapping):
            tools.update(value)
        elif isinstance(value, (list, tuple)):
            for item in value:
                tools[getattr(item, "name", None) or item.__name__] = item
        elif callable(value):
            tools[getattr(value, "name", None) or value.__name__] = value
        else:
            raise _Usage(f"--tools {spec}: expected a mapping, a list or a callable, got {type(value).__name__}")
    return tools


def _import_from_the_current_folder() -> None:
    """Put the current folder first on ``sys.path``, as ``python -m`` does: the ``agentloom`` script's own
    ``sys.path`` starts at its ``bin`` folder, so ``--tools acme_tools:TOOLS`` typed in the project folder
    would otherwise need ``PYTHONPATH=.``."""
    here = str(Path.cwd())
    if not any(entry in ("", here) for entry in sys.path):
        sys.path.insert(0, here)


def _scripted(path: str) -> Any:
    """``--script FILE``: a YAML or JSON mapping of step id to reply (or list of replies) for a scripted run.

    The replies take the forms of scenario tables' ``script`` (:meth:`Scripted.from_data`).
    """
    from ._core.yaml_io import read_yaml_file
    from .errors import DataReadError
    from .providers._script_data import ScriptDataError
    from .providers._scripted import Scripted

    try:
        data = read_yaml_file(path)
    except OSError as exc:
        raise _Usage(f"--script {path}: {exc.strerror or exc}") from None
    except DataReadError as exc:
        raise _Usage(f"--script {exc}") from None
    try:
        return Scripted.from_data(data, where=f"--script {path}")
    except ScriptDataError as exc:
        raise _Usage(str(exc)) from None


def _real_provider(workflow: Workflow | None, *, placeholder: bool = False) -> Any:
    if workflow is not None and workflow.config.provider == "mock":
        return mock_provider(workflow)  # replies from config.responses_file
    try:
        from .providers import default_gateway
    except ImportError:
        raise AgentloomError(render_message("no real providers are available in this installation.",
                                            hint="pass --script FILE for a scripted run.", inline=True)) from None
    try:
        return default_gateway(workflow.config if workflow else None, api_key_placeholder=placeholder)
    except UsageError as exc:  # an unknown provider name: the run cannot start (exit code 8)
        raise AgentloomError(render_message(f"{exc}.",
                                            hint="pass --provider with one of those names, or correct "
                                                 "config.provider in the workflow file.")) from None


def _cassette(path: str, *, record: bool, workflow_file: str) -> Any:
    try:
        from .replay._cassette import CassetteConfig, CassetteSession
        from .replay._modes import RecordMode
    except ImportError:
        raise AgentloomError("--replay/--record are not available yet in this installation "
                             "(the cassette module is missing).") from None
    config = CassetteConfig(
        path=Path(path).resolve(), mode=RecordMode.ALL if record else RecordMode.NONE,
        test_id="", record_command=f"agentloom run {workflow_file} --record {path}",
    )
    session = CassetteSession(config)
    if not record:
        session.require_cassette()
    return session


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    if args.model:
        overrides["model"] = args.model
    if args.provider:
        overrides["provider"] = args.provider
    if args.stream:
        overrides["stream"] = True
    if getattr(args, "checkpoint", False):
        overrides["checkpoint"] = True
    return overrides


# -- commands -----------------------------------------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> int:
    state = parse_state_args(args.state)
    tools = _load_tools(args.tools)
    workflow = load_workflow(args.file)
    overrides = _overrides(args)
    if overrides:
        workflow = workflow.with_config(**overrides)
    if args.replay and args.record:
        raise _Usage("--replay and --record exclude each other")
    common: dict[str, Any] = {
        # no --run-id: derived from the definition and the state, so identical invocations share an id
        "state": state, "tools": tools, "run_id": args.run_id,
        "checkpoint_dir": args.checkpoint_dir, "runs_dir": _runs_dir(args),
    }
    cassette_path = args.replay or args.record
    if cassette_path:
        session = _cassette(cassette_path, record=bool(args.record), workflow_file=args.file)
        from .replay._tool_tape import ToolTape, tape_path

        tape = ToolTape(tape_path(cassette_path), recording=bool(args.record), redact=session.redact_text)
        common["tools"] = tape.wrap_run_tools(workflow, tools)
        result = None
        session.open()
        try:
            session.add_run(workflow, state)
            inner = _scripted(args.script) if args.script else _real_provider(workflow, placeholder=bool(args.replay))
            result = run_workflow(workflow, provider=session.wrap(inner), **common)
            if args.replay and not session.mismatches:  # a request not in the cassette already failed its step
                session.check_unused()
                unused_tools = tape.unused_message(how_to_record=f"agentloom run {args.file} --record {cassette_path}")
                if unused_tools:
                    from .errors import UnusedInteractionsError

                    raise UnusedInteractionsError(unused_tools, path=str(tape.path))
        finally:  # a run that failed while recording (a 401, an unreachable host) replaces no good cassette
            good = result is not None and result.status is not RunStatus.FAILED
            session.close(keep=good)
            if args.record and not good:
                print(f"agentloom run: the run failed while recording: {cassette_path} was not written "
                      "(a cassette already there is unchanged)", file=sys.stderr)
        if result.status is not RunStatus.FAILED:
            tape.save()
    else:
        provider = _scripted(args.script) if args.script else _real_provider(workflow)
        result = run_workflow(workflow, provider=provider, **common)
    return _report(result, args)


def _cmd_run_showing_text(args: argparse.Namespace) -> int:
    """``run``; with ``--stream`` (and without ``--json``), model text is printed as it arrives.

    (docs/providers.md: Streaming.)

    No step names: steps that run in parallel interleave. A step that doesn't stream (tools, a scripted
    provider) prints its text whole when it ends. With ``--json`` nothing is printed before the result.
    """
    if not args.stream or args.json:
        return _cmd_run(args)
    from ._core.types import text_listener

    last = [""]
    stream_redactor = _stream_redactor(args)

    def write(text: str) -> None:
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()
            last[0] = text[-1:]

    class Show:
        """The run's text listener: text is redacted as it arrives; a failed attempt's held-back piece is dropped."""

        def __call__(self, chunk: str) -> None:
            write(stream_redactor.feed(chunk))

        def abandon(self) -> None:
            stream_redactor.abandon()

    show = Show()

    def end_line() -> None:  # the summary starts on a line of its own
        write(stream_redactor.flush())
        if last[0] not in ("", "\n"):
            sys.stdout.write("\n")
            last[0] = "\n"

    args.end_streamed_text = end_line
    token = text_listener.set(show)
    try:
        return _cmd_run(args)
    finally:
        text_listener.reset(token)
        end_line()


def _stream_redactor(args: argparse.Namespace) -> Any:
    """Redaction of the streamed text: the run's secrets become their markers and API keys ``<SCRUBBED>``.

    The secrets are those known when the run starts (the file's state and ``--state`` values whose keys are
    redacted), as the run's own redactor finds them; text that could begin one is held back until it cannot.
    """
    from ._redaction.streamed_text import StreamedTextRedactor
    from .engine._format.redaction_patterns import redactor_for

    workflow = load_workflow(args.file)
    redactor = redactor_for(workflow)  # its API keys include those the workflow's api_key_env names
    secrets = redactor.secret_values({**workflow.state, **parse_state_args(args.state)})
    return StreamedTextRedactor(redactor.policy.form_pairs([*((secret, redactor.marker(secret)) for secret in secrets),
                                                            *redactor.policy.api_key_pairs(redactor.api_keys)]))


def _cmd_resume(args: argparse.Namespace) -> int:
    decision = "approved" if args.approve else "rejected" if args.reject else "cancelled" if args.cancel else None
    state = parse_state_args(args.state)
    tools = _load_tools(args.tools)
    workflow = load_workflow(args.workflow) if args.workflow else None
    provider = _scripted(args.script) if args.script else _real_provider(workflow)
    result = resume_workflow(
        args.run_id, decision=decision, state=state, tools=tools, provider=provider, workflow=workflow,
        checkpoint_dir=args.checkpoint_dir, runs_dir=_runs_dir(args),
    )
    return _report(result, args)


def _cmd_validate(args: argparse.Namespace) -> int:
    worst = EXIT_OK
    for file in args.files:
        try:
            with warnings.catch_warnings():  # the load-time warnings are findings below, each printed once
                warnings.simplefilter("ignore", UnreadDecisionWarning)
                workflow = load_workflow(file)
        except WorkflowError as exc:
            count = len(exc.problems) or 1
            print(f"{file}: {count} problem{'s' if count != 1 else ''}", file=sys.stderr)
            print(str(exc), file=sys.stderr)
            worst = EXIT_INVALID_WORKFLOW
        else:
            worst = max(worst, _report_findings(file, workflow, args.model))
    return worst


def _report_findings(file: str, workflow: Workflow, model: str | None) -> int:
    """What would certainly fail at run time (errors: exit 3) or silently misbehave (warnings)."""
    from .engine._format.lint import findings

    found = findings(workflow, model=model)
    errors = [item for item in found if item.severity == "error"]
    for item in found:
        print(f"{file}:{item.line}: {item}" if item.line else f"{file}: {item}", file=sys.stderr)
    if errors:
        print(f"{file}: {len(errors)} problem{'s' if len(errors) != 1 else ''} at run time", file=sys.stderr)
        return EXIT_INVALID_WORKFLOW
    count = len(found)
    noted = f", {count} warning{'s' if count != 1 else ''}" if count else ""
    print(f"{file}: ok ({workflow.name}, {len(workflow.steps)} steps{noted})")
    return EXIT_OK


def _cmd_visualize(args: argparse.Namespace) -> int:
    """Draw one workflow (its layers as columns, dependencies and router branches) to stdout or a file."""
    from .engine._format import diagram

    workflow = load_workflow(args.file)
    draw = {"mermaid": diagram.to_mermaid, "ascii": diagram.to_ascii, "svg": diagram.to_svg}[args.format]
    text = draw(workflow)
    if args.output:
        from ._core.files import write_text_atomic

        write_text_atomic(Path(args.output), text)
        print(f"{args.file}: {args.format} drawing written to {args.output}")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _cmd_runs(args: argparse.Namespace) -> int:
    runs_dir = resolve_runs_dir(_runs_dir(args))
    folder = Path(args.checkpoint_dir).resolve() if args.checkpoint_dir else _default_checkpoint_dir(runs_dir)
    found = list_checkpoints(folder)
    if args.json:
        print(json.dumps(found, indent=2, sort_keys=True))
        return EXIT_OK
    if not found:
        print(f"no checkpointed runs in {folder}")
        return EXIT_OK
    for item in found:
        where = f" at '{item['paused_step']}'" if item.get("paused_step") else ""
        print(f"{item['run_id']}  {item['status']}{where}  {item['workflow']}  {item['saved_at']}  {item['path']}")
    return EXIT_OK


def _cmd_drift(args: argparse.Namespace, now: Callable[[], float] | None = None) -> int:
    """``python -m pytest --agentloom-drift=DIR --agentloom-report=PATH`` over the given pytest arguments
    (docs/live-runs-and-drift.md: Drift check), in a subprocess.

    ``DIR`` defaults to ``.agentloom/drift/<UTC time>`` (a new folder each time, so no earlier check is
    overwritten; ``now`` is the clock that names it), the report to ``DIR/drift-report.md``.
    """
    import subprocess
    import time

    if args.adopt:
        return _adopt(args)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime((now or time.time)()))
    folder = args.dir or str(Path(".agentloom", "drift", stamp))
    report = args.report or str(Path(folder, "drift-report.md"))
    extra = list(args.pytest_args or ())
    if extra[:1] == ["--"]:
        extra = extra[1:]
    print(f"agentloom drift: replaying, then running live into {folder}; report: {report}")
    sys.stdout.flush()
    # pytest in a process of its own: in this one the plugin is imported already, so pytest could not rewrite
    # its asserts and would print a PytestAssertRewriteWarning about it
    command = [sys.executable, "-m", "pytest", *extra, f"--agentloom-drift={folder}", f"--agentloom-report={report}"]
    return subprocess.call(command)


def _adopt(args: argparse.Namespace) -> int:
    """``agentloom drift --adopt TEST ...``: the named tests' live files of a drift check over the committed ones."""
    from .errors import DriftError
    from .testing._live.adopt import adopt, newest_check

    try:
        folder = Path(args.dir) if args.dir else newest_check(Path(".agentloom", "drift"))
        adopted = adopt(folder, args.adopt, force=args.force)
    except (DriftError, OSError) as exc:
        print(f"agentloom drift --adopt: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(f"agentloom drift --adopt: from {folder}")
    print("\n".join(adopted.lines()))
    return EXIT_OK


def _cmd_fork(args: argparse.Namespace) -> int:
    """``agentloom fork FILE --replay CASSETTE --at STEP``: the recorded run, and the same run with every model
    request from ``STEP`` on answered by ``--script`` or the live providers (``--model`` in its place); the two
    compared as a drift check compares them (docs/live-runs-and-drift.md: Forking a recorded run)."""
    from .testing._live.drift_report import verdict_text
    from .testing._live.fork import ForkedProvider, compare_fork
    from .testing._settings.drift_outputs import parse_methods

    workflow = load_workflow(args.file)
    if args.at not in {step.id for step in workflow.steps}:
        from ._core.suggest import did_you_mean

        hint = did_you_mean(args.at, [step.id for step in workflow.steps])
        raise _Usage(f"--at {args.at}: {args.file} has no step '{args.at}'" + (f"; {hint}" if hint else ""))
    methods = parse_methods(args.outputs, "--outputs") if args.outputs else None
    state, tools = parse_state_args(args.state), _load_tools(args.tools)
    then = _scripted(args.script) if args.script else _real_provider(workflow)
    results = []
    for fork in (False, True):  # each run reads the cassette on its own: the recorded run plays it whole
        session = _cassette(args.replay, record=False, workflow_file=args.file)
        from .replay._tool_tape import ToolTape, tape_path

        tape = ToolTape(tape_path(args.replay), recording=False, redact=session.redact_text)
        session.open()
        try:
            session.add_run(workflow, state)
            replayed = session.wrap(_real_provider(workflow, placeholder=True))
            provider = ForkedProvider(replayed, then, args.at, model=args.model) if fork else replayed
            results.append(run_workflow(workflow, provider=provider, state=state, runs_dir=False,
                                        tools=tape.wrap_run_tools(workflow, tools), run_id=f"fork-{int(fork)}"))
        finally:
            session.close(keep=False)
    name = workflow.config.provider if workflow.config.provider != "mock" else None
    forked = compare_fork(args.file, args.file, results[0], results[1], args.at, methods, then=then,
                          provider_name=name)
    print(f"agentloom fork: {args.file} replayed from {args.replay}, forked at '{args.at}': "
          f"{verdict_text(forked.drift)}")
    print("\n".join(f"  {change}" for change in forked.changes) or "  no change")
    return EXIT_FAILED if results[1].status is RunStatus.FAILED else EXIT_OK


def _runs_dir(args: argparse.Namespace) -> Any:
    if getattr(args, "no_record", False):
        return False
    return args.runs_dir


def _resume_command(run_id: str, args: argparse.Namespace) -> str:
    """The ``agentloom resume`` command that continues this run: it passes again what the run was given
    and the checkpoint does not hold (tools, script, folders); ``--model`` and the like are in the checkpoint.
    """
    import shlex

    words = ["agentloom", "resume", run_id, "--approve"]
    for spec in args.tools or ():
        words += ["--tools", spec]
    for flag, value in (("--workflow", getattr(args, "workflow", None)), ("--script", args.script),
                        ("--checkpoint-dir", args.checkpoint_dir), ("--runs-dir", args.runs_dir)):
        if value:
            words += [flag, value]
    if args.no_record:
        words.append("--no-record")
    return shlex.join(words)


def _report(result: WorkflowResult, args: argparse.Namespace) -> int:
    getattr(args, "end_streamed_text", lambda: None)()  # run --stream: end the streamed text's line first
    if args.json:
        print(result.to_json(indent=2))
    else:
        print(f"{result.workflow}: {result.status.value} ({result.reason.value})  run {result.run_id}")
        for step_id, step in result.steps.items():
            detail = f"  {step.error}" if step.error else ""
            print(f"  {step_id}: {step.status.value}{detail}")
        if result.status is RunStatus.PAUSED:
            print(f"paused at approval gate '{result.paused_step}'. Resume with: "
                  f"{_resume_command(result.run_id, args)} (or --reject)")
        if result.checkpoint_path:
            print(f"checkpoint: {result.checkpoint_path}")
        if result.record_path:
            print(f"record: {result.record_path}")
    return _STATUS_EXIT[result.status]


# -- the parser ----------------------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentloom", description="Run, validate and resume AgentLoom workflows.",
        epilog="exit codes: " + ", ".join(f"{code} {name}" for name, code in EXIT_CODES.items()),
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def shared(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--state", action="append", metavar="KEY=VALUE",
                         help="add or replace a top-level state key (repeatable); JSON-looking values are parsed")
        sub.add_argument("--json", action="store_true", help="print the redacted result as JSON")
        sub.add_argument("--tools", action="append", metavar="MODULE:ATTR",
                         help="import tools: a mapping of names to callables, a list of tools or one callable")
        sub.add_argument("--script", metavar="FILE",
                         help="answer llm_call steps from a YAML mapping of step id to replies (no real provider)")
        sub.add_argument("--checkpoint-dir", metavar="DIR", help="where checkpoints are saved and looked up")
        sub.add_argument("--runs-dir", metavar="DIR", help="where run records go (default: $AGENTLOOM_RUNS_DIR "
                         "or ./agentloom_runs)")
        sub.add_argument("--no-record", action="store_true", help="write no run record")

    run = commands.add_parser("run", help="run a workflow file")
    run.add_argument("file", metavar="FILE")
    shared(run)
    run.add_argument("--model", help="replace config.model (steps that name their own model keep it)")
    run.add_argument("--provider", help="replace config.provider")
    run.add_argument("--stream", action="store_true", help="stream model replies (config.stream)")
    run.add_argument("--checkpoint", action="store_true", help="save a checkpoint after each layer")
    run.add_argument("--run-id", help="use this run id instead of the one derived from the workflow and its state")
    run.add_argument("--replay", metavar="CASSETTE", help="answer model calls from a recorded cassette")
    run.add_argument("--record", metavar="CASSETTE", help="call real providers and record them to a cassette")
    run.set_defaults(handler=_cmd_run_showing_text)

    fork = commands.add_parser("fork", help="replay a recorded run up to a step, then run the rest against a "
                               "script or another model, and say what changed")
    fork.add_argument("file", metavar="FILE")
    fork.add_argument("--replay", metavar="CASSETTE", required=True, help="the recorded run's cassette")
    fork.add_argument("--at", metavar="STEP", required=True, help="the step whose first request is forked")
    fork.add_argument("--model", help="the model the forked requests ask for (live providers, API keys needed)")
    fork.add_argument("--outputs", metavar="METHODS", help="how outputs are compared, as drift_outputs "
                      "(default similarity:0.6)")
    fork.add_argument("--state", action="append", metavar="KEY=VALUE", help="as for run")
    fork.add_argument("--tools", action="append", metavar="MODULE:ATTR", help="as for run")
    fork.add_argument("--script", metavar="FILE", help="answer the forked requests from a script (as for run)")
    fork.set_defaults(handler=_cmd_fork)

    validate = commands.add_parser("validate", help="check workflow files without running them")
    validate.add_argument("files", nargs="+", metavar="FILE")
    validate.add_argument("--model", help="the model the runs will be given (as run --model): llm_calls "
                          "without their own model then have one")
    validate.set_defaults(handler=_cmd_validate)

    resume = commands.add_parser("resume", help="continue a paused or checkpointed run")
    resume.add_argument("run_id", metavar="RUN_ID", help="a run id, or a checkpoint file")
    decision = resume.add_mutually_exclusive_group()
    decision.add_argument("--approve", action="store_true", help="approve the gate the run waits at")
    decision.add_argument("--reject", action="store_true", help="reject the gate the run waits at")
    decision.add_argument("--cancel", action="store_true",
                          help="cancel the run (an agent waiting for approval stops as 'cancelled')")
    resume.add_argument("--workflow", metavar="FILE", help="resume with this workflow file instead of the saved one")
    shared(resume)
    resume.set_defaults(handler=_cmd_resume)

    runs = commands.add_parser("runs", help="list checkpointed runs")
    runs.add_argument("--json", action="store_true", help="print the list as JSON")
    runs.add_argument("--checkpoint-dir", metavar="DIR", help="list this folder instead of the default")
    runs.add_argument("--runs-dir", metavar="DIR", help="the runs folder whose checkpoints/ to list")
    runs.set_defaults(handler=_cmd_runs)

    visualize = commands.add_parser("visualize", help="draw a workflow as a graph (Mermaid, text or SVG)")
    visualize.add_argument("file", metavar="FILE")
    visualize.add_argument("--format", choices=("mermaid", "ascii", "svg"), default="mermaid",
                           help="mermaid (the default: renders on code-hosting sites), ascii or svg")
    visualize.add_argument("--output", "-o", metavar="PATH", help="write the drawing to PATH instead of stdout")
    visualize.set_defaults(handler=_cmd_visualize)

    drift = commands.add_parser("drift", help="re-run the recorded tests live into a scratch folder and report "
                                "what changed against their cassettes")
    drift.add_argument("--dir", metavar="DIR", help="the scratch folder (default: .agentloom/drift/<UTC time>)")
    drift.add_argument("--report", metavar="PATH", help="the report, PATH.md or PATH.html "
                       "(default: DIR/drift-report.md)")
    drift.add_argument("--adopt", nargs="+", metavar="TEST", help="instead of a check: copy these tests' live "
                       "cassettes, tool tapes and snapshots of the check in --dir (default: the newest) over the "
                       "committed files")
    drift.add_argument("--force", action="store_true", help="with --adopt: adopt a test whose live run failed too")
    drift.add_argument("pytest_args", nargs=argparse.REMAINDER, metavar="-- PYTEST_ARGS",
                       help="passed to pytest: test paths, -k, -n ... (after --)")
    drift.set_defaults(handler=_cmd_drift)
    _combine_parser(commands)
    return parser


def _cmd_combine(args: argparse.Namespace) -> int:
    """Merge the shard reports of one CI run (docs/ci-and-shards.md): unused files, coverage, the report."""
    from .testing._review.review import ReviewSettings
    from .testing._usage.shard_report import CombineOptions, combine

    here = Path.cwd()
    settings = ReviewSettings.for_combine(args.cov_report, args.report, args.fail_under, here)
    options = CombineOptions(rootdir=Path(args.rootdir or here).resolve(), delete_unused=args.delete_unused,
                             warn_unused=args.warn_unused, show_coverage=args.cov, fail_under=settings.fail_under,
                             json_path=settings.json_path, report_path=settings.report_path)
    lines, status = combine([Path(path) for path in args.reports], options)
    print("\n".join(lines))
    return status


def _combine_parser(commands: Any) -> None:
    combine = commands.add_parser("combine", help="merge the shard reports of a sharded CI run: unused files, "
                                  "coverage and the review report of the whole suite")
    combine.add_argument("reports", nargs="+", metavar="SHARD_REPORT",
                         help="the files pytest --agentloom-shard-report=PATH wrote, one per shard")
    combine.add_argument("--rootdir", metavar="DIR", help="the project's root, as pytest's rootdir (default: .)")
    combine.add_argument("--delete-unused", action="store_true",
                         help="delete the snapshot, cassette and tool tape files no shard's tests used")
    combine.add_argument("--warn-unused", action="store_true", help="only list unused files (they fail otherwise)")
    combine.add_argument("--cov", action="store_true", help="print the combined workflow coverage table")
    combine.add_argument("--fail-under", metavar="PERCENT", help="fail when the combined branch coverage is below")
    combine.add_argument("--cov-report", metavar="json:PATH", help="write the combined coverage map")
    combine.add_argument("--report", metavar="PATH", help="write the review report, PATH.html or PATH.md")
    combine.set_defaults(handler=_cmd_combine)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agentloom`` script; returns the exit code."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return int(exc.code or 0)
    try:
        return int(args.handler(args))
    except _Usage as exc:
        print(f"agentloom {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except WorkflowError as exc:
        print(f"agentloom {args.command}: invalid workflow:\n{exc}", file=sys.stderr)
        return EXIT_INVALID_WORKFLOW
    except UsageError as exc:
        print(f"agentloom {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (CheckpointError, AgentloomError) as exc:
        print(f"agentloom {args.command}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_SETUP


if __name__ == "__main__":
    sys.exit(main())
