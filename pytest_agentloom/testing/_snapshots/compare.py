"""Golden snapshots of workflow runs: what goes in, how it is written, how a change is explained.

A snapshot is one YAML file per assertion, under a ``__agentloom_snapshots__`` folder
beside the test file (``<folder>/<test module>/<test name>[<param id>].yaml``).
Keys come in a fixed order, state keys sorted, multi-line strings as literal
blocks, so that a changed run reads as a clean diff in review. After the steps
come the ``requests`` the run sent (see :mod:`.sent`), so a prompt change shows
too; volatile values are excluded or matched (see :mod:`.volatile`).

Two ways to write files: ``create`` writes only the snapshots that do not exist
yet (a changed one still fails); ``update`` also rewrites the changed ones.

Redaction markers compare alike whatever their digest (see :func:`_as_compared`): a secret's value never
decides whether a snapshot passes, and a file that differs only in them is not rewritten.

:class:`SnapshotSession` is plain Python (no pytest import): it remembers which
files were used, writes atomically and finds unused files. The plugin keeps one
per pytest session and merges the workers' under pytest-xdist.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._core.diffs import diff_report
from ..._core.files import one_to_one_name, write_text_atomic
from ..._core.plain import to_plain
from ..._core.yaml_io import load_yaml, read_text_capped
from ..._redaction.policy import POLICY
from ...errors import HINT_PREFIX, ArtifactError, DataReadError, FileNameClashError, render_message
from .dumper import dump_yaml, fast_dumper_agrees
from .shape import (
    FORMAT_VERSION,
    OLD_FORMATS,
    compact,
    full_data,
    output_notes,
    output_paths,
    upgrade,
    without_reply_texts,
)

if TYPE_CHECKING:
    from ...engine._outcome.result import WorkflowResult

#: The name part of a drift check's judge verdict (``<test>.drift-verdict.<step>.yaml``, see
#: :mod:`.._live.drift_verdicts`). A plain run never reads one (only a drift check judges outputs), so it is no
#: unused snapshot of it: never reported, never deleted by ``--agentloom-update-snapshots``.
DRIFT_VERDICT = "drift-verdict"

__all__ = [
    "DRIFT_VERDICT",
    "FORMAT_VERSION",
    "SnapshotOptions",
    "SnapshotSession",
    "claim_file",
    "display_path",
    "dump_yaml",
    "is_run",
    "record_and_update_command",
    "sanitize",
    "snapshot_data",
    "update_hint",
]



# -- what goes in -----------------------------------------------------------------------------------------


def snapshot_data(result: WorkflowResult, *, requests: bool = True) -> dict[str, Any]:
    """The stable part of a run: status, reason, final state, each step, what was sent, totals (see
    :mod:`.shape`: each output is written once)."""
    return compact(full_data(result, requests=requests), output_paths(result))


def is_run(subject: Any) -> bool:
    """Whether ``subject`` is a run's result (a snapshot of its own shape) rather than a plain value."""
    from ...engine._outcome.result import WorkflowResult

    return isinstance(subject, WorkflowResult)


# -- where it is written ------------------------------------------------------------------------------


_MAX_BYTES = 64 * 1024 * 1024  # as the YAML reader's limit: a bigger file is refused, naming it

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-\[\]=+,@]")


def sanitize(name: str, limit: int = 120) -> str:
    """A file-system-safe version of a test name, one-to-one: when odd characters had to become ``_``
    (or the name is long), a short hash of the name is added, so ``a b`` and ``a_b`` never share a file.
    """
    return one_to_one_name(name, _UNSAFE.sub("_", name).strip(".") or "_", limit=limit)


def claim_file(owners: dict[str, str], path: Path, nodeid: str, *, what: str) -> None:
    """Note that test ``nodeid`` uses ``path``; raise :class:`FileNameClashError` if another test already did."""
    __tracebackhide__ = True
    owner = owners.setdefault(str(path), nodeid)
    if owner != nodeid:
        raise FileNameClashError(render_message(
            f"Tests {owner} and {nodeid} would both use the {what} file {_display(path)}; "
            "neither may overwrite the other.",
            hint="give one of them another parameter id (pytest.param(..., id=...)), another snapshot name "
                 "(assert_snapshot(result, name=...)) or a folder of its own (snapshot_dir, cassette_dir).",
        ))


# -- how a change is explained ---------------------------------------------------------------------------


def record_and_update_command(nodeid: str) -> str:
    """The one command that re-records a test's cassette and rewrites its snapshots in the same run."""
    import shlex

    return f"pytest --agentloom-record --agentloom-update-snapshots {shlex.quote(nodeid)}"


def update_hint(nodeid: str, *, missing: bool = False, recording: bool = False) -> str:
    """The command that writes a missing or changed snapshot, on a line of its own.

    In a recording session (``recording``) a changed snapshot fails the test, so its new recording is not
    written; the command then records and updates together, since updating alone would replay the old
    cassette and lose what this run recorded.
    """
    import shlex

    if recording:
        command = record_and_update_command(nodeid)
        return (f"{HINT_PREFIX} this run was recording, and its recording is not written while the test fails; "
                f"if the change is intended, record and update together:\n  {command}")
    if missing:
        command = f"pytest --agentloom-create-snapshots {shlex.quote(nodeid)}"
        return f"{HINT_PREFIX} run this to write it, then review and commit the file:\n  {command}"
    command = f"pytest --agentloom-update-snapshots {shlex.quote(nodeid)}"
    return f"{HINT_PREFIX} if the change is intended, run:\n  {command}"


@dataclass(frozen=True)
class SnapshotOptions:
    """How one assertion builds its snapshot: with the requests sent or not, and the volatile values."""

    requests: bool = True
    exclude: tuple[str, ...] = ()
    matchers: dict[str, Any] = field(default_factory=dict)
    #: paths passed to this assertion itself must reach something (marker and ini defaults need not)
    strict_paths: tuple[str, ...] = ()
    verbose: int = 0

    @classmethod
    def read(cls, setting: Callable[[str], tuple[Any, str]], *, verbose: int) -> SnapshotOptions:
        """A test's snapshot defaults, from ``setting(name) -> (value, where it came from)`` (marker, then ini;
        see ``_settings/option_table.py``); ``verbose`` (``-vv``) for diffs."""
        matchers = setting("snapshot_matchers")[0]
        if not isinstance(matchers, dict) and matchers:  # ini lines (none: no matchers, and no import for them)
            from .volatile import matchers_from_lines

            matchers = matchers_from_lines(matchers, "ini agentloom_snapshot_matchers")
        return cls(requests=bool(setting("snapshot_requests")[0]), exclude=tuple(setting("snapshot_exclude")[0]),
                   matchers=dict(matchers), verbose=verbose)

    def data(self, subject: Any) -> tuple[dict[str, Any], dict[str, str] | None]:
        """The snapshot of ``subject`` and its step -> output key table (``None`` for a plain value).

        A run's volatile values are applied to its full data, before each output is written once
        (:mod:`.shape`); a plain value's paths start at the value itself.
        """
        from .volatile import apply_volatile

        if not is_run(subject):
            value = to_plain(subject)
            if self.exclude or self.matchers:
                value = apply_volatile(value, self.exclude, self.matchers, strict=self.strict_paths)
            return {"format_version": FORMAT_VERSION, "value": value}, None
        outputs = output_paths(subject)
        data = full_data(subject, requests=self.requests)
        if self.exclude or self.matchers:
            data = apply_volatile(data, self.exclude, self.matchers, strict=self.strict_paths, outputs=outputs)
        return compact(data, outputs), outputs

    def upgraded(self, stored: dict[str, Any], outputs: dict[str, str]) -> dict[str, Any]:
        """A format-1 file's data as this format writes it, this assertion's volatile values applied again
        (so a value its matchers now also cover reads as the placeholder, as in the run's data)."""
        from .volatile import apply_volatile

        if self.exclude or self.matchers:
            stored = apply_volatile(stored, self.exclude, self.matchers, outputs=outputs)
        return upgrade(stored, outputs)


# -- the session ------------------------------------------------------------------------------------------


@dataclass
class SnapshotSession:
    """Which snapshot files this process used, wrote or must not report as unused.

    ``roots`` are the snapshot folders seen; ``protected`` are name prefixes of
    tests that did not pass (their snapshots may simply not have been reached),
    and folders (ending in ``/``) of test modules that were not collected.
    """

    update: bool = False
    create: bool = False
    #: a recording session: missing snapshots are written (``create``), and hints name the command that
    #: records and updates together (see :func:`update_hint`)
    recording: bool = False
    used: set[str] = field(default_factory=set)
    created: set[str] = field(default_factory=set)
    updated: set[str] = field(default_factory=set)
    roots: set[str] = field(default_factory=set)
    protected: set[str] = field(default_factory=set)
    owners: dict[str, str] = field(default_factory=dict)  # file -> the test that used it (in this process)
    clashes: list[str] = field(default_factory=list)  # files tests of two xdist workers both used (controller)
    mismatched: set[str] = field(default_factory=set)  # tests (in this process) whose snapshot did not match
    migrated: set[str] = field(default_factory=set)  # files of an older format rewritten in this one (update)

    @property
    def written(self) -> set[str]:
        return self.created | self.updated | self.migrated

    def _refresh_command(self, nodeid: str) -> str:
        return (f"pytest {'--agentloom-record ' if self.recording else ''}--agentloom-update-snapshots "
                f"'{nodeid}'")

    def assert_match(self, path: Path, subject: Any, *, label: str, nodeid: str,
                     options: SnapshotOptions | None = None) -> None:
        """Compare ``subject`` (a run's result or a plain value) with the file at ``path`` (or write it under
        create/update); raise AssertionError.

        The file is read (libyaml's parser) and compared with the snapshot's data as it is: such data reads
        back from its YAML as written (:mod:`.dumper`; tests/plugin/test_snapshot_dumper.py checks it), so the
        text is made only when a file is written (the rare document that would not read back as written is
        written and read back first). A format-1 file is read in the current shape (:mod:`.shape`) and
        rewritten only under update (noted in :attr:`migrated`).
        """
        __tracebackhide__ = True
        claim_file(self.owners, path, nodeid, what="snapshot")
        options = options or SnapshotOptions()
        self.used.add(str(path))
        data, outputs = options.data(subject)
        shown = _display(path)
        if path.is_dir():
            raise ArtifactError("Snapshot", "it is a directory, not a file", file=shown,
                                hint=f"remove the directory, then run {self._refresh_command(nodeid)}.")
        try:
            stored_text = read_text_capped(path, max_bytes=_MAX_BYTES, what="YAML file")
        except DataReadError as exc:
            stored_text = self._unreadable(exc, path, nodeid)
        except FileNotFoundError:
            if self.update or self.create:
                write_text_atomic(path, dump_yaml(data), durable=True)
                self.created.add(str(path))
                return
            raise AssertionError(
                f"Snapshot '{label}' does not exist: {shown}\n"
                f"{update_hint(nodeid, missing=True)}"
            ) from None
        stored = self._stored(stored_text, path, nodeid)
        agrees = fast_dumper_agrees(data)
        # odd characters (a line separator reads back as a space): compared as the file would read them back
        read_back = data if agrees else load_yaml(dump_yaml(data, agrees=False), file=path)
        if stored == read_back:
            return
        version = stored.get("format_version") if isinstance(stored, dict) else None
        old = isinstance(stored, dict) and version in OLD_FORMATS and outputs is not None
        reshaped = without_reply_texts(stored) if version == FORMAT_VERSION and outputs is not None else None
        if old and outputs is not None:
            stored = options.upgraded(stored, outputs)
        elif reshaped is not None:  # written before reply texts were left out: read as written now
            stored, old = reshaped, True
            version = "2 with reply texts"
        elif version != FORMAT_VERSION and not self.update:
            self.mismatched.add(nodeid)
            raise AssertionError(
                f"Snapshot '{label}' has format_version {version!r}, this plugin writes {FORMAT_VERSION}: {shown}\n"
                f"{update_hint(nodeid, recording=self.recording)}"
            )
        if old or _may_hold_markers(stored_text):
            stored, fresh = _as_compared(stored), _as_compared(read_back)
        else:  # nothing in the file to make alike: the data differ as they are (two walks of a big state saved)
            fresh = read_back
        if stored == fresh:
            if old and self.update:  # the run is unchanged: only the format is new
                write_text_atomic(path, dump_yaml(data, agrees=agrees), durable=True)
                self.migrated.add(str(path))
            return  # also when only the secrets behind markers differ: the file is left as it is
        if self.update:
            write_text_atomic(path, dump_yaml(data, agrees=agrees), durable=True)
            self.updated.add(str(path))
            if old:
                self.migrated.add(str(path))
            return
        notes = {**output_notes(stored), **output_notes(fresh)}  # which step's output a state key holds
        report = diff_report(stored, fresh, verbose=options.verbose, notes=notes)
        body = "\n".join(f"  {line}" for line in report.lines)
        self.mismatched.add(nodeid)
        note = (f"  (the file is in format {version}; --agentloom-update-snapshots rewrites it in format "
                f"{FORMAT_VERSION}, each output stored once)\n" if old else "")
        raise AssertionError(
            f"Snapshot '{label}' does not match {shown} ({report.places}, stored -> now):\n{body}\n{note}"
            f"{update_hint(nodeid, recording=self.recording)}"
        )

    def _stored(self, text: str, path: Path, nodeid: str) -> Any:
        """The stored file's data; ``None`` for a corrupted file under update (which then rewrites it)."""
        __tracebackhide__ = True
        try:
            return load_yaml(text, file=path)
        except DataReadError as exc:
            self._unreadable(exc, path, nodeid)
            return None

    def _unreadable(self, exc: DataReadError, path: Path, nodeid: str) -> str:
        """A snapshot that cannot be read fails the test, naming the file; under update it is written again."""
        __tracebackhide__ = True
        if not self.update:
            raise ArtifactError("Snapshot", f"{exc.problem}{exc.at_line}", file=_display(path), hint=(
                f"run {self._refresh_command(nodeid)} to write it again (then review the "
                "diff), or restore it from version control.")) from None
        return ""

    def protect(self, prefix: Path, *, folder: bool = False) -> None:
        """Keep ``prefix``'s snapshots (``prefix.yaml``, ``prefix.<name>.yaml``), or a whole folder, unreported."""
        self.protected.add(str(prefix) + ("/" if folder else ""))

    def merge(self, other: dict[str, list[str]]) -> None:
        """Add what an xdist worker reported (see :meth:`to_wire`), noting files two workers' tests both used."""
        for entry in other.get("owners", ()):
            path, _, nodeid = entry.partition("\t")
            owner = self.owners.setdefault(path, nodeid)
            if owner != nodeid:
                self.clashes.append(f"{_display(Path(path))}: {owner} and {nodeid}")
        self.used.update(other.get("used", ()))
        self.created.update(other.get("created", ()))
        self.updated.update(other.get("updated", ()))
        self.migrated.update(other.get("migrated", ()))
        self.roots.update(other.get("roots", ()))
        self.protected.update(other.get("protected", ()))

    def to_wire(self) -> dict[str, list[str]]:
        return {
            "used": sorted(self.used),
            "created": sorted(self.created),
            "updated": sorted(self.updated),
            "migrated": sorted(self.migrated),
            "roots": sorted(self.roots),
            "protected": sorted(self.protected),
            "owners": sorted(f"{path}\t{nodeid}" for path, nodeid in self.owners.items()),
        }

    def unused(self) -> list[Path]:
        """Snapshot files under the known roots that no test used (nor a test that failed or was skipped); a drift
        check's judge verdicts are left out (see :data:`DRIFT_VERDICT`)."""
        found = []
        for root in sorted(self.roots):
            base = Path(root)
            if not base.is_dir():
                continue
            for path in sorted(base.rglob("*.yaml")):
                name = str(path)
                if name in self.used or self._is_protected(path) or f".{DRIFT_VERDICT}." in path.name:
                    continue
                found.append(path)
        return found

    def _is_protected(self, path: Path) -> bool:
        stem = str(path)[: -len(".yaml")]
        for prefix in self.protected:
            if prefix.endswith("/"):
                if Path(prefix) in path.parents:
                    return True
            elif stem == prefix or stem.startswith(prefix + "."):
                return True
        return False


def _as_compared(data: Any) -> Any:
    """A snapshot as compared: every redaction marker alike (``<REDACTED:sha256=…>`` means "a redacted value",
    whichever secret gave it), so a replay with a dummy secret passes a snapshot recorded with the real one.
    ``AGENTLOOM_SECRET_MARKERS=exact`` compares the digests too (two different secrets then differ)."""
    return data if POLICY.exact_markers() else POLICY.alike(data)


def _may_hold_markers(text: str) -> bool:
    """Whether a stored file's text may hold a redaction marker (or the replay form markers become).

    When it holds neither, making markers alike cannot make the two sides equal (the stored side has no
    marker to match, and no ``<REDACTED>`` for a fresh marker to become), so the walk is skipped.
    """
    return POLICY.marker_prefix in text or POLICY.replay_marker in text


def display_path(path: Path) -> str:
    """``path`` relative to the current directory when it can be, as messages show a file."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


_display = display_path
