"""``assert_no_secrets``: searching everything a test's runs wrote or printed for secret values.

It reads the test's temporary folder (run records, checkpoints), its cassette
and tool tape (as on disk, and as they will be written when the test ends) and
its snapshot files, plus the results as printed, and names each file and
position where a value appears in any of the forms a file may hold it: as
written, JSON-escaped, URL-encoded or base64-encoded (whole, or inside a
longer base64 text), the forms the writers replace
(:meth:`~pytest_agentloom._redaction.policy.RedactionPolicy.encoded_forms`).
"""

from __future__ import annotations

import glob
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._redaction.policy import POLICY
from ..errors import UsageError, render_message

if TYPE_CHECKING:
    from ._test_cassette import TestCassette

__all__ = ["check_no_secrets", "files_written", "pending_writes"]


def files_written(tmp_path: Path, snapshot_dir: Path, snapshot_name: str,
                  cassette: TestCassette | None) -> list[Path]:
    """Every file a test's runs may have written: its tmp folder, its cassette and tool tape, its snapshots."""
    files: list[Path] = []
    if tmp_path.is_dir():
        files.extend(path for path in sorted(tmp_path.rglob("*")) if path.is_file())
    if cassette is not None:  # an existing cassette (an earlier recording) is searched; what this test
        # records is searched by pending_writes()
        from ..replay._tool_tape import tape_path  # here: a test without a cassette never needs the tape module

        files.extend(path for path in (cassette.path, tape_path(cassette.path)) if path.is_file())
    if snapshot_dir.is_dir():  # <test>.yaml and <test>.<name>.yaml; a parameter id's [...] is no glob
        stem = glob.escape(snapshot_name)
        files.extend(sorted({*snapshot_dir.glob(f"{stem}.yaml"), *snapshot_dir.glob(f"{stem}.*.yaml")}))
    return list(dict.fromkeys(files))


def pending_writes(cassette: TestCassette | None) -> dict[str, str]:
    """What a test's cassette and tool recording will write when the test ends, rendered now (scrubbed)."""
    texts: dict[str, str] = {}
    session = cassette.session if cassette is not None else None
    if session is not None and session.needs_write():
        texts[f"{session.config.path} (cassette, written when the test ends)"] = session.render()
    tape = cassette.tape if cassette is not None else None
    text = tape.pending_text() if tape is not None else None
    if tape is not None and text is not None:
        texts[f"{tape.path} (tool recording, written when the test ends)"] = text
    return texts


def _position(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


def _forms(secret: str) -> list[tuple[str, str]]:
    """Each form of ``secret`` to search for, with how a hit is described (nothing for the raw value)."""
    written = set(POLICY.written_forms(secret))
    return [(form, "" if form == secret else " (JSON-escaped)" if form in written else " (encoded)")
            for form in POLICY.encoded_forms(secret)]


def check_no_secrets(values: Iterable[Any], files: Iterable[Path], texts: Mapping[str, str]) -> None:
    """Raise ``AssertionError`` naming each file (or printed result) and position where a value appears."""
    secrets = [str(value) for value in values if value is not None and str(value)]
    if not secrets:
        raise UsageError("assert_no_secrets() needs at least one non-empty value to search for")
    hits: list[str] = []
    sources: list[tuple[str, str]] = []
    for path in files:
        try:
            sources.append((str(path), path.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    sources.extend(texts.items())
    for name, text in sources:
        for secret in secrets:
            for form, how in _forms(secret):  # the forms the writers replace
                index = text.find(form)
                if index >= 0:
                    shown = secret if len(secret) <= 8 else secret[:4] + "…"
                    hits.append(f"  {name}: {shown!r}{how} at {_position(text, index)}")
                    break
    if hits:
        raise AssertionError(render_message(
            f"secret value found in {len(hits)} place(s) the test's runs wrote:", details=hits,
            hint="mark the state key with state_schema: {<key>: {redact: true}} (or add a glob to "
            "AGENTLOOM_REDACT_STATE_KEYS).",
        ))
