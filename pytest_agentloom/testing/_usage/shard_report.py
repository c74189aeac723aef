"""A shard's report, and ``agentloom combine``, which merges the reports of every shard of a suite.

A CI job that splits the suite across machines (pytest-shard, pytest-split) runs part of it on each: no shard
can tell which committed files the suite no longer uses, and each measures only its share of the coverage.
So each shard writes, with ``--agentloom-shard-report=PATH``, one JSON file: the suite it belongs to (a hash of
every test id collected from the files, before any plugin kept a shard of them), the tests it ran, the
snapshot, cassette and tool tape files its tests used or must keep, and its coverage, runs and outcomes (what
the review report shows, secrets already redacted). :func:`combine` checks that the files come from one
suite and this version, that together they ran every test, and then judges the unused files and writes the
coverage and report an unsharded run would have written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import HINT_PREFIX, ArtifactError, render_message
from .._snapshots.compare import SnapshotSession, display_path
from .cassettes import CassetteUsage

__all__ = ["FORMAT", "CombineOptions", "combine", "suite_id"]

FORMAT = "agentloom-shard-report/1"
_SHOWN_MISSING = 5  # test ids a "did not run" message lists


def suite_id(nodeids: Iterable[str]) -> str:
    """The suite's identity: a hash of its test ids (sorted, each once)."""
    return hashlib.sha256("\n".join(sorted(set(nodeids))).encode()).hexdigest()


def plugin_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pytest-agentloom")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree that is not installed
        return "unknown"


def relative_paths(rootdir: Path, paths: Iterable[str]) -> list[str]:
    """Absolute paths (a ``/`` at the end kept: a protected folder) relative to ``rootdir``, sorted."""
    usage = CassetteUsage(rootdir, "")
    return sorted(usage.relative(path) + ("/" if path.endswith("/") else "") for path in paths)


def absolute_paths(rootdir: Path, paths: Iterable[str]) -> set[str]:
    return {str(rootdir / path) + ("/" if path.endswith("/") else "") for path in paths}


# -- combine ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CombineOptions:
    """What ``agentloom combine`` was asked to do besides reporting unused files."""

    rootdir: Path
    delete_unused: bool = False
    warn_unused: bool = False
    show_coverage: bool = False
    fail_under: float | None = None
    json_path: Path | None = None
    report_path: Path | None = None


@dataclass
class _Combined:
    """The shards' reports added up."""

    suite: str = ""
    tests: int = 0
    ran: set[str] = field(default_factory=set)
    narrowed: list[str] = field(default_factory=list)  # the files of shards that ran less than their share
    snapshots: SnapshotSession = field(default_factory=SnapshotSession)
    cassettes: CassetteUsage | None = None
    review: list[Mapping[str, Any]] = field(default_factory=list)


def read_shard(path: Path) -> dict[str, Any]:
    """One shard's report; an ArtifactError naming the file when it is not one this version wrote."""
    shown = display_path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ArtifactError("Shard report", f"it cannot be read as JSON ({exc})", file=shown,
                            hint="pass the files pytest --agentloom-shard-report=PATH wrote, whole.") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise ArtifactError("Shard report", f"its format is {found!r}, this version reads {FORMAT!r}", file=shown,
                            hint="pass the files pytest --agentloom-shard-report=PATH wrote.")
    if data.get("plugin_version") != plugin_version():
        raise ArtifactError(
            "Shard report", f"pytest-agentloom {data.get('plugin_version')} wrote it, this is {plugin_version()}",
            file=shown, hint="run every shard and the combine with the same pytest-agentloom version.")
    return data


def combine(paths: Sequence[Path], options: CombineOptions) -> tuple[list[str], int]:
    """Merge the shards' reports: the lines to print and the exit status (0 passed, 1 failed)."""
    combined = _Combined()
    for path in paths:
        _add(combined, read_shard(path), path, options.rootdir)
    lines = [f"agentloom combine: {len(paths)} shard report{'s' if len(paths) != 1 else ''}, "
             f"{len(combined.ran)} of {combined.tests} tests run"]
    failed = False
    problem = _incomplete(combined)
    if problem is not None:
        lines += problem.splitlines()
        failed = True
    else:
        unused_lines, unused_failed = _unused(combined, options)
        lines += unused_lines
        failed = unused_failed
    if combined.review:
        review_lines, review_failed = _review(combined, options)
        lines += review_lines
        failed = failed or review_failed
    elif options.report_path or options.json_path or options.fail_under is not None:
        lines.append("agentloom combine: the shard reports hold no coverage (they were written by sessions "
                     "without it)")
        failed = True
    return lines, int(failed)


def _add(combined: _Combined, data: Mapping[str, Any], path: Path, rootdir: Path) -> None:
    suite = data.get("suite", {})
    if combined.suite and suite.get("sha256") != combined.suite:
        raise ArtifactError("Shard report", "it comes from another suite than the files before it (its tests "
                            "differ)", file=display_path(path),
                            hint="pass the reports of one CI run, whose shards collected the same tests.")
    combined.suite, combined.tests = suite.get("sha256", ""), int(suite.get("tests", 0))
    combined.ran.update(data.get("ran", ()))
    if data.get("narrowed"):
        combined.narrowed.append(display_path(path))
    snapshots = data.get("snapshots", {})
    combined.snapshots.merge({key: sorted(absolute_paths(rootdir, snapshots.get(key, ())))
                              for key in ("used", "roots", "protected")})
    cassettes = data.get("cassettes", {})
    if combined.cassettes is None:
        combined.cassettes = CassetteUsage(rootdir, str(cassettes.get("cassette_dir", "cassettes")))
    combined.cassettes.merge(cassettes)
    if data.get("review") is not None:
        combined.review.append(data["review"])


def _incomplete(combined: _Combined) -> str | None:
    """Why the shards together are not the whole suite, or ``None`` when they are."""
    if combined.narrowed:
        return render_message(
            "agentloom combine: some shards ran less than their share (-k, -m, node ids, -x, an interruption or a "
            "collection error): unused files are not judged.", details=[f"  {name}" for name in combined.narrowed],
            hint="run each shard on the whole suite's folders, with only the shard plugin's options.")
    if suite_id(combined.ran) == combined.suite:
        return None
    missing = combined.tests - len(combined.ran)
    return render_message(
        f"agentloom combine: the shards ran {len(combined.ran)} of the suite's {combined.tests} tests "
        f"({missing} did not run in any shard): unused files are not judged.",
        hint="pass the report of every shard of the CI run (one per shard id or group).")


def _unused(combined: _Combined, options: CombineOptions) -> tuple[list[str], bool]:
    """List (or delete) the suite's unused snapshot, cassette and tool tape files; whether they fail."""
    cassettes = combined.cassettes
    assert cassettes is not None  # at least one shard was read
    found = [("snapshot", combined.snapshots.unused()), ("cassette", cassettes.unused())]
    verb = "deleted" if options.delete_unused else "unused"
    lines: list[str] = []
    for kind, paths in found:
        if paths:
            lines.append(f"agentloom: {len(paths)} {kind} file{'s' if len(paths) != 1 else ''} {verb}:")
            lines += [f"  {display_path(path)}" for path in paths]
    if options.delete_unused:
        _delete_snapshots(found[0][1])
        cassettes.delete(found[1][1])
        return lines, False
    renames = cassettes.rename_hints(found[1][1])
    if renames:
        lines += ["agentloom: a test that failed with no cassette may be a renamed one; to keep its recording, run:",
                  *renames]
    failed = any(paths for _, paths in found) and not options.warn_unused
    if failed:
        lines.append(f"{HINT_PREFIX} delete them, or run: agentloom combine --delete-unused PATH... "
                     "(--warn-unused only reports them)")
    return lines, failed


def _delete_snapshots(paths: Iterable[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)
        if path.parent.is_dir() and not any(path.parent.iterdir()):
            path.parent.rmdir()


def _review(combined: _Combined, options: CombineOptions) -> tuple[list[str], bool]:
    from .._review.review import Review, ReviewSettings

    settings = ReviewSettings(options.show_coverage, options.fail_under, options.json_path, options.report_path)
    review = Review(settings, options.rootdir)
    for wire in combined.review:
        review.merge(wire)
    written = review.write_files()
    return review.summary_lines(written), review.fails()
