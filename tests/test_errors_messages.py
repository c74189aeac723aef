"""Every message is shaped by errors.render_message: no module types the hint's prefix by hand."""

from __future__ import annotations

from pathlib import Path

import pytest_agentloom
from pytest_agentloom.errors import HINT_PREFIX, render_message

PACKAGE = Path(pytest_agentloom.__file__).resolve().parent



def test_no_module_but_errors_py_types_the_hint_prefix() -> None:
    typed = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name == "errors.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "How to fix" in line:
                typed.append(f"{name}:{number}: {line.strip()}")
    assert not typed, "write these with errors.render_message(headline, ..., hint=...):\n" + "\n".join(typed)


def test_the_hint_goes_on_its_own_line_or_at_the_end_of_a_one_line_message() -> None:
    assert render_message("It broke.", [("file", "a.yaml"), ("step", None)], hint="mend it.") == (
        "It broke.\n  file: a.yaml\nHow to fix: mend it.")
    assert render_message("It broke.", hint="mend it.", inline=True) == "It broke. How to fix: mend it."
    assert render_message("It broke.", inline=True) == "It broke."
    assert HINT_PREFIX == "How to fix:"
