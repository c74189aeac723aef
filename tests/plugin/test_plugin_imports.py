"""Loading the plugin imports neither the provider SDKs nor deepdiff."""

from __future__ import annotations

import pytest


def test_loading_the_plugin_imports_no_sdk(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_modules="""
        import sys

        def test_modules(agentloom):
            heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("openai", "anthropic", "deepdiff", "vcr"))
            assert heavy == []
    """)
    result = pytester.runpytest_subprocess("-p", "agentloom", "-p", "no:anyio")
    result.assert_outcomes(passed=1)
