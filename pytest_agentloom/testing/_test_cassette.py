"""The plugin's side of cassettes: settings, one cassette per test, and what the terminal summary says.

The hooks in :mod:`pytest_agentloom.plugin` call into this module in one line
each. Settings (precedence: command line, then ini, then default):

- ``--agentloom-cassette-dir`` / ini ``agentloom_cassette_dir``: the cassette
  folder, relative to the rootdir (default ``cassettes``). A test's cassette is
  ``<dir>/<test file path>/<test name>[<param id>].yaml``.
- ``--agentloom-record``: re-record the selected tests (``all``).
- ``--agentloom-record-mode``: ``none`` (the default), ``once``,
  ``new_episodes`` or ``all``; it wins over ``--agentloom-record``.

- ``--agentloom-live`` (see :mod:`._settings.live`): the same recording session in mode
  ``all``, which writes nothing; with ``--agentloom-record-repetitions`` each
  repetition writes ``<dir>/<test file path>/<test name>/<K>.yaml``, which
  ``--agentloom-replay-repetition=K`` replays.

**CI.** Under ``CI=true`` (also ``1``/``yes``) recording is refused unless the
record flag was typed on the command line itself: a flag that only comes from
``addopts`` or ``PYTEST_ADDOPTS`` does not count, so a stray setting can never
make a CI job call live providers, while a deliberate ``pytest --agentloom-record``
in a CI job still records. ``--agentloom-live`` follows the same rule (:func:`refuse_under_ci`).
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import (
    HINT_PREFIX,
    LiveRefusedError,
    RecordingRefusedError,
    UnusedInteractionsError,
    UsageError,
    render_message,
)
from ..replay._modes import RecordMode, parse_record_mode
from ._settings.live import LIVE_FLAGS, LiveSettings

if TYPE_CHECKING:
    import pytest

    from .._core.types import Provider
    from ..engine._format.model import Workflow
    from ..replay._cassette import CassetteSession

__all__ = ["MODEL_STEP_TYPES", "ReplaySettings", "ReplaySummary", "TestCassette", "ci_is_set"]

#: Step types that call a model, so a run of a workflow with one of them needs a cassette.
MODEL_STEP_TYPES = ("llm_call", "agent")
STALE_PROPERTY = "agentloom_stale_cassette"
WRITTEN_PROPERTY = "agentloom_cassette_written"
DROPPED_PROPERTY = "agentloom_cassette_not_written"  # "<path>: <why>"
UNCHANGED_PROPERTY = "agentloom_cassette_unchanged"  # re-recorded, and the file on disk already said the same
REMOVED_PROPERTY = "agentloom_cassette_removed"  # re-recorded, no request sent: the old file went
EXPIRED_PROPERTY = "agentloom_cassette_expired"  # older than its max age: "<what>, <on_expiry>"
RECORD_FLAGS = ("--agentloom-record", "--agentloom-record-mode")


def ci_is_set(env: Mapping[str, str] | None = None) -> bool:
    """Whether ``CI`` says this is a CI job (``true``, ``1`` or ``yes``, any case)."""
    return (os.environ if env is None else env).get("CI", "").strip().lower() in ("true", "1", "yes")


def _typed_on_command_line(args: tuple[str, ...] | list[str], flags: tuple[str, ...]) -> bool:
    return any(arg == flag or arg.startswith(flag + "=") for arg in args for flag in flags)


def refuse_under_ci(config: pytest.Config, env: Mapping[str, str] | None, *, flags: tuple[str, ...],
                    error: type[RecordingRefusedError], headline: str, hint: str) -> None:
    """Under ``CI=true``, a ``pytest.UsageError`` unless one of ``flags`` was typed on the command line itself
    (a flag that comes from ``addopts`` or ``PYTEST_ADDOPTS`` does not count): recording and live runs alike.
    """
    import pytest

    if ci_is_set(env) and not _typed_on_command_line(config.invocation_params.args, flags):
        raise pytest.UsageError(str(error(render_message(headline, hint=hint))))


@dataclass
class ReplaySettings:
    """Cassette settings for one pytest session, validated once in ``pytest_configure``."""

    rootdir: Path
    cassette_dir: Path
    mode: RecordMode = RecordMode.NONE
    owners: dict[str, str] = field(default_factory=dict)  # cassette and tape files -> the test using them
    #: ``--agentloom-live`` and the repetition cassettes; a live session records in mode ``all`` and writes
    #: nothing unless asked to keep each repetition
    live: LiveSettings = field(default_factory=lambda: LiveSettings())
    #: write the recording of a test that failed too (a drift check's scratch folder: the failure is the news)
    keep_failed: bool = False

    @classmethod
    def from_config(cls, config: pytest.Config, env: Mapping[str, str] | None = None) -> ReplaySettings:
        """Read the options; raises ``pytest.UsageError`` for a bad mode or recording refused under CI."""
        import pytest

        from ._settings.option_table import read_setting

        rootdir = Path(config.rootpath)
        folder = Path(os.fspath(read_setting(config, "cassette_dir") or "cassettes")).expanduser()
        cassette_dir = folder if folder.is_absolute() else rootdir / folder
        raw_mode = read_setting(config, "record_mode")
        try:
            if raw_mode not in (None, ""):
                mode = parse_record_mode(raw_mode, source="--agentloom-record-mode")
            else:
                mode = RecordMode.ALL if read_setting(config, "record") else RecordMode.NONE
        except UsageError as exc:
            raise pytest.UsageError(str(exc)) from None
        if mode.records:
            refuse_under_ci(
                config, env, flags=RECORD_FLAGS, error=RecordingRefusedError,
                headline=f"Recording cassettes (record mode {mode.value}) is refused under CI=true: the record flag "
                         "does not come from the command line itself (addopts or PYTEST_ADDOPTS set it).",
                hint="remove the flag from addopts/PYTEST_ADDOPTS so CI replays, or, to record in CI on purpose, "
                     "type it on the command line: pytest --agentloom-record ...",
            )
        live = LiveSettings.from_config(config, mode)
        if live.live:
            refuse_under_ci(
                config, env, flags=LIVE_FLAGS, error=LiveRefusedError,
                headline="Live provider calls (--agentloom-live) are refused under CI=true: the flag does not come "
                         "from the command line itself (addopts or PYTEST_ADDOPTS set it).",
                hint="remove --agentloom-live from addopts/PYTEST_ADDOPTS so CI replays, or, to run live in CI on "
                     "purpose, type it on the command line: pytest --agentloom-live ...",
            )
        return cls(rootdir=rootdir, cassette_dir=cassette_dir, mode=RecordMode.ALL if live.live else mode, live=live)

    def cassette_path(self, item: pytest.Item) -> Path:
        """``<cassette dir>/<test file relative to the rootdir>/<test name>[<param id>].yaml``."""
        from ..replay._cassette import cassette_name

        relative = _relative_test_path(str(item.path), str(self.rootdir))
        parts = item.nodeid.split("::")[1:] or [item.name]
        return self.cassette_dir / relative / f"{cassette_name(parts)}.yaml"

    def claim(self, item: pytest.Item) -> None:
        """Note that ``item`` uses its cassette and tool tape; raise FileNameClashError if another test does."""
        from ..replay._tool_tape import tape_path
        from ._snapshots.compare import claim_file

        path = self.cassette_path(item)
        claim_file(self.owners, path, item.nodeid, what="cassette")
        claim_file(self.owners, tape_path(path), item.nodeid, what="tool tape")

    def record_command(self, item: pytest.Item) -> str:
        if self.live.replay_repetition is not None:
            return (f"pytest {shlex.quote(item.nodeid)} --agentloom-live "
                    f"--agentloom-repeat={self.live.replay_repetition} --agentloom-record-repetitions")
        return f"pytest {shlex.quote(item.nodeid)} --agentloom-record"

    def repetition_path(self, item: pytest.Item, repetition: int) -> Path:
        """The cassette of one repetition of a live run: ``<cassette dir>/<test file>/<test name>/<K>.yaml``."""
        path = self.cassette_path(item)
        return path.with_name(path.name.removesuffix(".yaml")) / f"{repetition}.yaml"


def calls_a_model_first(workflow: Workflow) -> bool:
    """Whether a step that runs first (it waits for no other, nor for a router's choice) calls a model.

    Such a run sends a request for sure, so a missing cassette fails the test before anything runs. Any
    other run (``start_at=`` a router, only tool steps) may send none: it needs no cassette file, and a
    request it does send fails its step with the same "no cassette" message.
    """
    from ..engine._format.graph import dependency_graph

    graph = dependency_graph(workflow)
    return any(step.type in MODEL_STEP_TYPES and not graph.get(step.id) for step in workflow.steps)


@functools.lru_cache(maxsize=1024)
def _relative_test_path(test_file: str, rootdir: str) -> Path:
    """A test file's path from the rootdir (its name alone outside it), worked out once per file: the
    rows of a 1,000-row table share one file, and resolving both paths for every row was a third of its setup."""
    try:
        return Path(test_file).resolve().relative_to(Path(rootdir).resolve())
    except ValueError:
        return Path(Path(test_file).name)




@dataclass(frozen=True)
class CassetteOptions:
    """What a test's markers and the ini say about writing and aging its cassette (see the module docs)."""

    response_ignore: tuple[str, ...] = ()
    before_record_response: Any = None  # a callable, or None
    max_age: float | None = None  # seconds
    max_age_text: str = ""
    on_expiry: str = "warn"

    @classmethod
    def read(cls, setting: Callable[[str], tuple[Any, str]]) -> CassetteOptions:
        """From ``setting(name) -> (value, where it came from)``; raises :class:`UsageError` naming the source."""
        hook, where = setting("before_record_response")
        if isinstance(hook, str) and hook.strip():
            hook = _imported(hook.strip(), where)
        elif hook is not None and not callable(hook):
            raise UsageError(render_message(f"{where} must be a function (got {hook!r}).",
                                            hint="pass a function(response) -> response, or 'module:function'."))
        from ._settings.option_table import on_expiry_mode, parse_age

        raw_age, where_age = setting("cassette_max_age")
        age = parse_age(raw_age, where_age) if raw_age not in (None, "") else None
        on_expiry = on_expiry_mode(*setting("cassette_on_expiry"))
        return cls(response_ignore=tuple(setting("cassette_response_ignore")[0] or ()), before_record_response=hook,
                   max_age=age, max_age_text=str(raw_age or "").strip(), on_expiry=on_expiry)


def _imported(name: str, where: str) -> Any:
    """The function ``'package.module:function'`` names, importable from the rootdir."""
    import importlib

    module, _, attribute = name.partition(":")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError, ValueError) as exc:
        found, problem = None, f"cannot be imported ({exc})"
    else:
        problem = "is not a function"
    if not callable(found):
        raise UsageError(render_message(f"{where}: {name!r} {problem}.",
                                        hint="name a function as 'package.module:function', importable from the "
                                             "rootdir."))
    return found


@dataclass
class TestCassette:
    """The cassette of one test, claimed (see :meth:`ReplaySettings.claim`) and opened at the first run that uses
    the default provider or its tool recording."""

    __test__ = False

    settings: ReplaySettings
    item: pytest.Item
    #: body paths to ignore and extra matchers, from the marker or ini (see :mod:`._settings.option_table`)
    matching: tuple[tuple[str, ...], tuple[Any, ...]] = ((), ())
    session: CassetteSession | None = None
    tape: Any = None  # the ToolTape of the tools with side effects, made at the first run
    #: the repetition of a live run this cassette belongs to (1, 2, ...), or ``None`` outside a live run
    repetition: int | None = None
    #: response filters and age, from the marker or ini
    options: CassetteOptions = field(default_factory=CassetteOptions)
    #: the record mode of this test: the session's, or ``all`` when an expired cassette is re-recorded
    mode_override: RecordMode | None = None
    expired: str = ""  # "<cassette> (recorded ..., N days ago; max age ...)" once found too old
    #: another test's cassette read instead of this test's (a fork of it: ``agentloom.fork(cassette=...)``)
    path_override: Path | None = None

    @property
    def mode(self) -> RecordMode:
        return self.mode_override or self.settings.mode

    @property
    def path(self) -> Path:
        """The test's cassette; a repetition's own (``<test>/<K>.yaml``) when recording or replaying one."""
        live = self.settings.live
        if self.path_override is not None:
            return self.path_override
        if self.repetition is not None and (live.record_repetitions or live.replay_all):
            return self.settings.repetition_path(self.item, self.repetition)
        if live.replay_repetition is not None:
            return self.settings.repetition_path(self.item, live.replay_repetition)
        return self.settings.cassette_path(self.item)

    def _session(self) -> CassetteSession:
        if self.session is None:
            from ..replay._cassette import CassetteConfig, CassetteSession
            from ..replay._matchers import DEFAULT_MATCH_ON

            # claimed at first use: a test that never uses its cassette (a scripted table row) has no file
            # that could clash with another test's, and finding the name cost each such test setup time
            self.settings.claim(self.item)
            ignore, extra = self.matching
            config = CassetteConfig(
                path=self.path, mode=self.mode, test_id=self.item.nodeid,
                record_command=self.settings.record_command(self.item), root=self.settings.rootdir,
                match_on=(*DEFAULT_MATCH_ON, *extra), ignore=tuple(ignore),
                response_ignore=self.options.response_ignore,
                before_record_response=self.options.before_record_response, max_age=self.options.max_age,
            )
            self.session = CassetteSession(config)
        return self.session

    def provider(self, workflow: Workflow, state: Mapping[str, Any] | None = None) -> Provider:
        """The real gateway wrapped in this test's cassette (placeholder keys when nothing can be recorded)."""
        __tracebackhide__ = True
        from ..providers._factory import default_gateway

        session = self._opened(workflow, state)
        replay_only = self.mode is RecordMode.NONE or (self.mode is RecordMode.ONCE and session.loaded_count > 0)
        return session.wrap(default_gateway(workflow.config, api_key_placeholder=replay_only))

    def wrap(self, provider: Provider, workflow: Workflow, state: Mapping[str, Any] | None = None) -> Provider:
        """A live provider the test built itself (a ``Gateway`` with routes, an ``OpenAIProvider``...) wrapped in
        this test's cassette, as :meth:`provider` wraps the default gateway: recorded with
        ``--agentloom-record``, replayed otherwise. A key it lacks in a replay is the placeholder
        (:func:`~pytest_agentloom.providers._common.required_unless_replay`)."""
        __tracebackhide__ = True
        return self._opened(workflow, state).wrap(provider)

    def _opened(self, workflow: Workflow, state: Mapping[str, Any] | None) -> CassetteSession:
        """This test's cassette session, open, its age checked, with ``workflow``'s run (its secrets) noted."""
        __tracebackhide__ = True
        session = self._session()
        if calls_a_model_first(workflow):  # else a missing cassette fails the first request, if one is sent
            session.require_cassette()
        session.open()
        if self.options.max_age is not None and not self.expired and self.mode_override is None:
            session = self._check_age(session)
        session.add_run(workflow, state)
        return session

    def _check_age(self, session: CassetteSession) -> CassetteSession:
        """Apply ``on_expiry`` to a cassette about to be replayed that is older than ``max_age``: note it (warn),
        fail the test, or re-record it (a new session in mode ``all``; refused under CI, where it fails)."""
        __tracebackhide__ = True
        from ..replay._provenance import parse_time

        provenance = session.provenance
        if provenance is None or not session.replays_only:
            return session
        recorded = parse_time(provenance.recorded_at)
        now = session.config.clock()
        if recorded is None or (now - recorded).total_seconds() <= float(self.options.max_age or 0):
            return session
        days = (now - recorded).total_seconds() / 86400
        self.expired = (f"{session.config.display_path} (recorded {provenance.recorded_at}, {days:.0f} days ago; "
                        f"max age {self.options.max_age_text})")
        how = self.options.on_expiry
        if how == "warn":
            return session
        if how == "re-record" and not ci_is_set():
            session.close(keep=False)
            self.mode_override, self.session = RecordMode.ALL, None
            fresh = self._session()
            fresh.open()
            return fresh
        from ..errors import CassetteExpiredError

        raise CassetteExpiredError(render_message(
            f"Test {self.item.nodeid}: its cassette is older than its max age: {self.expired}.",
            [("on_expiry", f"{how}{' (re-recording is refused under CI=true)' if how == 're-record' else ''}")],
            hint="re-record it against live providers, then commit the file:\n  "
                 f"{self.settings.record_command(self.item)}",
        ), path=str(session.config.path))
    def describe(self) -> str:
        """This cassette as a failed test's report names it: its file, and whether its calls were recorded."""
        shown = self.session.config.display_path if self.session is not None else str(self.path)
        return f"{shown} ({'recording' if self.recording() else 'replaying'}, record mode {self.mode.value})"

    def recording(self) -> bool:
        """Whether a call made now goes to a live provider and into the cassette, rather than replaying."""
        mode = self.mode
        return mode is RecordMode.ALL or (mode is RecordMode.ONCE and not self.path.is_file())

    def tools(self, workflow: Workflow, tools: Mapping[str, Any], allow_real: Any = False,
              compare: tuple[str, ...] = (), where: str = "") -> Mapping[str, Any]:
        """The run's tools, the built-ins included, those with side effects going through the test's tool
        recording (``<cassette>.tools.yaml``): run and recorded while the cassette records, replayed from
        the recording (not run) while it replays. ``compare`` (``--agentloom-live-tools``) names tools with
        side effects that run for real over a replay, each result held against the recording; ``all`` in it
        holds the results of the tools without side effects against the recorded conversation too.
        """
        from ..replay._tool_tape import ToolTape, tape_path
        from ..tools._builtins import run_tools

        if self.tape is None:
            replaying = self.mode is RecordMode.NONE or (self.mode is RecordMode.ONCE and self.path.is_file())
            self.tape = ToolTape(tape_path(self.path), recording=not replaying, redact=self._session().redact_text,
                                 append=self.mode is RecordMode.NEW_EPISODES)
        self.tape.allow_real = allow_real if isinstance(allow_real, bool) else frozenset(allow_real)
        registry = run_tools(workflow.config.sandbox, workflow.base_dir, tools)
        self.tape.compare = _compared_tools(compare, registry, where) if compare else frozenset()
        everything = ALL_TOOLS in compare
        self._session().compare_tool_results = everything
        if everything:
            _note_unnamed(registry, self.tape.compare, where)
        return self.tape.wrap(registry)

    def release(self) -> None:
        """End vcrpy's interception if a run left the cassette open after :meth:`finish` (or with no call
        phase at all), writing nothing: at the end of the test's teardown."""
        if self.session is not None:
            self.session.close(keep=False)

    def finish(self, passed: bool, *, snapshot_changed: bool = False) -> tuple[str | None, list[tuple[str, str]]]:
        """End of the test's call: write the cassette if recording; the unused-interaction failure, if any,
        and the user properties (stale flag, cassette written, kept, removed or not written and why).
        """
        session = self.session
        if session is None or not session.opened:
            return None, []
        properties: list[tuple[str, str]] = []
        stale = session.stale_workflows()
        if stale:
            properties.append((STALE_PROPERTY, f"{session.config.display_path} (changed: {', '.join(stale)})"))
        if self.expired:
            properties.append((EXPIRED_PROPERTY, f"{self.expired}, {self.options.on_expiry}"))
        failure = None
        if passed and session.unsent:  # the replay stopped: the installed vcrpy intercepts nothing here
            failure = str(session.unsent[0])
        elif passed and session.mismatches:
            # the step failed with this message; a test that did not look at the result still fails
            more = len(session.mismatches) - 1
            failure = str(session.mismatches[0]) + (f"\n({more} more request(s) were not in the cassette)"
                                                    if more else "")
        elif passed:
            try:
                session.check_unused()
            except UnusedInteractionsError as exc:
                failure = str(exc)
        if passed and failure is None and self.tape is not None:
            failure = self.tape.unused_message(self.item.nodeid, self.settings.record_command(self.item))
        recorded = session.needs_write()
        # a test that failed while recording (a 401, repeated 500s, an unreachable host, a failed assertion)
        # writes nothing: the committed cassette and tool tape stay as they were. A live run keeps nothing,
        # unless each repetition is recorded: then it keeps them all, failed ones too (they are what to study)
        live = self.settings.live
        keep = live.record_repetitions if live.live else passed or self.settings.keep_failed
        shown = session.config.display_path
        if session.close(keep=keep):
            properties.append((WRITTEN_PROPERTY, shown))
        elif session.removed:
            properties.append((REMOVED_PROPERTY, shown))
        elif recorded and keep and not live.live:
            properties.append((UNCHANGED_PROPERTY, shown))
        elif recorded and not passed and not live.live:
            properties.append((DROPPED_PROPERTY, f"{shown}: {self._not_written_because(snapshot_changed)}"))
        if keep and self.tape is not None:
            self.tape.save()  # only when recording, and only if a tool with side effects ran
        return failure, properties

    def _not_written_because(self, snapshot_changed: bool) -> str:
        if snapshot_changed:
            from ._snapshots.compare import record_and_update_command

            return ("its snapshot changed; if that is intended, record and update together: "
                    f"{record_and_update_command(self.item.nodeid)}")
        return "the test failed while recording (its report says why)"


@dataclass
class ReplaySummary:
    """What the terminal summary says about cassettes, gathered from reports (so it works under xdist)."""

    stale: list[str] = field(default_factory=list)
    stale_tests: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)
    expired_tests: list[str] = field(default_factory=list)

    def add_report(self, report: Any) -> None:
        if getattr(report, "when", None) != "call":
            return
        lists = {WRITTEN_PROPERTY: self.written, DROPPED_PROPERTY: self.dropped,
                 UNCHANGED_PROPERTY: self.unchanged, REMOVED_PROPERTY: self.removed}
        for name, value in getattr(report, "user_properties", ()):
            if name == STALE_PROPERTY:
                self.stale.append(str(value))
                self.stale_tests.append(str(report.nodeid))
            elif name == EXPIRED_PROPERTY:
                self.expired.append(str(value))
                self.expired_tests.append(str(report.nodeid))
            elif name in lists:
                lists[name].append(str(value))

    def lines(self, mode: RecordMode) -> list[str]:
        lines = []
        for entries, what in (
            (self.written, f"recorded (record mode {mode.value})"),
            (self.unchanged, "re-recorded unchanged (the same calls and answers but for volatile response "
                             "fields: the file is left as it was)"),
            (self.removed, "removed: the test sent no request, so it needs no cassette"),
        ):
            if entries:
                count = len(entries)
                lines.append(f"agentloom: {count} cassette{'s' if count != 1 else ''} {what}:")
                lines += [f"  {entry}" for entry in sorted(entries)]
        if self.dropped:
            count = len(self.dropped)
            lines.append(f"agentloom: {count} recording{'s' if count != 1 else ''} not written, so the cassette on "
                         "disk (if any) is unchanged:")
            lines += [f"  {entry}" for entry in sorted(self.dropped)]
        if self.expired:
            count = len(self.expired)
            lines.append(f"agentloom: {count} cassette{'s' if count != 1 else ''} older than the max age "
                         "(agentloom_cassette_max_age), with what on_expiry did:")
            lines += [f"  {entry}" for entry in sorted(self.expired)]
            warned = sorted(test for test, entry in zip(self.expired_tests, self.expired, strict=True)
                            if entry.endswith(", warn"))
            if warned:
                shown = " ".join(shlex.quote(test) for test in warned[:5]) + (" ..." if len(warned) > 5 else "")
                lines.append(f"{HINT_PREFIX} re-record them with live providers: pytest {shown} --agentloom-record")
        if self.stale:
            count = len(self.stale)
            lines.append(f"agentloom: {count} cassette{'s' if count != 1 else ''} possibly stale "
                         "(the workflow file changed since recording):")
            lines += [f"  {entry}" for entry in sorted(set(self.stale))]
            tests = sorted(set(self.stale_tests))
            shown = " ".join(shlex.quote(test) for test in tests[:5]) + (" ..." if len(tests) > 5 else "")
            lines.append(f"{HINT_PREFIX} re-record them with live providers: pytest {shown} --agentloom-record")
        return lines



ALL_TOOLS = "all"
"""The ``--agentloom-live-tools`` word for every tool without side effects (never one with side effects)."""


def _compared_tools(names: tuple[str, ...], registry: Mapping[str, Any], where: str) -> frozenset[str]:
    """``--agentloom-live-tools`` names checked: each a tool of the run, with side effects (the others run
    for real over a replay anyway, and the tape records none of their results to compare with), or
    ``all`` (the tools without side effects, compared through the recorded conversation instead)."""
    from .._core.suggest import did_you_mean
    from ..errors import UsageError, render_message
    from ..tools._registry import as_tool

    named = tuple(name for name in names if name != ALL_TOOLS)
    for name in named:
        if name not in registry:
            raise UsageError(render_message(
                f"--agentloom-live-tools names tool '{name}', which {where or 'this run'} does not have.",
                [("tools", ", ".join(sorted(registry)))],
                hint=did_you_mean(name, [*registry, ALL_TOOLS]) or f"name one of them, or '{ALL_TOOLS}'"))
        if not as_tool(registry[name], name).side_effects:
            raise UsageError(render_message(
                f"--agentloom-live-tools names tool '{name}', which has no side effects: it runs for real over "
                "every replay already, and the tool tape keeps no result of it to compare with.",
                hint=f"leave '{name}' out, or use '{ALL_TOOLS}': it holds the result of every tool without side "
                     "effects against the recorded conversation"))
    return frozenset(named)


def _note_unnamed(registry: Mapping[str, Any], named: frozenset[str], where: str) -> None:
    """``all`` never runs a tool with side effects: say which of the run's were replayed from the tape, so
    nobody reads ``all`` as "every tool ran for real"."""
    import warnings

    from ..errors import render_message
    from ..tools._registry import as_tool

    builtin = {"file_write", "shell_command", "http_request"}  # always registered: named only when asked for
    unnamed = sorted(name for name, value in registry.items()
                     if name not in named and name not in builtin and as_tool(value, name).side_effects)
    if unnamed:
        warnings.warn(render_message(
            f"--agentloom-live-tools=all runs only tools without side effects for real; "
            f"{', '.join(repr(name) for name in unnamed)} of {where or 'this run'} "
            f"{'has' if len(unnamed) == 1 else 'have'} side effects and {'is' if len(unnamed) == 1 else 'are'} "
            "replayed from the tool tape.",
            hint=f"name {'it' if len(unnamed) == 1 else 'them'} too to run {'it' if len(unnamed) == 1 else 'them'} "
                 f"for real: --agentloom-live-tools=all,{','.join(unnamed)}"), UserWarning, stacklevel=2)
