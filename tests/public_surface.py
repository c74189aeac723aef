"""The public surface, written down: which modules users import, and the page that lists their names.

``docs/api.md`` is generated from the packages' ``__all__`` (one line per name: the first line of its
docstring), so the page cannot drift from the code; ``tests/test_public_api.py`` checks that it is current.
Regenerate it after changing a public list:

    python -m tests.public_surface
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
API_PAGE = ROOT / "docs" / "api.md"

#: The modules whose names users import (each has an ``__all__``); every other module of the package has a
#: name (or a folder) that starts with ``_``, and is internal.
PUBLIC_MODULES = (
    "pytest_agentloom",
    "pytest_agentloom.errors",
    "pytest_agentloom.engine",
    "pytest_agentloom.providers",
    "pytest_agentloom.tools",
    "pytest_agentloom.replay",
    "pytest_agentloom.testing",
    "pytest_agentloom.strategies",
)
#: Modules that are public as entry points (pyproject.toml names them), not for their Python names.
ENTRY_POINTS = {
    "pytest_agentloom.plugin": "the pytest plugin, registered as ``agentloom`` through the ``pytest11`` entry point: "
                               "its options, markers and fixtures: docs/cli.md and docs/fixture-and-assertions.md",
    "pytest_agentloom.cli": "the ``agentloom`` command (``[project.scripts]``): ``agentloom --help`` says what it does",
}

#: What a name without a docstring of its own is (a constant, an alias).
NO_DOCSTRING = {
    "__version__": "The version of the installed package.",
    "BUILTIN_TOOL_NAMES": "The names of the four built-in tools: ``http_request``, ``shell_command``, ``file_read``, "
                          "``file_write``.",
    "current_call": "The provider call in progress (a ``ContextVar`` of :class:`CallInfo`), read by the HTTP "
                    "layer to name a request in an error.",
    "HINT_PREFIX": "The words that start a message's hint (``How to fix:``), for code that reads messages.",
    "STEP_FAILURES": "The errors the engine treats as a step's failure: ``StepError`` and "
                     "``CassetteMismatchError`` (a replay error since it has one parent), for ``except``.",
    "DEFECT_CODES": "Step error codes no model's answer excuses (a router without a match, a template that "
                    "fails, a loop no cap stopped), each with what it means: ``check_no_defects`` reports them.",
    "DOCUMENTED_ENDINGS": "The (status, termination reason) pairs a run may end with (docs/errors.md).",
    "Message": "One message of a conversation sent to a model: ``role``, ``content``, an optional ``name``.",
}

INTRO = """\
# Public API

What you may import, module by module. Every name below is in its module's `__all__`; anything else,
in particular a module or folder whose name starts with `_`, is internal and may change in any release.
This page is generated from the code (`python -m tests.public_surface`), and `tests/test_public_api.py`
checks that it, the `__all__` lists and the lazy import tables agree.
"""


def markdown(text: str) -> str:
    """A docstring's reStructuredText markup as Markdown: ``x`` and :class:`~a.b.X` both become `x`, `X`."""
    text = re.sub(r":\w+:`~[\w.]*?\.?(\w+)`", r"`\1`", text)
    text = re.sub(r":\w+:`([^`]+)`", r"`\1`", text)
    return re.sub(r"``([^`]+)``", r"`\1`", text)


def first_line(value: object, name: str) -> str:
    if name in NO_DOCSTRING:
        return markdown(NO_DOCSTRING[name])
    own = vars(value).get("__doc__") if inspect.isclass(value) else getattr(value, "__doc__", None)
    doc = inspect.cleandoc(own) if own and (inspect.isclass(value) or inspect.isroutine(value)) else None
    if not doc:
        raise AssertionError(f"{name} has no docstring: give it one, or a line in NO_DOCSTRING (public_surface.py)")
    return markdown(" ".join(doc.split("\n\n")[0].split()))


def module_line(module_name: str) -> str:
    doc = inspect.getdoc(importlib.import_module(module_name)) or ""
    return " ".join(doc.split("\n\n")[0].split())


def render() -> str:
    lines = [INTRO]
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        lines += [f"## `{module_name}`", "", module_line(module_name), ""]
        for name in module.__all__:
            lines.append(f"- `{name}`: {first_line(getattr(module, name), name)}")
        lines.append("")
    lines += ["## Entry points", ""]
    lines += [f"- `{name}`: {markdown(what)}." for name, what in ENTRY_POINTS.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    API_PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {API_PAGE.relative_to(ROOT)}")
