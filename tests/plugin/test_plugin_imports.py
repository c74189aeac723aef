"""Loading the plugin imports neither the provider SDKs nor deepdiff."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_loading_the_plugin_imports_no_sdk(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_modules="""
        import sys

        def test_modules(agentloom):
            heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("openai", "anthropic", "deepdiff", "vcr"))
            assert heavy == []
    """)
    result = pytester.runpytest_subprocess("-p", "agentloom", "-p", "no:anyio")
    result.assert_outcomes(passed=1)


@pytest.mark.slow
def test_tests_without_the_plugin_import_no_engine_model(pytester: pytest.Pytester) -> None:
    """The setup hook merges the agentloom markers of every test: a test with none merges nothing, and the
    engine's models and pydantic stay unimported."""
    pytester.makepyfile(test_plain="""
        import sys

        def test_plain():
            pass

        def test_after():
            assert "pytest_agentloom.engine._format.model" not in sys.modules
            assert "pydantic" not in sys.modules  # nor pydantic itself (about 20 ms of every session's start)
    """)
    result = pytester.runpytest_subprocess("-p", "agentloom", "-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
