"""Lazy re-exports for package ``__init__`` modules.

Loading the pytest plugin imports ``pytest_agentloom`` and some of its
subpackages; building every pydantic model and the whole engine at that
moment would tax every pytest run, even one that never uses a workflow. So
each package names its exports here and imports a submodule only when one of
its names is first used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["attach"]


def attach(package: str, exports: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``; ``exports`` maps a name to its relative module."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
