"""Write the expected results of the compatibility corpus by running upstream ``agentloom`` 0.4.0 once.

Not a test: CI has no upstream installation, so its outputs are committed under
``tests/compat/expected/`` and ``test_upstream_corpus.py`` compares our engine with them.
Run it again only to refresh them, with a Python that has ``agentloom==0.4.0``::

    python -m venv /tmp/upstream && /tmp/upstream/bin/pip install agentloom==0.4.0
    /tmp/upstream/bin/python tests/compat/make_expected.py

Every workflow runs on upstream's own ``MockProvider`` (its default reply, ``Mock response``,
for every call the responses have no entry for), with the gateway's rate limiter lifted (it
would only add waiting), from the workflow's own folder (upstream resolves ``workflow_path``
and ``responses_file`` against the current directory).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE / "upstream_examples"
FIXTURES = HERE / "fixtures"
EXPECTED = HERE / "expected"

#: upstream examples that run to the end on 0.4.0's mock without network, files or custom tools
EXAMPLES_COMPARED = [
    "01_simple_qa", "02_chain_of_thought", "03_router_workflow", "05_content_moderation", "08_contract_analysis",
    "16_circuit_breaker_demo", "20_multimodal_base64", "25_streaming_qa", "27_array_index", "28_checkpoint_resume",
    "31_record_and_replay",
]
FIXTURES_COMPARED = ["config_keys", "subworkflows", "hash_keys", "base64_short"]

#: the distinct replies of fixtures/hash_keys.json, keyed by upstream's prompt hash of each call's messages
HASHED_REPLIES = [
    ([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Explain vector clocks."}],
     "Counters per process, merged on every message."),
    ([{"role": "user", "content": "Critique: Counters per process, merged on every message."}],
     "It skips how concurrent events are detected."),
]


def write_hash_recording() -> None:
    from agentloom.providers.mock import prompt_hash

    entries = {prompt_hash(messages): {"content": text, "model": "gpt-4o-mini", "finish_reason": "stop",
                                       "usage": {"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16}}
               for messages, text in HASHED_REPLIES}
    (FIXTURES / "hash_keys.json").write_text(json.dumps(entries, indent=2) + "\n", encoding="utf-8")


def run_upstream(path: Path) -> dict[str, object]:
    import anyio
    from agentloom.core.engine import WorkflowEngine
    from agentloom.core.parser import WorkflowParser
    from agentloom.core.state import StateManager
    from agentloom.providers.gateway import ProviderGateway
    from agentloom.providers.mock import MockProvider
    from agentloom.tools.builtins import register_builtins
    from agentloom.tools.registry import ToolRegistry

    os.chdir(path.parent)
    workflow = WorkflowParser.from_yaml(path.name)
    gateway = ProviderGateway()
    mock = MockProvider(responses_file=workflow.config.responses_file, workflow_name=workflow.name)
    gateway.register(mock, priority=0, max_rpm=10**9, max_tpm=10**12)
    tools = ToolRegistry()
    register_builtins(tools)
    engine = WorkflowEngine(workflow=workflow, state_manager=StateManager(initial_state=dict(workflow.state)),
                            provider_gateway=gateway, tool_registry=tools)

    async def go() -> object:
        try:
            return await engine.run()
        finally:
            await gateway.close()

    result = anyio.run(go)
    return {
        "status": result.status.value,  # type: ignore[attr-defined]
        "steps": {sid: r.status.value for sid, r in result.step_results.items()},  # type: ignore[attr-defined]
        "state": json.loads(json.dumps(result.final_state, default=str)),  # type: ignore[attr-defined]
    }


def main() -> int:
    write_hash_recording()
    EXPECTED.mkdir(exist_ok=True)
    files = [EXAMPLES / f"{name}.yaml" for name in EXAMPLES_COMPARED]
    files += [FIXTURES / f"{name}.yaml" for name in FIXTURES_COMPARED]
    for path in files:
        outcome = run_upstream(path)
        target = EXPECTED / f"{path.stem}.json"
        target.write_text(json.dumps(outcome, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"{path.name}: {outcome['status']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
