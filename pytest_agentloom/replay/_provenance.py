"""Where a cassette came from: when it was recorded, with what, and from which workflow files.

A cassette's ``provenance`` block records the package, Python and SDK
versions, the test and record mode, and a hash of every workflow the test ran.
On replay the hashes are compared with the workflows as they are now: a
workflow changed since recording makes the cassette *possibly stale* (the
replay may still pass if the requests did not change), which the plugin
reports in the terminal summary.

The hash is of the workflow's *meaning* (:func:`workflow_meaning_hash`,
``parsed-sha256:...``): the definition as parsed, with the fields left at their
defaults omitted and keys sorted, its subworkflows' definitions, and the bytes
of the data files it reads (``responses_file``, attachments with a fixed local
path). A comment, a reformatting or a new key order changes none of it; a new
field of a later version, left at its default, neither. Cassettes recorded
before this hash existed carry ``sha256:...`` of the file's bytes: those are
compared with the file's bytes as they were, so an upgrade marks nothing stale
that was not, and the next re-recording writes the new hash.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["MEANING_PREFIX", "SDK_DISTRIBUTIONS", "Provenance", "format_time", "parse_time", "stale_workflows",
           "utc_now", "workflow_hash", "workflow_meaning_hash"]

#: Distributions whose versions go into every cassette (looked up by metadata, never imported).
SDK_DISTRIBUTIONS = ("openai", "anthropic", "httpx", "httpx2", "vcrpy")


def workflow_hash(path: str | Path) -> str:
    """``sha256:<hex>`` of a workflow file, with line endings normalised so a checkout on Windows agrees."""
    data = Path(path).read_bytes().replace(b"\r\n", b"\n")
    return "sha256:" + hashlib.sha256(data).hexdigest()


MEANING_PREFIX = "parsed-sha256:"

#: workflow file -> (the files its meaning depends on, their bytes' digests, its hash): a test suite
#: runs one workflow many times, and loading it for each run would cost more than reading its files again
#: (which tells any edit, as the test process's workflow cache does: no timestamp decides)
_MEANINGS: dict[str, tuple[tuple[Path, ...], tuple[str | None, ...], str]] = {}


def workflow_meaning_hash(path: str | Path) -> str:
    """``parsed-sha256:<hex>`` of what a workflow file means to the requests it can send (see the module docs).

    A file that does not load (the run reported why) gets :func:`workflow_hash` of its bytes instead.
    """
    # by the path as given when it is absolute (a loaded workflow's source is): resolving it on every run
    # cost more than the hash itself
    key = str(path) if Path(path).is_absolute() else str(Path(path).resolve())
    known = _MEANINGS.get(key)
    if known is not None and _stats(known[0]) == known[1]:
        return known[2]
    source = Path(path).resolve()
    from ..engine._format.loader import load_workflow_read
    from ..errors import WorkflowError

    try:
        workflow, texts = load_workflow_read(source)
    except WorkflowError:
        return workflow_hash(source)
    form, data_files = _canonical(workflow)
    text = json.dumps(form, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    digest = MEANING_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()
    files = tuple(sorted({*texts, *data_files}))
    stats = _stats(files)
    if _stats(tuple(sorted(texts))) == tuple(_digest(texts[path]) for path in sorted(texts)):
        _MEANINGS[key] = (files, stats, digest)  # kept only when the files still hold what was loaded
    return digest


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(workflow: Any) -> tuple[dict[str, Any], list[Path]]:
    """The parsed definition, its subworkflows' and its data files' digests (names relative to its folder)."""
    from ..engine._format.model import LLMCallStep

    files: dict[str, str] = {}
    paths: list[Path] = []
    wanted = [workflow.config.responses_file] if workflow.config.responses_file else []
    for step in workflow.steps:
        if isinstance(step, LLMCallStep):
            wanted += [part.source for part in step.attachments if part.fetch == "local" and "{" not in part.source]
    for name in wanted:
        path = workflow.resolve_path(name)
        paths.append(path)
        try:
            files[name] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            files[name] = "(unreadable)"
    children = {}
    for step_id, child in sorted(workflow.compiled.children.items()):
        children[step_id], child_paths = _canonical(child)
        paths += child_paths
    definition = _without_secrets(workflow, workflow.model_dump(mode="json", by_alias=True, exclude_defaults=True))
    return {"definition": definition, "subworkflows": children, "files": files}, paths


def _without_secrets(workflow: Any, value: Any) -> Any:
    """``value`` with the workflow's secret state defaults replaced: a hash of a definition holding a secret
    would let anyone who guesses the secret confirm it from a committed cassette."""
    from ..engine._format.redaction_patterns import redactor_for

    secrets = redactor_for(workflow).secret_values(workflow.state)
    if not secrets:
        return value

    def scrub(item: Any) -> Any:
        if isinstance(item, str):
            for secret in secrets:
                item = item.replace(secret, "<secret>")
            return item
        if isinstance(item, dict):
            return {key: scrub(inner) for key, inner in item.items()}
        if isinstance(item, list):
            return [scrub(inner) for inner in item]
        return item

    return scrub(value)


def _stats(files: tuple[Path, ...]) -> tuple[str | None, ...]:
    """Each file's digest now (``None``: gone or unreadable)."""
    found: list[str | None] = []
    for file in files:
        try:
            found.append(hashlib.sha256(file.read_bytes()).hexdigest())
        except OSError:
            found.append(None)
    return tuple(found)


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def utc_now() -> _dt.datetime:
    """The current time in UTC (the default clock of recording and of cassette ages)."""
    return _dt.datetime.now(_dt.UTC)


def format_time(moment: _dt.datetime) -> str:
    """``2026-01-31T12:00:00Z``: a provenance's ``recorded_at``."""
    return moment.astimezone(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def parse_time(text: str) -> _dt.datetime | None:
    """A ``recorded_at`` as an aware time (``None`` when it is missing or not a time)."""
    try:
        moment = _dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=_dt.UTC)


def _utc_now() -> str:
    return format_time(utc_now())


@dataclass(frozen=True)
class Provenance:
    """The provenance block of one cassette. ``workflows`` maps a file (relative to the rootdir) to its hash."""

    recorded_at: str
    test: str = ""
    record_mode: str = ""
    package_version: str = ""
    python: str = ""
    sdks: Mapping[str, str] = field(default_factory=dict)
    workflows: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def now(cls, *, test: str, record_mode: str, workflows: Mapping[str, str],
            clock: Callable[[], str] = _utc_now) -> Provenance:
        """Provenance for a cassette written now, by this interpreter and these SDKs."""
        sdks = {name: version for name in SDK_DISTRIBUTIONS if (version := _version(name))}
        return cls(
            recorded_at=clock(), test=test, record_mode=record_mode,
            package_version=_version("pytest-agentloom") or "unknown", python=platform.python_version(),
            sdks=sdks, workflows=dict(sorted(workflows.items())),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "recorded_at": self.recorded_at,
            "test": self.test,
            "record_mode": self.record_mode,
            "pytest_agentloom": self.package_version,
            "python": self.python,
            "sdks": dict(self.sdks),
            "workflows": dict(self.workflows),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Provenance:
        return cls(
            recorded_at=str(data.get("recorded_at", "")), test=str(data.get("test", "")),
            record_mode=str(data.get("record_mode", "")), package_version=str(data.get("pytest_agentloom", "")),
            python=str(data.get("python", "")), sdks=dict(data.get("sdks") or {}),
            workflows=dict(data.get("workflows") or {}),
        )


def stale_workflows(recorded: Provenance | None, current: Mapping[str, str],
                    file_hash: Callable[[str], str | None] | None = None) -> list[str]:
    """The workflows run now whose hash differs from (or is missing in) the recorded provenance.

    ``current`` holds meaning hashes; a recorded ``sha256:`` hash (a cassette from before them) is compared
    with ``file_hash(name)``, the hash of the file's bytes now.
    """
    if recorded is None:
        return []
    stale = []
    for name, digest in current.items():
        was = recorded.workflows.get(name)
        if was is not None and not was.startswith(MEANING_PREFIX) and file_hash is not None:
            digest = file_hash(name) or digest
        if was != digest:
            stale.append(name)
    return sorted(stale)
