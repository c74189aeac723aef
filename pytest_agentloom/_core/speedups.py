"""One switch that turns every speed-up off at once, to bisect a bug to "ours" or "the fast path".

Each speed-up the package keeps (a kept event loop, a cache, an index in front of a
library's own lookup) is built on public APIs and gives the same answers as the plain
way it replaces. When a result looks wrong, setting ``AGENTLOOM_SPEEDUPS=0`` runs the
plain way everywhere: if the problem goes away, it is in a speed-up. Code asks
:func:`speedups_on` at the moment it chooses, so a test can flip the variable with
``monkeypatch.setenv`` and see the plain way at once.
"""

from __future__ import annotations

import os

__all__ = ["ENV_VAR", "speedups_on"]

#: The environment variable: ``0``, ``off``, ``false`` or ``no`` (any case) turn the speed-ups off.
ENV_VAR = "AGENTLOOM_SPEEDUPS"
_OFF = frozenset({"0", "off", "false", "no"})


def speedups_on() -> bool:
    """Whether the speed-ups are on (the default); see the module docs."""
    return os.environ.get(ENV_VAR, "1").strip().lower() not in _OFF
