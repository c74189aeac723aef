"""An embed step recorded against the fake OpenAI-compatible server, replayed offline with the same vectors."""

from __future__ import annotations

import textwrap

from tests.replay.helpers import CANARY_KEY, Project
from tests.servers.fake_llm import fake_vector

EMBED_FLOW = """\
name: search
state: {docs: ["the cat sat", "a dog"]}
steps:
  - {id: vec, type: embed, model: text-embedding-3-small, inputs: state.docs, output: vectors}
"""

EMBED_TEST = textwrap.dedent("""\
    import json
    import os

    def test_search(agentloom):
        result = agentloom.run("search.yaml")
        assert result.status == "success", result.steps
        with open(os.environ["RESULT_FILE"], "a") as out:
            out.write(json.dumps(result.state["vectors"]) + "\\n")
    """)


def test_an_embed_step_replays_from_its_cassette_with_the_same_vectors(project: Project) -> None:
    import json

    project.pytester.makefile(".yaml", search=EMBED_FLOW)
    project.pytester.makepyfile(test_search=EMBED_TEST)
    results = project.path / "results.jsonl"
    project.monkeypatch.setenv("RESULT_FILE", str(results))
    project.live()
    project.run("test_search.py", "--agentloom-record").assert_outcomes(passed=1)
    assert [request.route for request in project.server.requests] == ["openai_embed"]
    cassette = project.cassette("test_search.py/test_search.yaml").read_text()
    assert "/v1/embeddings" in cassette and CANARY_KEY not in cassette

    project.offline()
    project.run("test_search.py").assert_outcomes(passed=1)
    recorded, replayed = [json.loads(line) for line in results.read_text().splitlines()]
    assert recorded == replayed == [fake_vector("the cat sat"), fake_vector("a dog")]
