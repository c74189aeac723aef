"""Property-based fuzzing of a workflow's control logic (docs/fuzzing.md).

``scripts(workflow, tools=...)`` is a hypothesis strategy of :class:`FuzzScript` values: for each model
step (``llm_call`` and ``agent``), replies of the right kind and the wrong kind, then one reply given every
time after. :func:`assert_invariants` says what must hold for every run, whatever the model answered::

    @settings(max_examples=50, derandomize=True)
    @given(script=scripts("triage.yaml", tools=TOOLS))
    def test_any_model(script):
        assert_invariants(script.run(tools=TOOLS))

``scripts`` needs hypothesis (``pip install pytest-agentloom[fuzz]``) and imports it on first use; the
invariants need nothing more, and the plugin imports neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

#: The one list of this package's public names, by the module each is defined in (imported on first use).
#: ``__all__`` and the names a type checker sees (below) come from it; tests/test_public_api.py checks both.
_EXPORTS = {
    "._invariants": ("DEFECT_CODES", "DOCUMENTED_ENDINGS", "assert_invariants", "check_budget", "check_caps",
                     "check_no_defects", "check_no_secrets", "check_sandbox", "check_termination",
                     "check_tool_policy", "invariant_problems"),
    "._scripts": ("FuzzScript", "scripts"),
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:
    from ._invariants import DEFECT_CODES as DEFECT_CODES
    from ._invariants import DOCUMENTED_ENDINGS as DOCUMENTED_ENDINGS
    from ._invariants import assert_invariants as assert_invariants
    from ._invariants import check_budget as check_budget
    from ._invariants import check_caps as check_caps
    from ._invariants import check_no_defects as check_no_defects
    from ._invariants import check_no_secrets as check_no_secrets
    from ._invariants import check_sandbox as check_sandbox
    from ._invariants import check_termination as check_termination
    from ._invariants import check_tool_policy as check_tool_policy
    from ._invariants import invariant_problems as invariant_problems
    from ._scripts import FuzzScript as FuzzScript
    from ._scripts import scripts as scripts
