"""Big states: a golden snapshot of a multi-megabyte state, and a big state passed to ``run_workflow``.

Run it from the repository root::

    python bench/big_states.py                  # 5 MB snapshot, 10 MB state (the sizes of issue 31)
    python bench/big_states.py --mb 0.05 --state-mb 0.1 --repeats 1   # tiny, for the test suite

It prints, for the snapshot of a run whose final state is ``--mb`` MB (as JSON): the time to write it, to pass
(an unchanged run), and to fail with its diff (one value changed deep inside), each the median of
``--repeats``; the YAML dumper in use and the pure-Python dumper's time on the same data. Then, for a
``--state-mb`` MB state, the median time of a run given it as ``run_workflow(state=...)`` and of the same run
with the state in the workflow file (loaded once), and their ratio: measured in the same process, one after
the other, so the ratio holds on any machine. It is a script, not a test.
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

from pytest_agentloom import Scripted, VirtualClock, load_workflow, run_workflow
from pytest_agentloom.testing._snapshots import compare

OPTIONS = {"runs_dir": False} if "runs_dir" in inspect.signature(run_workflow).parameters else {}

FLOW = """\
name: big-state
config: {model: gpt-4o-mini}
state: {question: "Which records are late?"}
steps:
  - id: answer
    type: llm_call
    prompt: "{state.question}"
    output: answer
"""


def records(megabytes: float, *, late: str = "no") -> dict[str, Any]:
    """About ``megabytes`` MB (as JSON) of records: ids, titles, a paragraph, tags, a nested address."""
    count = max(1, int(megabytes * 1_000_000 / 330))
    return {"records": [
        {"id": f"R-{index:06d}", "title": f"Order {index} for customer {index % 977}",
         "body": ("The parcel left the warehouse on Monday and should arrive within three working days. "
                  f"Tracking number {index * 7919 % 1_000_003}."),
         "tags": ["parcel", "eu" if index % 3 else "us", f"batch-{index % 50}"],
         "address": {"city": f"City {index % 211}", "zip": f"{index % 99999:05d}"},
         "late": late if index == count // 2 else "no", "weight_kg": round(index % 40 / 3, 3)}
        for index in range(count)]}


def _median(action: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _run(workflow: Any, state: dict[str, Any] | None) -> Any:
    kwargs = {"state": state} if state is not None else {}
    return run_workflow(workflow, provider=Scripted({"answer": "none"}), clock=VirtualClock(), **kwargs, **OPTIONS)


def snapshot_figures(megabytes: float, repeats: int, folder: Path) -> None:
    flow = folder / "snap.yaml"
    flow.write_text(FLOW)
    workflow = load_workflow(flow)
    same, changed = _run(workflow, records(megabytes)), _run(workflow, records(megabytes, late="yes"))
    size = len(json.dumps(same.state)) / 1e6
    path = folder / "snapshot.yaml"
    session = compare.SnapshotSession(create=True)

    def check(result: Any) -> None:
        session.owners.clear()
        session.assert_match(path, result, label="big", nodeid="bench::big")

    written = _median(lambda: (path.unlink(missing_ok=True), check(same)), repeats)
    passed = _median(lambda: check(same), repeats)

    def fail() -> None:
        try:
            check(changed)
        except AssertionError as exc:
            assert "late" in str(exc), str(exc)[:500]
        else:
            raise SystemExit("the changed run passed its snapshot")

    failed = _median(fail, repeats)
    data = compare.snapshot_data(same)
    dumper = _dumper_name()
    python_dump = _median(lambda: yaml.dump(data, Dumper=_PythonDumper, sort_keys=False, allow_unicode=True,
                                            width=100, default_flow_style=False), 1)
    print(f"snapshot of a {size:.1f} MB state ({path.stat().st_size / 1e6:.1f} MB file), dumper: {dumper}")
    print(f"  write {written:6.2f} s   pass {passed:6.2f} s   fail with its diff {failed:6.2f} s"
          f"   (pure-Python dump of the same data: {python_dump:.2f} s)")


def _dumper_name() -> str:
    try:
        from pytest_agentloom.testing._snapshots.dumper import DUMPER_NAME
    except ImportError:  # before the libyaml emitter was used
        return "pure Python (yaml.SafeDumper)"
    return DUMPER_NAME


class _PythonDumper(yaml.SafeDumper):
    """The pure-Python dumper with the snapshot's string style, for the comparison line."""


_PythonDumper.add_representer(
    str, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", value,
                                                       style="|" if "\n" in value else None))


def state_figures(megabytes: float, repeats: int, folder: Path) -> None:
    state = records(megabytes)
    given = folder / "given.yaml"
    given.write_text(FLOW)
    in_file = folder / "in_file.yaml"
    in_file.write_text(FLOW.replace('state: {question: "Which records are late?"}',
                                    "state: " + json.dumps({"question": "Which records are late?", **state})))
    given_workflow, file_workflow = load_workflow(given), load_workflow(in_file)
    _run(given_workflow, state), _run(file_workflow, None)  # warm-up: per-workflow memos are made once
    as_argument = _median(lambda: _run(given_workflow, state), repeats)
    from_file = _median(lambda: _run(file_workflow, None), repeats)
    size = len(json.dumps(state)) / 1e6
    print(f"run with a {size:.1f} MB state: run_workflow(state=...) {as_argument:.3f} s, "
          f"state in the file {from_file:.3f} s, ratio {as_argument / from_file:.2f}x")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=5.0, help="the snapshot's state, MB of JSON (default 5)")
    parser.add_argument("--state-mb", type=float, default=10.0, help="the run's state, MB of JSON (default 10)")
    parser.add_argument("--repeats", type=int, default=3, help="repeats; the median is reported (default 3)")
    args = parser.parse_args(argv)
    print(f"python {sys.version.split()[0]}, PyYAML {yaml.__version__} (libyaml: {yaml.__with_libyaml__})")
    with tempfile.TemporaryDirectory() as tmp:
        snapshot_figures(args.mb, args.repeats, Path(tmp))
        state_figures(args.state_mb, args.repeats, Path(tmp))


if __name__ == "__main__":
    main()
