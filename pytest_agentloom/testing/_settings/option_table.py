"""The plugin's settings: one table of options, read with a single precedence rule.

Precedence, stated once: **command line, then marker, then ini key, then default**.
Arguments passed to ``agentloom.run(...)`` apply to that run only and beat all of them.

Every option lives in the ``agentloom`` group of ``pytest --help`` under an
``--agentloom-`` prefix; the ones that make sense in a file have a matching ini
key (``[tool.pytest.ini_options]`` or ``pytest.ini``). Later issues add rows to
:data:`OPTIONS` (cassette folder, record mode) and read them the same way.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..._core.suggest import did_you_mean
from ...errors import MarkerError, render_message

if TYPE_CHECKING:
    import pytest

__all__ = [
    "MARKER_KEYS",
    "OPTIONS",
    "MarkerError",
    "Option",
    "marker_defaults",
    "pass_rate",
    "read_setting",
    "read_setting_from",
    "repeat_count",
]


@dataclass(frozen=True)
class Option:
    """One setting: its command-line flag, its ini key and the marker keyword that may set it."""

    name: str
    help: str
    kind: Literal["string", "bool", "linelist"] = "string"
    default: Any = None
    ini: bool = True
    marker: bool = False
    cli: bool = True
    #: the flag may be given more than once (``--agentloom-inject A --agentloom-inject B``): a list
    repeatable: bool = False

    @property
    def flag(self) -> str:
        return "--agentloom-" + self.name.replace("_", "-")

    @property
    def dest(self) -> str:
        return "agentloom_" + self.name

    @property
    def ini_key(self) -> str:
        return "agentloom_" + self.name


OPTIONS: tuple[Option, ...] = (
    Option(
        "snapshot_dir",
        "folder of golden snapshots, relative to each test file's folder (default: __agentloom_snapshots__).",
        default="__agentloom_snapshots__",  # not __snapshots__: syrupy's (see testing/_snapshots/old_folder.py)
        marker=True,
    ),
    Option(
        "update_snapshots",
        "write new and changed snapshots, and delete unused ones when the whole suite runs.",
        kind="bool",
        default=False,
        ini=False,
    ),
    Option(
        "create_snapshots",
        "write only the snapshots that do not exist yet; a changed snapshot still fails.",
        kind="bool",
        default=False,
        ini=False,
    ),
    Option(
        "full_trace",
        "show every frame of a failure, this package's too, with their locals under --showlocals (for a bug "
        "in agentloom; they may hold a run's unredacted state).",
        kind="bool",
        default=False,
        ini=False,
    ),
    Option(
        "snapshot_requests",
        "put what each step sent its provider (messages, model, params, tools) in snapshots (default: true).",
        kind="bool",
        default=True,
        marker=True,
        cli=False,
    ),
    Option(
        "snapshot_exclude",
        "snapshot paths left out of every snapshot, one a line (e.g. steps.*.output.id).",
        kind="linelist",
        default=[],
        marker=True,
        cli=False,
    ),
    Option(
        "snapshot_matchers",
        "'path: matcher' lines (a type name or /regex/): matched values are written as placeholders.",
        kind="linelist",
        default=[],
        marker=True,
        cli=False,
    ),
    Option(
        "missing_template_keys",
        "a {state.x} placeholder that renders empty in a test: error (the default) or warn.",
        default="error",
        marker=True,
        cli=False,
    ),
    Option(
        "cassette_ignore",
        "JSON paths of request bodies left out of cassette matching, one a line (e.g. metadata.trace_id).",
        kind="linelist",
        default=[],
        marker=True,
        cli=False,
    ),
    Option(
        "cassette_matchers",
        "extra request matchers by name, one a line: 'module:function' or a name registered in MATCHERS.",
        kind="linelist",
        default=[],
        marker=True,
        cli=False,
    ),
    Option(
        "cassette_response_ignore",
        "response fields a re-recording may change and still keep the cassette as it was, one a line (e.g. "
        "usage.total_duration; ids, created and date/request-id headers always).",
        kind="linelist",
        default=[],
        marker=True,
        cli=False,
    ),
    Option(
        "before_record_response",
        "'module:function' run on each recorded response after scrubbing (vcrpy's before_record_response).",
        marker=True,
        cli=False,
    ),
    Option(
        "cassette_max_age",
        "how old a cassette may be before on_expiry applies: a number and a unit (s, m, h, d, w), e.g. 30d.",
        marker=True,
        cli=False,
    ),
    Option(
        "cassette_on_expiry",
        "what an expired cassette does: warn (the default: listed in the summary), fail, or re-record.",
        default="warn",
        marker=True,
        cli=False,
    ),
    Option(
        "warn_unused_snapshots",
        "only report unused snapshot files; by default they fail a run of the whole suite.",
        kind="bool",
        default=False,
    ),
    Option(
        "warn_unused_cassettes",
        "only report unused cassette and tool tape files; by default they fail a run of the whole suite.",
        kind="bool",
        default=False,
    ),
    Option(
        "prune_cassettes",
        "delete the cassette and tool tape files no test used, when the whole suite runs.",
        kind="bool",
        default=False,
        ini=False,
    ),
    Option(
        "shard_report",
        "write what this session (one shard of the suite) used and measured to PATH, for agentloom combine.",
        ini=False,
    ),
    Option(
        "scenario_glob",
        "file name pattern of YAML-only scenario tables collected as tests (default: test_*.agentloom.yaml).",
        default="test_*.agentloom.yaml",
    ),
    Option(
        "cassette_dir",
        "folder of recorded provider calls (cassettes), relative to the rootdir (default: cassettes).",
        default="cassettes",
    ),
    Option(
        "record",
        "re-record the selected tests' cassettes against live providers (needs API keys; "
        "same as --agentloom-record-mode=all).",
        kind="bool",
        default=False,
        ini=False,
    ),
    Option(
        "record_mode",
        "cassette record mode: none (replay only, the default), once, new_episodes or all.",
        ini=False,
    ),
    Option(
        "cov",
        "print workflow coverage (steps, router branches, stop reasons reached) in the terminal summary.",
        kind="bool",
        default=False,
    ),
    Option(
        "cov_fail_under",
        "fail the session when the branch coverage of the workflows run is below this percentage.",
    ),
    Option(
        "cov_report",
        "write the workflow coverage map for tools: json:PATH (relative to the current folder).",
    ),
    Option(
        "report",
        "write a review report of the session: PATH.html (one self-contained page) or PATH.md (Markdown).",
    ),
    Option(
        "live",
        "run the agentloom tests against live providers (API keys needed): no cassette is read or written, "
        "no snapshot compared or written.",
        kind="bool",
        default=False,
        ini=False,
    ),
    Option(
        "repeat",
        "with --agentloom-live: run each agentloom test N times (fresh fixtures each time; default 1).",
        marker=True,
    ),
    Option(
        "min_pass_rate",
        "with --agentloom-live: the fraction (0 < rate <= 1) of a test's repetitions that must pass (default 1.0).",
        marker=True,
    ),
    Option(
        "repeat_early_stop",
        "with --agentloom-live: stop a test's repetitions once its verdict is decided (enough passes, or too few "
        "left to reach them).",
        kind="bool",
        default=False,
    ),
    Option(
        "record_repetitions",
        "with --agentloom-live: write each repetition's calls to cassettes/<test>/<repetition>.yaml.",
        kind="bool",
        default=False,
        ini=False,
    ),
    Option(
        "replay_repetition",
        "replay repetition K of each test (cassettes/<test>/<K>.yaml, from --agentloom-record-repetitions).",
        ini=False,
    ),
    Option(
        "replay_repetitions",
        "replay every kept repetition of each test (cassettes/<test>/<K>.yaml, K = 1, 2, ...) as its repetitions, "
        "offline: the live session's outcomes and statistics again.",
        kind="bool",
        default=False,
        ini=False,
    ),
    Option(
        "drift",
        "drift check: run each recorded test replayed, then live into the scratch folder DIR (never the committed "
        "cassettes or snapshots), and report what changed (route, tools, reasons, schema, outputs, tokens, cost).",
        ini=False,
    ),
    Option(
        "drift_outputs",
        "drift check: how each step's output is compared, replay against live: exact, normalized, similarity:T, "
        "ignore, embedding:T (cosine distance) or judge(T, MODEL):RUBRIC (default similarity:0.6); 'step=method' "
        "lines for single steps.",
        kind="linelist",
        default=[],
        marker=True,
    ),
    Option(
        "inject",
        "fault injection into a replayed or scripted run: TARGET=KIND, e.g. classify#1=429, draft=malformed_json, "
        "draft=stream_break@20, tool:lookup=timeout (repeatable; ini: one a line).",
        kind="linelist",
        default=[],
        marker=True,
        repeatable=True,
    ),
    Option(
        "live_tools",
        "replay the model, run these tools with side effects for real (comma-separated names) and compare each "
        "result with the tool tape: the first divergence fails its step, by step, turn and call. 'all' compares "
        "every tool without side effects with the recorded conversation too (it never runs one with side "
        "effects: name it beside 'all').",
        marker=True,
    ),
    Option(
        "drift_fail_on",
        "drift check: fail the session when a test's verdict is a regression (regression), or anything but "
        "identical (benign); never (the default): only failing tests fail it.",
        default="never",
    ),
)

_BY_NAME = {option.name: option for option in OPTIONS}


def add_options(parser: pytest.Parser) -> None:
    """Register every option of :data:`OPTIONS` in the ``agentloom`` group, and its ini key."""
    group = parser.getgroup("agentloom", "agentloom: test AgentLoom workflows")
    for option in OPTIONS:
        if not option.cli:
            pass
        elif option.repeatable:
            group.addoption(option.flag, action="append", default=None, dest=option.dest, metavar="VALUE",
                            help=option.help)
        elif option.kind == "bool":
            group.addoption(option.flag, action="store_true", default=None, dest=option.dest, help=option.help)
        else:
            group.addoption(option.flag, action="store", default=None, dest=option.dest, metavar="VALUE",
                            help=option.help)
        if option.ini:
            parser.addini(option.ini_key, option.help, type=option.kind, default=option.default)


def read_setting(config: pytest.Config, name: str, marker: Mapping[str, Any] | None = None, *,
                 known: dict[str, tuple[Any, str]] | None = None) -> Any:
    """The value of one setting: command line, then ``marker`` (if the option allows it), then ini."""
    return read_setting_from(config, name, marker, known=known)[0]


def read_setting_from(config: pytest.Config, name: str, marker: Mapping[str, Any] | None = None, *,
                      known: dict[str, tuple[Any, str]] | None = None) -> tuple[Any, str]:
    """:func:`read_setting`, with where the value came from, as an error message names it: ``--agentloom-x``,
    ``@pytest.mark.agentloom(x=...)``, ``ini agentloom_x`` or ``default``.

    ``known`` keeps what the command line and ini say (they do not change once tests run), so that the
    settings every test reads cost a dict lookup each instead of an option and an ini lookup.
    """
    option = _BY_NAME[name]
    outside = known.get(name) if known is not None else None
    if outside is None:
        outside = _outside_markers(config, option)
        if known is not None:
            known[name] = outside
    if outside[1] == option.flag or marker is None or not option.marker or marker.get(name) is None:
        return outside
    return marker[name], f"@pytest.mark.agentloom({name}=...)"


def _outside_markers(config: pytest.Config, option: Option) -> tuple[Any, str]:
    """The command line's value, else the ini's, else the default; with where it came from."""
    value = config.getoption(option.dest, default=None) if option.cli else None
    if value is not None:
        return value, option.flag
    if option.ini:
        value = config.getini(option.ini_key)
        if value not in (None, ""):
            return value, f"ini {option.ini_key}"
    return option.default, "default"


# -- the agentloom marker ----------------------------------------------------------------------------------

#: Keywords the ``agentloom`` marker takes besides config fields: where they go is written next to each.
MARKER_KEYS: dict[str, str] = {
    "workflow": "default workflow for agentloom.run() and scenario rows, relative to the test file",
    "tools": "dict of tool name -> callable, passed to every run",
    "state": "dict of state keys added to every run's state",
    "snapshot_dir": "snapshot folder for these tests (the command line still wins)",
    "snapshot_requests": "False leaves what the steps sent out of these tests' snapshots",
    "snapshot_exclude": "list of snapshot paths left out (e.g. 'steps.*.output.id'), instead of the ini's",
    "snapshot_matchers": "dict of snapshot path -> matcher (type, regex, callable), instead of the ini's",
    "missing_template_keys": "'error' (the default) or 'warn' for a {state.x} placeholder that renders empty",
    "cassette_ignore": "list of request body paths left out of cassette matching, instead of the ini's",
    "cassette_matchers": "list of extra request matchers (functions or registered names), instead of the ini's",
    "cassette_response_ignore": "list of response paths a re-recording may change (volatile), instead of the ini's",
    "before_record_response": "function(response) -> response run on each recorded response, instead of the ini's",
    "cassette_max_age": "how old the cassettes may be, e.g. '30d' (s, m, h, d, w)",
    "cassette_on_expiry": "'warn', 'fail' or 're-record' for a cassette older than cassette_max_age",
    "repeat": "under --agentloom-live: how many times each of these tests runs (a whole number >= 1)",
    "min_pass_rate": "under --agentloom-live: the fraction of repetitions that must pass (0 < rate <= 1)",
    "drift_outputs": "under --agentloom-drift: output comparison, 'similarity:0.8' or a dict of step -> method",
    "inject": "a fault (or list of faults) injected into every run of these tests, e.g. 'classify#1=429'",
    "live_tools": "names of tools with side effects run for real over the replay and compared with the tool tape; "
                  "'all' compares every tool without side effects with the recorded conversation (e.g. 'all,send')",
}
MARKER_SIGNATURE = ("agentloom(workflow=None, *, tools=None, state=None, snapshot_dir=None, snapshot_requests=True, "
                    "snapshot_exclude=None, snapshot_matchers=None, missing_template_keys='error', "
                    "cassette_ignore=None, cassette_matchers=None, cassette_response_ignore=None, "
                    "before_record_response=None, cassette_max_age=None, cassette_on_expiry='warn', repeat=None, "
                    "min_pass_rate=None, drift_outputs=None, inject=None, live_tools=None, **config)")


@functools.cache
def _config_keys() -> frozenset[str]:
    """The ``WorkflowConfig`` field names (a class's fields never change: read once)."""
    from ...engine._format.model import WorkflowConfig

    return frozenset(WorkflowConfig.model_fields)


def marker_defaults(markers: Iterable[Any], where: str) -> dict[str, Any]:
    """Merge ``agentloom`` markers, closest first (test, then class, then module), into one dict.

    ``config`` holds the ``WorkflowConfig`` overrides; the other keys are those of
    :data:`MARKER_KEYS`. Unknown keywords raise :class:`MarkerError` naming the test.
    """
    config_keys = _config_keys()
    merged: dict[str, Any] = {"config": {}}
    for mark in markers:
        args = list(mark.args)
        if len(args) > 1:
            raise MarkerError(
                render_message("@pytest.mark.agentloom takes at most one positional argument (the workflow), "
                               f"got {len(args)} on {where}.",
                               hint=f"use {MARKER_SIGNATURE}.")
            )
        kwargs = dict(mark.kwargs)
        if args:
            if "workflow" in kwargs:
                raise MarkerError(f"@pytest.mark.agentloom got the workflow twice (positional and keyword) on {where}.")
            kwargs["workflow"] = args[0]
        for key, value in kwargs.items():
            if key in MARKER_KEYS:
                merged.setdefault(key, value)
            elif key in config_keys:
                merged["config"].setdefault(key, value)
            else:
                allowed = sorted([*MARKER_KEYS, *config_keys])
                hint = did_you_mean(key, allowed)
                raise MarkerError(
                    render_message(f"@pytest.mark.agentloom got an unexpected keyword '{key}' on {where}.\n"
                                   f"  allowed keywords: {', '.join(allowed)}",
                                   hint=f"{hint + ' ' if hint else ''}use {MARKER_SIGNATURE}.")
                )
        _check_kinds(kwargs, where)
    if "tools" in merged:
        merged["tools"] = _tools(merged["tools"], where)
    return merged


def _tools(value: Any, where: str) -> dict[str, Any]:
    """The marker's ``tools=`` in any form ``run(tools=...)`` takes: a dict, or a list of ``@tool``s."""
    from ...errors import UsageError
    from ...tools._registry import tools_by_name

    try:
        return tools_by_name(value)
    except UsageError as exc:
        raise MarkerError(f"@pytest.mark.agentloom argument 'tools' on {where}: {exc}") from None


_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "tools": ((dict, list, tuple), "dict or list of tools"),
    "state": ((dict,), "dict"),
    "workflow": ((str,), "str or path"),
    "snapshot_dir": ((str,), "str or path"),
    "snapshot_requests": ((bool,), "bool"),
    "snapshot_exclude": ((list, tuple), "list of paths"),
    "snapshot_matchers": ((dict,), "dict of path -> matcher"),
    "missing_template_keys": ((str,), "'warn' or 'error'"),
    "cassette_ignore": ((list, tuple), "list of paths"),
    "cassette_matchers": ((list, tuple), "list of matchers"),
    "cassette_response_ignore": ((list, tuple), "list of paths"),
    "cassette_max_age": ((str,), "str like '30d'"),
    "cassette_on_expiry": ((str,), "'warn', 'fail' or 're-record'"),
    "repeat": ((int,), "whole number >= 1"),
    "min_pass_rate": ((int, float), "fraction, 0 < rate <= 1"),
    "drift_outputs": ((str, list, tuple, dict), "method like 'similarity:0.8' or dict of step -> method"),
    "inject": ((str, list, tuple), "fault like 'classify#1=429' or list of them"),
    "live_tools": ((str, list, tuple), "tool names, 'a,b' or a list"),
}


def _check_kinds(kwargs: Mapping[str, Any], where: str) -> None:
    for key, (kinds, shown) in _KINDS.items():
        value = kwargs.get(key)
        if value is None or isinstance(value, kinds) or (shown == "str or path" and hasattr(value, "__fspath__")):
            continue
        raise MarkerError(
            f"@pytest.mark.agentloom argument '{key}' must be a {shown} (got {value!r} that is a "
            f"{type(value).__name__}) on {where}."
        )
    mode = kwargs.get("missing_template_keys")
    if mode is not None and mode not in ("warn", "error"):
        raise MarkerError(f"@pytest.mark.agentloom argument 'missing_template_keys' must be 'warn' or 'error' "
                          f"(got {mode!r}) on {where}.")
    for key, parse in (("repeat", repeat_count), ("min_pass_rate", pass_rate), ("cassette_max_age", parse_age),
                       ("cassette_on_expiry", on_expiry_mode), ("drift_outputs", _drift_outputs),
                       ("inject", _faults)):
        if kwargs.get(key) is not None:
            try:
                parse(kwargs[key], f"@pytest.mark.agentloom argument '{key}'")
            except ValueError as exc:
                raise MarkerError(f"{exc}\n  on: {where}") from None
            except TypeError as exc:  # the UsageError of the cassette settings
                raise MarkerError(f"{exc}\n  on: {where}") from None


def _faults(value: Any, source: str) -> Any:
    from ...providers._faults import parse_faults

    return parse_faults(value, source)


def _drift_outputs(value: Any, source: str) -> Any:
    from .drift_outputs import parse_methods

    return parse_methods(value, source)


_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
ON_EXPIRY = ("warn", "fail", "re-record")


def parse_age(value: Any, source: str) -> float:
    """``30d``, ``12h``, ``90m``, ``2w``, ``3600s`` as seconds; a :class:`UsageError` naming ``source`` otherwise."""
    from ...errors import UsageError

    text = str(value).strip().lower()
    try:
        seconds = float(text[:-1]) * _AGE_UNITS[text[-1:]]
    except (KeyError, ValueError):
        seconds = -1.0
    if seconds > 0:
        return seconds
    raise UsageError(render_message(f"{source} must be a positive number and a unit (s, m, h, d, w), got {value!r}.",
                                    hint="e.g. agentloom_cassette_max_age = 30d"))


def on_expiry_mode(value: Any, source: str) -> str:
    """``warn``, ``fail`` or ``re-record`` (``re_record`` and ``rerecord`` too); a :class:`UsageError` otherwise."""
    from ...errors import UsageError

    mode = str(value or "warn").strip().lower().replace("_", "-").replace("rerecord", "re-record")
    if mode not in ON_EXPIRY:
        raise UsageError(render_message(f"{source} must be one of {', '.join(ON_EXPIRY)} (got {value!r}).",
                                        hint="e.g. agentloom_cassette_on_expiry = fail"))
    return mode


def repeat_count(value: Any, source: str) -> int:
    """``value`` as a number of repetitions (a whole number >= 1); ``ValueError`` naming ``source`` and the fix."""
    text = str(value).strip()
    if not isinstance(value, bool) and text.isdigit() and int(text) >= 1:
        return int(text)
    raise ValueError(render_message(f"{source} must be a whole number of repetitions, at least 1 (got {value!r}).",
                                    hint="e.g. --agentloom-repeat=5, @pytest.mark.agentloom(repeat=5) or ini "
                                         "agentloom_repeat = 5."))


def pass_rate(value: Any, source: str) -> float:
    """``value`` as a pass rate, a fraction with 0 < rate <= 1; ``ValueError`` naming ``source`` and the fix."""
    try:
        rate = float(str(value).strip()) if not isinstance(value, bool) else -1.0
    except ValueError:
        rate = -1.0
    if 0 < rate <= 1:
        return rate
    percent = f" (for {rate:g}% write {rate / 100:g})" if 1 < rate <= 100 and rate == int(rate) else ""
    raise ValueError(render_message(
            f"{source} must be a fraction of the repetitions, 0 < rate <= 1 (got {value!r}){percent}.",
            hint="e.g. --agentloom-min-pass-rate=0.8 for 4 passes out of 5, "
                 "@pytest.mark.agentloom(min_pass_rate=0.8) or ini agentloom_min_pass_rate = 0.8."))
