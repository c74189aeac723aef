"""The per-process workflow cache: one load per unchanged file, one object nobody can change, edits noticed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pytest_agentloom import (
    Scripted,
    VirtualClock,
    Workflow,
    WorkflowError,
    WorkflowResult,
    load_workflow,
    run_workflow,
)
from pytest_agentloom.engine._format.loader import load_workflow_read
from pytest_agentloom.errors import UsageError
from pytest_agentloom.testing._workflow_cache import WorkflowCache

PARENT = """\
name: parent
state: {ticket: ""}
steps:
  - {id: classify, type: llm_call, model: gpt-4o-mini, prompt: "Classify: {state.ticket}", output: category}
  - id: route
    type: router
    depends_on: [classify]
    conditions: [{expression: "category == 'bug'", target: child}]
    default: child
  - {id: child, type: subworkflow, workflow: child.yaml, output: child_result}
"""

CHILD = """\
name: child
steps:
  - {id: answer, type: llm_call, model: gpt-4o-mini, prompt: "Answer", output: answer}
"""


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "child.yaml").write_text(CHILD)
    path = tmp_path / "parent.yaml"
    path.write_text(PARENT)
    return path


def rewrite_keeping_stat(path: Path, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` (same length) and put the modification time back: only the text differs."""
    assert len(old) == len(new)
    before = path.stat()
    path.write_text(path.read_text().replace(old, new))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_a_hit_is_what_loading_the_file_gives_and_loads_it_once(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_agentloom.testing._workflow_cache as module

    loads = []
    monkeypatch.setattr(module, "load_workflow_read", lambda path: loads.append(path) or load_workflow_read(path))
    cache = WorkflowCache()
    first, second = cache.load(files), cache.load(files)
    assert len(loads) == 1 and second is first  # one object: nobody can change it
    fresh = load_workflow(files)
    assert first == fresh
    assert first.source == fresh.source == files.resolve()
    assert list(first.compiled.conditions) == ["route"]
    assert first.compiled.children["child"] == fresh.compiled.children["child"]


def test_with_speedups_off_every_call_loads_the_file(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLOOM_SPEEDUPS", "0")
    cache = WorkflowCache()
    first, second = cache.load(files), cache.load(files)
    assert first is not second and first == second and len(cache) == 0


def test_nobody_can_change_the_shared_workflow(files: Path) -> None:
    """Every change a test might try on the workflow it got is refused with a clear error, so the next caller
    gets the file's workflow, as loading it gives."""
    cache = WorkflowCache()
    shared = cache.load(files)
    changes = [
        lambda: setattr(shared.steps[0], "prompt", "changed"),
        lambda: shared.state.__setitem__("ticket", "changed"),
        lambda: shared.state.update(ticket="changed"),
        lambda: setattr(shared.config, "model", "changed"),
        lambda: setattr(shared, "name", "changed"),
        lambda: shared.steps.append(shared.steps[0]),
        lambda: shared.steps[1].depends_on.clear(),
        lambda: setattr(shared.compiled.children["child"].steps[0], "prompt", "changed"),
        lambda: shared.compiled.conditions.clear(),
        lambda: shared.compiled.children.pop("child"),
        lambda: shared.config.sandbox.allowed_commands.append("rm"),
        lambda: setattr(shared.config.sandbox, "enabled", False),
    ]
    for change in changes:
        with pytest.raises((UsageError, ValidationError)) as info:
            change()
        if isinstance(info.value, UsageError):
            assert "How to fix: " in str(info.value)
    again = cache.load(files)
    assert again is shared and again == load_workflow(files)
    assert again.model_dump() == load_workflow(files).model_dump()


def test_a_changed_copy_is_the_callers_own(files: Path) -> None:
    cache = WorkflowCache()
    shared = cache.load(files)
    copy = shared.model_copy(update={"state": {"ticket": "mine"}, "name": "copy"})
    copy.state["ticket"] = "changed"  # the copy's own dict
    configured = shared.with_config(model="gpt-4o")
    assert (copy.name, configured.config.model) == ("copy", "gpt-4o")
    assert cache.load(files) is shared and shared.state == {"ticket": ""} and shared.config.model is None


def test_two_runs_of_the_cached_workflow_give_the_same_result_as_a_fresh_load(files: Path) -> None:
    cache = WorkflowCache()

    def run(workflow: Workflow) -> WorkflowResult:
        provider = Scripted({"classify": "bug", "answer": "done"})
        return run_workflow(workflow, state={"ticket": "crash"}, provider=provider, clock=VirtualClock(),
                            runs_dir=False, run_id="same")

    results = [run(cache.load(files)), run(cache.load(files)), run(load_workflow(files))]
    assert results[0].to_json() == results[1].to_json() == results[2].to_json()


@pytest.mark.parametrize("which", ["parent.yaml", "child.yaml"])
def test_an_edit_that_keeps_size_and_mtime_is_noticed(files: Path, which: str) -> None:
    cache = WorkflowCache()
    cache.load(files)
    if which == "parent.yaml":
        rewrite_keeping_stat(files, "Classify:", "Sort out:")
        assert cache.load(files).steps[0].prompt == "Sort out: {state.ticket}"
    else:
        rewrite_keeping_stat(files.parent / which, '"Answer"', '"Reply!"')
        child = cache.load(files).compiled.children["child"]
        assert child.steps[0].prompt == "Reply!"


def test_a_file_gone_or_broken_raises_the_loaders_error_and_a_fix_is_loaded(files: Path) -> None:
    cache = WorkflowCache()
    cache.load(files)
    files.write_text(PARENT.replace("depends_on: [classify]", "depends_on: [nowhere]"))
    for _ in range(2):  # a failed load is not kept
        with pytest.raises(WorkflowError, match="nowhere"):
            cache.load(files)
    files.write_text(PARENT)
    assert cache.load(files).name == "parent"
    (files.parent / "child.yaml").unlink()
    with pytest.raises(WorkflowError, match=r"Subworkflow .child\.yaml. cannot be loaded"):
        cache.load(files)
    files.unlink()
    with pytest.raises(WorkflowError) as info:
        cache.load(files)
    with pytest.raises(WorkflowError) as direct:
        load_workflow(files)
    assert str(info.value) == str(direct.value)


def test_load_workflow_read_gives_the_text_of_every_file_it_read(files: Path) -> None:
    workflow, texts = load_workflow_read(files)
    assert workflow.name == "parent"
    assert texts == {files.resolve(): PARENT, (files.parent / "child.yaml").resolve(): CHILD}


def test_the_least_recently_used_entry_goes_first(tmp_path: Path) -> None:
    cache = WorkflowCache(max_entries=2)
    paths = []
    for name in ("a", "b", "c"):
        path = tmp_path / f"{name}.yaml"
        path.write_text(CHILD.replace("name: child", f"name: {name}"))
        paths.append(path)
    kept = [cache.load(paths[0]), cache.load(paths[1])]
    cache.load(paths[0])  # a is now the most recently used
    cache.load(paths[2])
    assert len(cache) == 2
    assert cache.load(paths[0]) is kept[0] and cache.load(paths[1]) is not kept[1]  # b went


def _hash_of(workflow: Workflow) -> str:
    from pytest_agentloom.engine._format.redaction_patterns import redactor_for
    from pytest_agentloom.engine._persist.checkpoints import workflow_hash

    return workflow_hash(workflow, redactor_for(workflow))


def test_the_shared_workflow_keeps_what_runs_worked_out_until_the_file_changes(files: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_agentloom.engine._persist.checkpoints as checkpoints

    cache = WorkflowCache()
    first = cache.load(files)
    expected = _hash_of(first)
    hashed: list[str] = []
    real = checkpoints._hash
    monkeypatch.setattr(checkpoints, "_hash", lambda *args: hashed.append("hashed") or real(*args))
    second = cache.load(files)
    assert second is first and _hash_of(second) == expected and hashed == []  # the same object, hashed once
    assert _hash_of(first.model_copy()) == expected and hashed == ["hashed"]  # a copy starts empty
    rewrite_keeping_stat(files, "Classify:", "Sort out:")  # a new definition: nothing is taken over
    changed = cache.load(files)
    assert changed is not first and _hash_of(changed) != expected and hashed == ["hashed", "hashed"]


def test_the_workflow_hash_follows_the_api_keys_and_the_redaction_patterns(
        files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files.write_text(PARENT.replace('state: {ticket: ""}', 'state: {ticket: "sk-secret-value-42"}'))
    monkeypatch.delenv("ZZ_HASH_API_KEY", raising=False)
    monkeypatch.delenv("AGENTLOOM_REDACT_STATE_KEYS", raising=False)
    monkeypatch.setenv("AGENTLOOM_REDACTION_SALT", "a-salt-for-this-test-only")
    workflow = WorkflowCache().load(files)
    plain = _hash_of(workflow)
    monkeypatch.setenv("ZZ_HASH_API_KEY", "sk-secret-value-42")  # now scrubbed from the definition
    scrubbed = _hash_of(workflow)
    assert scrubbed != plain
    monkeypatch.setenv("AGENTLOOM_REDACT_STATE_KEYS", "ticket")  # now redacted by pattern, with the salt
    redacted = _hash_of(workflow)
    assert redacted not in (plain, scrubbed)
    monkeypatch.setenv("AGENTLOOM_REDACTION_SALT", "another-salt-for-this-test")  # another marker
    assert _hash_of(workflow) not in (plain, scrubbed, redacted)
    monkeypatch.delenv("AGENTLOOM_REDACT_STATE_KEYS")
    monkeypatch.delenv("ZZ_HASH_API_KEY")
    assert _hash_of(workflow) == plain


def test_every_use_reads_the_files_again(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_agentloom.testing._workflow_cache as module

    cache = WorkflowCache()
    cache.load(files)
    reads: list[str] = []
    real_read = module.read_text_capped
    monkeypatch.setattr(module, "read_text_capped", lambda path, **kw: reads.append(Path(path).name)
                        or real_read(path, **kw))
    for _ in range(3):
        cache.load(files)
    assert sorted(reads) == ["child.yaml"] * 3 + ["parent.yaml"] * 3


SHARED = """\
name: shared
state: {items: [1, 2], meta: {tag: a}}
steps:
  - {id: grab, type: tool, tool_name: grab, tool_args: {items: [1, 2], meta: {tag: a}}, output: got}
  - {id: ask, type: llm_call, model: gpt-4o-mini, depends_on: [grab], prompt: "Items: {state.items}", output: answer}
"""


def test_the_fixture_runs_the_kept_workflow_itself_and_nothing_a_run_or_test_holds_reaches_it(
        agentloom: Any, tmp_path: Path) -> None:
    """``agentloom.run(path)`` takes no copy: a tool that changes what it is given, config overrides, ``only=``
    and a resumed run leave the kept workflow as the file says, and no result leads to it."""
    from pytest_agentloom.testing._workflow_cache import load_cached

    path = tmp_path / "shared.yaml"
    path.write_text(SHARED)

    def grab(items: list[int], meta: dict[str, str]) -> list[int]:
        items.append(3)  # the run hands a tool its own copies: the file's tool_args never change
        meta["tag"] = "changed"
        return list(items)

    def run(**options: Any) -> WorkflowResult:
        return agentloom.run(path, provider=agentloom.scripted(ask="done"), tools={"grab": grab}, **options)

    def answered(result: WorkflowResult) -> WorkflowResult:
        result.state["items"].append("a test changes its result")  # the result's own copy of the state
        return result

    results = [answered(run()), run(), run(model="gpt-4o"), run(only="ask", state={"got": [9]})]
    assert [r.state.get("got") for r in results] == [[1, 2, 3], [1, 2, 3], [1, 2, 3], [9]]
    assert [r.state["items"] for r in results[1:]] == [[1, 2]] * 3
    assert [r.ran_workflow for r in results] == [None] * 4
    kept = load_cached(path)
    assert kept.model_dump() == load_workflow(path).model_dump() and kept.config.model is None
    assert agentloom.load(path) is kept  # a test gets the kept workflow too, which nobody can change


def test_a_path_made_a_symbolic_link_since_is_followed(tmp_path: Path) -> None:
    """The cache keys an entry by the resolved path and trusts a path found canonical while it is no symbolic
    link: one made a link to another file since gives that file's workflow."""
    (tmp_path / "flow.yaml").write_text("name: first\nsteps:\n  - {id: a, type: llm_call, prompt: x, output: a}\n")
    (tmp_path / "other.yaml").write_text("name: other\nsteps:\n  - {id: b, type: llm_call, prompt: y, output: b}\n")
    cache = WorkflowCache()
    assert cache.load(tmp_path / "flow.yaml").name == "first"
    assert cache.load(tmp_path / "flow.yaml").name == "first"  # the canonical path's way
    (tmp_path / "flow.yaml").unlink()
    (tmp_path / "flow.yaml").symlink_to(tmp_path / "other.yaml")
    assert cache.load(tmp_path / "flow.yaml").name == "other"
    assert cache.load(tmp_path / "other.yaml") is cache.load(tmp_path / "flow.yaml")
