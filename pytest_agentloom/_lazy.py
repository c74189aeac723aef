"""Lazy re-exports for the public packages' ``__init__`` modules, from one list per package.

Loading the pytest plugin imports ``pytest_agentloom`` and some of its
subpackages; building every pydantic model and the whole engine at that
moment would tax every pytest run, even one that never uses a workflow. So
each public package names its exports once, by the module each comes from, and
imports that module only when one of its names is first used. The same list
gives the package's ``__all__``; the imports a type checker reads (under
``if TYPE_CHECKING:``) are checked against it by ``tests/test_public_api.py``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

__all__ = ["attach"]


def attach(package: str, exports: Mapping[str, Sequence[str]], *, own: Sequence[str] = ()
           ) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for ``package``.

    ``exports`` maps a module (relative to ``package``, as ``importlib.import_module`` takes it) to the
    public names it defines; ``own`` are public names the package's ``__init__`` defines itself.
    """
    namespace = importlib.import_module(package).__dict__
    where: dict[str, str] = {}
    for module, names in exports.items():
        for name in names:
            if name in where or name in own:
                raise ValueError(f"{package} exports {name!r} twice ({where.get(name, 'itself')} and {module})")
            where[name] = module

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        # the public names, the public subpackages imported so far and the module's dunders: not what
        # __init__ imports for itself (``annotations``, ``TYPE_CHECKING``, ``attach``), nor private names
        shown = {name for name, value in namespace.items()
                 if name.startswith("__") or (isinstance(value, ModuleType) and not name.startswith("_"))}
        return sorted({*shown, *where, *own})

    return __getattr__, __dir__, sorted([*where, *own])
