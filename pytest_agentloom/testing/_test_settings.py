"""What each test's ``agentloom`` markers, the ini and the command line say: read once, kept per merge.

Setup checks a test's markers and the ``agentloom`` fixture builds its harness from them, for every row of a
scenario table, whose rows share their function's mark objects; the command line and ini do not change
while tests run. So :class:`TestSettings` (one per session) keeps

* the merge of each *sequence of mark objects*: its key holds the marks themselves and matches only those
  very objects (``is``), so it can never answer for other marks; a row's own marks
  (``pytest.param(marks=...)``) or a mark a fixture adds (``add_marker``) make another sequence, merged on its
  own. A bad marker is not kept: it raises each time, naming the test it is on;
* with each merge, what a harness reads from it (:class:`MarkedSettings`), worked out at its first use;
* what the command line and ini say of each setting (``known`` of ``read_setting_from``).

Every cache here belongs to the session object and goes with it; the merges are bounded.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._settings.option_table import marker_defaults, read_setting, read_setting_from
from ._snapshots.compare import SnapshotOptions
from ._test_cassette import CassetteOptions

if TYPE_CHECKING:
    from ..providers._faults import Fault

__all__ = ["MarkedSettings", "TestSettings"]

#: reads one setting of a test: its value and where it came from (``read_setting_from`` with its markers)
Reader = Callable[[str], tuple[Any, str]]


@dataclass(frozen=True)
class MarkedSettings:
    """The settings a harness reads that depend on a test's markers only (and the command line and ini)."""

    snapshot_dir: str
    matching: tuple[tuple[str, ...], tuple[Any, ...]]  # body paths to ignore and extra matchers of the cassette
    cassette_options: CassetteOptions
    snapshot_options: SnapshotOptions
    missing_template_keys: str
    faults: tuple[Fault, ...] = ()
    live_tools: tuple[str, ...] = ()


class TestSettings:
    """One session's reader of each test's settings: markers merged, then the command line and ini."""

    __test__ = False

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._known: dict[str, tuple[Any, str]] = {}  # command line and ini: read once (see setting)
        self._merges: dict[_SameMarks, _Marked] = {}  # see _marked
        self._unmarked_snapshot_options: SnapshotOptions | None = None
        self.scenario_glob = str(read_setting(config, "scenario_glob"))
        check_ini(config)

    def is_scenario_file(self, path: Path) -> bool:
        """Whether a YAML file is a scenario table pytest collects (``agentloom_scenario_glob``)."""
        return fnmatch.fnmatch(path.name, self.scenario_glob)

    def merged_markers(self, item: pytest.Item) -> dict[str, Any]:
        """The merged ``agentloom`` markers of ``item``, shared: callers must not change it (see :meth:`defaults`).

        Raises :class:`~pytest_agentloom.errors.MarkerError` on a bad argument, naming the test.
        """
        return self._marked(item).merged

    def defaults(self, item: pytest.Item) -> dict[str, Any]:
        """The merged ``agentloom`` markers of ``item``, the caller's own (to add to, and to add to its ``config``)."""
        return _own_copy(self.merged_markers(item))

    def for_harness(self, item: pytest.Item) -> tuple[dict[str, Any], MarkedSettings]:
        """What the harness of ``item`` starts from: its merged markers (its own copy) and its settings."""
        marked = self._marked(item)
        return _own_copy(marked.merged), self._settings(marked)

    def snapshot_dir(self, item: pytest.Item) -> str:
        """The snapshot folder setting of ``item`` (marker, then command line or ini)."""
        return self._settings(self._marked(item)).snapshot_dir

    def setting(self, name: str, defaults: dict[str, Any]) -> Any:
        """A setting of one test (command line, then its markers' ``defaults``, then ini)."""
        return read_setting(self.config, name, defaults, known=self._known)

    def _marked(self, item: pytest.Item) -> _Marked:
        """The merge of ``item``'s ``agentloom`` marks, kept per sequence of mark objects (see the module docs)."""
        key = _SameMarks(tuple(item.iter_markers("agentloom")))
        known = self._merges.get(key)
        if known is None:
            if len(self._merges) >= _MAX_MERGED:
                self._merges.clear()
            # no marks, nothing to merge: and merging would import the engine's models for a session of
            # tests that never use the plugin
            merged = marker_defaults(key.marks, where=item.nodeid) if key.marks else {"config": {}}
            known = self._merges[key] = _Marked(merged)
        return known

    def _settings(self, marked: _Marked) -> MarkedSettings:
        """What a harness reads from one merge, worked out at its first use."""
        if marked.settings is None:
            marked.settings = self._read(marked.merged)
        return marked.settings

    def _read(self, merged: dict[str, Any]) -> MarkedSettings:
        """Each setting a harness reads, in this order (the first bad one errors the test, naming it)."""
        def read(name: str) -> tuple[Any, str]:
            return read_setting_from(self.config, name, merged, known=self._known)

        return MarkedSettings(
            snapshot_dir=os.fspath(read("snapshot_dir")[0]),
            matching=(tuple(read("cassette_ignore")[0]), tuple(read("cassette_matchers")[0])),
            cassette_options=CassetteOptions.read(read), snapshot_options=self._snapshot_options(merged, read),
            missing_template_keys=str(read("missing_template_keys")[0]),
            faults=_faults(*read("inject")), live_tools=_names(read("live_tools")[0]),
        )

    def _snapshot_options(self, merged: dict[str, Any], read: Reader) -> SnapshotOptions:
        """A test's snapshot defaults: the same for every test whose markers set none of them (worked out once)."""
        if any(key in merged for key in _SNAPSHOT_KEYS):
            return SnapshotOptions.read(read, verbose=self.config.get_verbosity())
        if self._unmarked_snapshot_options is None:
            self._unmarked_snapshot_options = SnapshotOptions.read(read, verbose=self.config.get_verbosity())
        return self._unmarked_snapshot_options


def check_ini(config: pytest.Config) -> None:
    """A bad cassette age or on_expiry, or a bad fault, in the ini is a usage error of the session, before any
    test runs."""
    from ..errors import UsageError

    try:
        CassetteOptions.read(lambda name: read_setting_from(config, name))
        _faults(*read_setting_from(config, "inject"))
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None


def _faults(value: Any, source: str) -> tuple[Fault, ...]:
    """The faults injected into a test's runs (``--agentloom-inject``, the marker's ``inject=``, the ini).

    None is the usual answer, given without importing the fault module (it loads the engine's types, and
    pydantic with them, into every session that injects nothing)."""
    if not value:
        return ()
    from ..providers._faults import parse_faults

    return parse_faults(value, source)


def _names(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """The tool names of ``live_tools`` (a comma-separated string or a list); empty names are left out."""
    if not value:
        return ()
    names = value.split(",") if isinstance(value, str) else list(value)
    return tuple(name.strip() for name in names if str(name).strip())


class _SameMarks:
    """A key that holds a sequence of mark objects and equals only a key of the very same objects, in order.

    ``pytest.Mark`` compares by value and cannot be hashed (its keywords are a dict), and marks of equal value
    on two tests may still come apart (a fixture's ``add_marker``); identity is what rows of a table share.
    """

    __slots__ = ("_hash", "marks")

    def __init__(self, marks: tuple[Any, ...]) -> None:
        self.marks = marks
        self._hash = hash(tuple(map(id, marks)))  # held with the marks: no id is reused while the key lives

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _SameMarks) and len(other.marks) == len(self.marks) and all(
            mine is theirs for mine, theirs in zip(self.marks, other.marks, strict=True))


@dataclass
class _Marked:
    """One merge of marks, and the settings worked out from it (see :meth:`TestSettings._settings`)."""

    merged: dict[str, Any]
    settings: MarkedSettings | None = None


def _own_copy(merged: dict[str, Any]) -> dict[str, Any]:
    """A merge of markers that the caller may add to, and add to its ``config`` (the kept merge is shared)."""
    return {**merged, "config": dict(merged["config"])}


#: the marker keywords of the snapshot options (see TestSettings._snapshot_options)
_SNAPSHOT_KEYS = ("snapshot_matchers", "snapshot_requests", "snapshot_exclude")
#: how many merged marker sequences a session keeps (one per marked test function, in most suites)
_MAX_MERGED = 4096
