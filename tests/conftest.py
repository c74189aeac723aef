import os
import tempfile

pytest_plugins = ["pytester"]


def pytest_configure(config):
    """Run records of library runs in tests go to a temporary folder, not ./agentloom_runs of the repository."""
    if not os.environ.get("AGENTLOOM_RUNS_DIR"):
        os.environ["AGENTLOOM_RUNS_DIR"] = tempfile.mkdtemp(prefix="agentloom-test-runs-")
