"""Where a cassette came from: when it was recorded, with what, and from which workflow files.

A cassette's ``provenance`` block records the package, Python and SDK
versions, the test and record mode, and a hash of every workflow file the
test ran. On replay the hashes are compared with the files as they are now: a
workflow edited since recording makes the cassette *possibly stale* (the
replay may still pass if the requests did not change), which the plugin
reports in the terminal summary.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["SDK_DISTRIBUTIONS", "Provenance", "stale_workflows", "workflow_hash"]

#: Distributions whose versions go into every cassette (looked up by metadata, never imported).
SDK_DISTRIBUTIONS = ("openai", "anthropic", "httpx", "httpx2", "vcrpy")


def workflow_hash(path: str | Path) -> str:
    """``sha256:<hex>`` of a workflow file, with line endings normalised so a checkout on Windows agrees."""
    data = Path(path).read_bytes().replace(b"\r\n", b"\n")
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


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


def stale_workflows(recorded: Provenance | None, current: Mapping[str, str]) -> list[str]:
    """The workflow files run now whose hash differs from (or is missing in) the recorded provenance."""
    if recorded is None:
        return []
    return sorted(name for name, digest in current.items() if recorded.workflows.get(name) != digest)
