"""The ``agentloom`` section of a failed test's report: what each of its runs did, whatever the test asserted.

A plain ``assert result.status == "success"`` shows only ``'failed' == 'success'``; the reason (the step that
failed, its error naming the URL that did not answer, the cassette that was replayed) is in the result, which
the test never printed. So a failed test that ran workflows gets one section listing every run: its status
and termination reason, its failed (or paused) step with the step's error, and the cassette it used. It
goes to the report's ``sections`` (printed under the failure, beside captured output) and to the item's
``user_properties`` (a ``<property name="agentloom">`` in ``--junitxml``).

Everything in it comes from the results as they are reported, which hold redacted state and errors; the
raw values of the state's secrets are replaced by their markers once more, in case an error echoed one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["REPORT_SECTION", "runs_section"]

#: the section's name in the terminal and the junit property's name
REPORT_SECTION = "agentloom"
#: at most this many runs are listed (a loop of runs in one test says how many more there were)
_MAX_RUNS = 20
#: an error longer than this is cut (it is printed in full by assert_status)
_MAX_ERROR = 2000


def runs_section(results: Sequence[Any], cassettes: Mapping[str, str]) -> str | None:
    """The section's text for a test's ``results``, in order; ``cassettes``: run id -> the cassette it used
    (its path and record mode, as the summary names them). ``None`` when the test ran no workflow."""
    if not results:
        return None
    lines: list[str] = []
    total = len(results)
    for number, result in enumerate(results[:_MAX_RUNS], start=1):
        lines += _run_lines(result, f"run {number} of {total}", cassettes.get(result.run_id))
    if total > _MAX_RUNS:
        lines.append(f"... and {total - _MAX_RUNS} more run(s)")
    text = "\n".join(lines)
    for raw, marker in _secrets(results):
        text = text.replace(raw, marker)
    return text


def _run_lines(result: Any, title: str, cassette: str | None) -> list[str]:
    status, reason = result.status.value, result.reason.value
    lines = [f"{title}: workflow '{result.workflow}' (run {result.run_id}) ended {status} / {reason}"]
    if result.failed_step:
        lines.append(f"  failed step '{result.failed_step}'{_step_error(result.steps.get(result.failed_step))}")
    elif result.paused_step:
        lines.append(f"  paused at step '{result.paused_step}'")
    steps = ", ".join(f"{step_id}={step.status.value}" for step_id, step in result.steps.items())
    lines.append(f"  steps: {steps or '(none ran)'}")
    lines.append(f"  cassette: {cassette}" if cassette else "  cassette: none (the run was given its provider)")
    return lines


def _step_error(step: Any) -> str:
    """`` (code): error`` of a failed step, as ``assert_status`` prints it."""
    if step is None or not step.error:
        return ": (no error text)"
    shown = _cut(step.error)
    return f" ({step.error_code}): {shown}" if step.error_code else f": {shown}"


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_ERROR else text[:_MAX_ERROR] + f"... ({len(text) - _MAX_ERROR} more characters)"


def _secrets(results: Sequence[Any]) -> list[tuple[str, str]]:
    """(raw value, marker) of every redacted string of the results' states, longest first."""
    found: dict[str, str] = {}
    for result in results:
        raw = getattr(result, "unredacted_state", None)
        if isinstance(raw, Mapping):
            for value, marker in _pairs(raw, result.state, depth=0):
                found.setdefault(value, marker)
    return sorted(found.items(), key=lambda pair: -len(pair[0]))


def _pairs(raw: Any, shown: Any, depth: int) -> Iterator[tuple[str, str]]:
    """Walk the raw and the redacted state side by side: a string shown as another string was redacted."""
    if depth > 32:
        return
    if isinstance(raw, Mapping) and isinstance(shown, Mapping):
        for key, value in raw.items():
            if key in shown:
                yield from _pairs(value, shown[key], depth + 1)
    elif isinstance(raw, list | tuple) and isinstance(shown, list | tuple) and len(raw) == len(shown):
        for value, other in zip(raw, shown, strict=True):
            yield from _pairs(value, other, depth + 1)
    elif isinstance(shown, str) and raw != shown:  # redacted: a value, or a whole list or mapping, as one marker
        yield from ((leaf, shown) for leaf in _strings(raw, depth) if len(leaf) >= 4)


def _strings(value: Any, depth: int) -> Iterator[str]:
    if depth > 32:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(key, depth + 1)
            yield from _strings(item, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item, depth + 1)
