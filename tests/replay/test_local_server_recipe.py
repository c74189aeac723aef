"""The "Record against a local server, replay in CI" recipe of docs/record-and-replay.md, run as written:
each ``pytest`` line of its block, with its environment, against the fake server on 127.0.0.1 (the docs'
base URL swapped for the server's), then the replay with no server, no base URL and no key."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.replay.helpers import Project

PAGE = Path(__file__).resolve().parents[2] / "docs" / "record-and-replay.md"


def recipe() -> list[tuple[dict[str, str], list[str]]]:
    """``(environment, pytest arguments)`` of each ``pytest`` command of the recipe's block, in order."""
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("## Record against a local server, replay in CI"):]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None
    commands = []
    for line in block.group(1).splitlines():
        words = shlex.split(line, comments=True)
        env = {}
        while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        if words[:1] == ["pytest"]:
            commands.append((env, words[1:]))
    return commands


@pytest.mark.slow
def test_the_recipe_records_against_a_local_server_and_replays_without_it(project: Project) -> None:
    (record_env, record_args), (replay_env, replay_args) = recipe()
    assert "--agentloom-record" in record_args and replay_env == {} and "--agentloom-record" not in replay_args
    project.pytester.mkdir("tests")
    (project.path / "test_support.py").rename(project.path / "tests" / "test_support.py")
    (project.path / "tests" / "flow.yaml").write_text((project.path / "flow.yaml").read_text())
    for name, value in record_env.items():
        if name.endswith("_BASE_URL"):
            assert value.startswith("http://127.0.0.1:")  # a local server, as the recipe says
            value = project.server.openai_base_url
        project.monkeypatch.setenv(name, value)
    project.server.plan("openai", "bug", "We are on it.")
    project.run(*record_args).assert_outcomes(passed=1)
    assert project.server.pending() == 0
    cassette = project.cassette("tests/test_support.py/test_support.yaml").read_text()
    assert record_env["OPENAI_API_KEY"] not in cassette

    project.offline()  # the server stopped, no key, no base URL: CI
    project.run(*replay_args).assert_outcomes(passed=1)
