import os
import tempfile

import pytest

pytest_plugins = ["pytester"]

# markers (registered in pyproject.toml) that make a test slow too, so `-m "not slow"` leaves it out
_SLOW_BY_KIND = ("xdist", "bench")


def pytest_configure(config):
    """Run records of library runs in tests go to a temporary folder, not ./agentloom_runs of the repository."""
    if not os.environ.get("AGENTLOOM_RUNS_DIR"):
        os.environ["AGENTLOOM_RUNS_DIR"] = tempfile.mkdtemp(prefix="agentloom-test-runs-")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """An xdist or bench test is slow as well: added before ``-m`` deselects (pytest's own hook runs after).

    In ``tox -e lowest`` (``AGENTLOOM_LOWEST`` set) the ``newest_sdks`` tests are skipped: they check the fake
    servers against the SDKs' own types of today, which the floors' older SDKs predate.
    """
    lowest = os.environ.get("AGENTLOOM_LOWEST")
    for item in items:
        if any(item.get_closest_marker(name) for name in _SLOW_BY_KIND):
            item.add_marker(pytest.mark.slow)
        if lowest and item.get_closest_marker("newest_sdks"):
            item.add_marker(pytest.mark.skip(reason="checks today's SDK types; the floors' SDKs predate them"))


@pytest.fixture(autouse=True)
def _forget_noted_provider_keys():
    """Each test starts with no provider key noted (providers note theirs when built, for the whole process)."""
    from pytest_agentloom._redaction.api_keys import forget_noted_keys

    forget_noted_keys()
    yield
