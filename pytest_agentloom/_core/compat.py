"""The one module that uses another library's private names: each entry where no public API does the job.

Every entry says why no public API does it, what happens when the private thing is gone or
changed (never a wrong result: the public fallback, or a clear error), the upper bound
``pyproject.toml`` puts on the library, and the test that fails loudly when the library changes
(``tests/core/test_compat.py``). ``tests/test_architecture.py`` allows other libraries' private
names here and nowhere else.

pytest: running a test's protocol again, its reports kept rather than logged
    ``--agentloom-live`` runs a test N times and reports one aggregated test, and ``--agentloom-drift``
    runs a test replayed before pytest runs it live. Both run the item's setup, call and teardown
    themselves, with the reports returned instead of logged. pytest has no public function for it: the
    public hooks run the phases, but running an item a second time needs its fixture request made
    anew, which only ``_pytest.runner.runtestprotocol(item, log=False, nextitem=...)`` does (rerun
    plugins such as pytest-rerunfailures use it the same way). Without it (renamed, moved, other
    parameters) :func:`run_protocol` raises :class:`~pytest_agentloom.errors.UsageError` naming the
    pytest version, before anything runs. Bound: ``pytest<10``.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..errors import UsageError, render_message

__all__ = ["run_protocol"]


def run_protocol(item: Any, nextitem: Any) -> list[Any]:
    """``item``'s setup, call and teardown as pytest runs them, the reports returned and not logged; the
    teardown tears down up to what ``nextitem`` (an item, or a node standing for one) still needs."""
    runtestprotocol = _runtestprotocol()
    return list(runtestprotocol(item, log=False, nextitem=nextitem))


def _runtestprotocol() -> Any:
    """pytest's ``runtestprotocol``, if it still takes ``(item, log=, nextitem=)``; else a clear error."""
    try:
        from _pytest.runner import runtestprotocol

        inspect.signature(runtestprotocol).bind(object(), log=False, nextitem=None)
    except (ImportError, TypeError, ValueError):
        import pytest

        raise UsageError(
            render_message(
                "--agentloom-live repetitions and --agentloom-drift run a test more than once through pytest's own "
                f"protocol (_pytest.runner.runtestprotocol), which pytest {pytest.__version__} does not have as "
                "pytest-agentloom expects; nothing was run.",
                hint="install a pytest within pytest-agentloom's bound (pytest<10), or a pytest-agentloom "
                     "that supports this pytest.")
        ) from None
    return runtestprotocol
