"""What the ``agentloom`` fixture adds for paused runs and secrets: ``resume`` and ``assert_no_secrets``.

Both work on what a test's runs left behind: the harness's temporary folder
(run records, checkpoints), the test's cassette and snapshot files, and the
results it returned.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.clock import VirtualClock
from ..errors import UsageError

if TYPE_CHECKING:
    from ..engine.result import WorkflowResult
    from .harness import AgentloomHarness

__all__ = ["check_no_secrets", "files_written", "pending_writes", "resume_in_test"]


def resume_in_test(harness: AgentloomHarness, result: WorkflowResult, *, approve: bool | str | None = True,
                   state: Mapping[str, Any] | None = None, provider: Any = None, tools: Any = None) -> WorkflowResult:
    """Resume ``result`` from its saved checkpoint, with the workflow, provider and tools of its run.

    ``approve=True``/``False`` approves or rejects the gate the run waits at;
    ``None`` resumes without a decision. ``state`` puts values back (redacted
    keys come back as markers otherwise). Runs on a fresh virtual clock.
    """
    from ..engine.checkpoints import resume_workflow

    if result.checkpoint is None and result.checkpoint_path is None:
        raise UsageError(
            f"agentloom.resume() got run '{result.run_id}' (status {result.status.value}), which has no checkpoint.\n"
            "How to fix: resume a run that paused at an approval gate, or run with config checkpoint: true."
        )
    from .harness import virtual_wall_clock

    inputs = getattr(harness, "_run_inputs", {}).get(result.run_id, {})
    clock = VirtualClock()
    decision: bool | str | None = approve
    return resume_workflow(
        result, decision=decision, state=state,
        provider=provider if provider is not None else inputs.get("provider"),
        tools=tools if tools is not None else inputs.get("tools"),
        workflow=inputs.get("workflow"), clock=clock, runs_dir=harness.run_dir, wall_clock=virtual_wall_clock(clock),
    )


def files_written(harness: AgentloomHarness) -> list[Path]:
    """Every file this test's runs may have written: its tmp folder, its cassette, its snapshots."""
    files: list[Path] = []
    for root in (harness.tmp_path,):
        if root.is_dir():
            files.extend(path for path in sorted(root.rglob("*")) if path.is_file())
    cassette = getattr(harness, "_cassette", None)  # an existing cassette (an earlier recording) is searched;
    cassette_path = getattr(cassette, "path", None)  # what this test records is searched by pending_writes()
    if cassette_path is not None:
        from ..replay.tool_tape import tape_path

        files.extend(path for path in (Path(cassette_path), tape_path(cassette_path)) if path.is_file())
    if harness.snapshot_dir.is_dir():  # <test>.yaml and <test>.<name>.yaml; a parameter id's [...] is no glob
        stem = glob.escape(harness.snapshot_name)
        files.extend(sorted({*harness.snapshot_dir.glob(f"{stem}.yaml"), *harness.snapshot_dir.glob(f"{stem}.*.yaml")}))
    return list(dict.fromkeys(files))


def pending_writes(harness: AgentloomHarness) -> dict[str, str]:
    """What the test's cassette and tool recording will write when the test ends, rendered now (scrubbed)."""
    texts: dict[str, str] = {}
    cassette = getattr(harness, "_cassette", None)
    session = getattr(cassette, "session", None)
    if session is not None and session.needs_write():
        texts[f"{session.config.path} (cassette, written when the test ends)"] = session.render()
    tape = getattr(cassette, "tape", None)
    text = tape.pending_text() if tape is not None else None
    if tape is not None and text is not None:
        texts[f"{tape.path} (tool recording, written when the test ends)"] = text
    return texts


def _forms(value: str) -> list[str]:
    """The value as written, and as JSON writes it inside a string (escaped quotes, backslashes, unicode)."""
    forms = [value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]]
    return [form for form in dict.fromkeys(forms) if form]


def _position(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


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
            for form in _forms(secret):
                index = text.find(form)
                if index >= 0:
                    shown = secret if len(secret) <= 8 else secret[:4] + "…"
                    hits.append(f"  {name}: {shown!r} at {_position(text, index)}")
                    break
    if hits:
        raise AssertionError(
            f"secret value found in {len(hits)} place(s) the test's runs wrote:\n" + "\n".join(hits)
            + "\nHow to fix: mark the state key with state_schema: {<key>: {redact: true}} (or add a glob to "
            "AGENTLOOM_REDACT_STATE_KEYS)."
        )
