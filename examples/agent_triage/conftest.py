"""Registers the help desk's tools for every run in this folder, the YAML-only table included."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from triage_desk import Desk


@pytest.fixture
def desk() -> Desk:
    return Desk()


@pytest.fixture
def agentloom_tools(desk: Desk) -> dict[str, Any]:
    return desk.by_name()
