"""Tools of the triage workflow, for the Python tests and the YAML-only table alike."""

import pytest


def create_issue(title: str, reporter: str) -> dict:
    """A stand-in for the issue tracker: the issue id is derived from the title, so runs are repeatable."""
    return {"id": f"BUG-{sum(map(ord, title)) % 1000}", "title": title, "reporter": reporter}


@pytest.fixture
def agentloom_tools():
    return {"create_issue": create_issue}
