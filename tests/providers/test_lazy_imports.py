"""Loading the package, its providers and the gateway imports no SDK."""

import subprocess
import sys


def test_no_sdk_at_import():
    code = (
        "import sys, pytest_agentloom, pytest_agentloom.providers;"
        "from pytest_agentloom.providers import default_gateway; default_gateway();"
        "print(sorted(m for m in ('openai', 'anthropic', 'vcr', 'deepdiff') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
