"""Hostile inputs, each in its own interpreter with a memory cap and a time limit: what happens to each.

Run it against any checkout (``PYTHONPATH=/path/to/checkout python bench/inputs_probe.py``) to compare
before and after a change. Each case prints one line: its class, its name and the outcome, one of

- ``named <Error> <code>``: an AgentloomError (what we want for a bad input);
- ``ok ...``: the input was accepted (for a run: the run's status and failed steps' codes);
- ``raw <Exception>``: a traceback a user would see;
- ``exit N``: a CLI command's exit status (with what it printed first);
- ``TIMEOUT``, ``MEMORY`` (the 2 GiB cap), ``CRASH signal``.

Cases run in a fresh temporary folder with a fixed redaction salt. Nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time

MEMORY_CAP = 2 * 1024**3
TIME_LIMIT = 60.0

PRELUDE = '''
import sys, os, json, asyncio
from pathlib import Path
def outcome(fn):
    try:
        r = fn()
        print("RESULT ok", str(r)[:90].replace("\\n", " | "))
    except MemoryError:
        print("RESULT MEMORY")
    except BaseException as e:
        from pytest_agentloom.errors import AgentloomError
        kind = "named" if isinstance(e, AgentloomError) else "raw"
        code = getattr(e, "code", "")
        print("RESULT", kind, type(e).__name__, code, str(e)[:140].replace("\\n", " | "))
def run(text, **kw):
    from pytest_agentloom import run_workflow
    Path("flow.yaml").write_text(text)
    r = run_workflow("flow.yaml", runs_dir=False, **kw)
    return f"{r.status.value} " + " ".join(f"{s.step_id}:{s.error_code}" for s in r.steps.values() if s.error_code)
def validate(text, name="flow.yaml"):
    from pytest_agentloom.engine._format.loader import load_workflow
    Path(name).write_text(text)
    w = load_workflow(name)
    return f"loaded {len(w.steps)} steps"
def cli(*args):
    import subprocess
    env = {**os.environ, "AGENTLOOM_REDACTION_SALT": "probe"}
    done = subprocess.run([sys.executable, "-m", "pytest_agentloom.cli", *args], capture_output=True, text=True,
                          env=env, timeout=60)
    tail = (done.stderr or done.stdout).strip().splitlines()
    return f"exit {done.returncode} " + (tail[0][:100] if tail else "")
def pytest_run(test_text, files=None):
    import subprocess
    for name, body in (files or {}).items():
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_bytes(body if isinstance(body, bytes) else body.encode())
    Path("test_probe.py").write_text(test_text)
    env = {**os.environ, "AGENTLOOM_REDACTION_SALT": "probe"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           "test_probe.py"], capture_output=True, text=True, env=env, timeout=120)
    out = done.stdout
    named = [w for w in ("YamlReadError", "ArtifactError", "ScenarioTableError", "CassetteFormatError",
                          "ToolReplayMissError", "Snapshot") if w in out]
    raw = [w for w in ("Traceback", "UnicodeDecodeError", "IsADirectoryError", "AttributeError",
                       "RecursionError", "INTERNALERROR", "ScannerError", "ParserError") if w in out]
    return f"pytest exit {done.returncode} named={named} raw={raw}"
'''

GATE = """\
name: release
state: {service: billing}
steps:
  - {id: gate, type: approval_gate, message: "Ship it?", output: decision}
  - {id: after, type: tool, tool_name: file_read, tool_args: {path: x}, depends_on: [gate], output: r}
"""

BOMB_STATE = "\n".join(
    ["name: bomb", "state:", '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"  {c}: &{c} [{', '.join(['*' + p] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
    + ["steps:", "  - {id: s, type: tool, tool_name: echo, tool_args: {x: state.i}, output: o}"]
)

SHELL = """\
name: shell
config: {sandbox: {allowed_commands: [%s], danger_opt_in: [python3]}}
steps:
  - {id: s, type: tool, tool_name: shell_command, tool_args: {command: "%s", timeout: 2}, output: o}
"""

READ = """\
name: read
config: {sandbox: {readable_paths: ["."]}}
steps:
  - {id: s, type: tool, tool_name: file_read, tool_args: {path: "%s"}, output: o, timeout: 2}
"""

LLM = """\
name: t
state: {x: "%s"}
steps:
  - {id: s, type: llm_call, model: m, prompt: "%s", output: o}
"""

ROUTER = """\
name: r
state: {x: 1}
steps:
  - id: r
    type: router
    conditions: [{expression: "%s", target: a}]
    default: a
  - {id: a, type: tool, tool_name: file_read, tool_args: {path: x}, depends_on: [r], output: o}
"""

SCRIPTED = "from pytest_agentloom import Scripted; P = Scripted({'s': 'hi'})\n"


def runs(text: str, extra: str = "") -> str:
    """Code that runs the workflow ``text`` and reports the outcome."""
    return f"outcome(lambda: run({text!r}{extra}))"


def cases() -> list[tuple[str, str, str]]:
    """(class, name, code): each code calls ``outcome`` once."""
    cycle = "name: c\nsteps:\n" + "".join(
        f"  - {{id: s{i}, type: tool, tool_name: echo, depends_on: [s{(i + 1) % 1000}]}}\n" for i in range(1000))
    layer = "name: l\nstate: {conv: []}\nsteps:\n" + "".join(
        f"  - {{id: s{i}, type: llm_call, model: m, prompt: hi, conversation: conv, output: o{i}}}\n"
        for i in range(300))
    big = "name: big\nstate:\n" + "".join(f"  k{i}: [{', '.join(['value'] * 10)}]\n" for i in range(20000)) + \
        "steps:\n  - {id: s, type: tool, tool_name: echo, output: o}\n"
    hang = [
        ("shell", "shell_command 3 MB output, timeout 2",
         runs(SHELL % ("python3", "python3 -c 'print(chr(120)*3000000)'"))),
        ("shell", "shell_command 100 KB output then sleep 30, timeout 2",
         runs(SHELL % ("python3", "python3 -c 'import time; print(chr(120)*100000, flush=True); time.sleep(30)'"))),
        ("shell", "shell_command cat /dev/zero",
         runs(SHELL % ("cat", "cat /dev/zero"))),
        ("shell", "shell_command sleep 30, timeout 2",
         runs(SHELL % ("sleep", "sleep 30"))),
        ("file_read", "file_read of a 1.5 GB sparse file",
         "open('huge.txt','wb').truncate(1_500_000_000); " +
         runs(READ % "huge.txt")),
        ("file_read", "file_read of a FIFO", "os.mkfifo('pipe'); " + runs(READ % "pipe")),
        ("file_read", "file_read of /dev/zero (sandbox off)",
         "outcome(lambda: run('name: r\\nconfig: {sandbox: {enabled: false}}\\nsteps:\\n  - {id: s, type: tool, "
         "tool_name: file_read, tool_args: {path: /dev/zero}, output: o}\\n'))"),
        ("file_read", "file_read path with a NUL",
         runs(READ % "a\\0b")),
        ("loader", "subworkflow workflow: /dev/zero",
         "outcome(lambda: validate('name: p\\nsteps:\\n  - {id: c, type: subworkflow, workflow: /dev/zero}\\n'))"),
        ("yaml", "419-byte anchor bomb in state: validate", f"outcome(lambda: validate({BOMB_STATE!r}))"),
        ("yaml", "419-byte anchor bomb in state: run",
         runs(BOMB_STATE, ", tools={'echo': lambda **k: 1}")),
        ("yaml", "duplicate key api_key redact true/false",
         "outcome(lambda: validate('name: d\\nstate: {api_key: k}\\nstate_schema:\\n  api_key: {redact: true}\\n"
         "  api_key: {redact: false}\\nsteps:\\n  - {id: s, type: tool, tool_name: echo, output: o}\\n'))"),
        ("yaml", "2 KB of nested [", "outcome(lambda: validate('name: n\\nstate: {x: ' + '['*2000 + ']'*2000 + '}\\n"
         "steps: []\\n'))"),
        ("yaml", "100,000 nested [", "outcome(lambda: validate('x: ' + '['*100000 + ']'*100000))"),
        ("yaml", "self-referential anchor state: &s {self: *s}",
         "outcome(lambda: run('name: s\\nstate: &s {self: *s}\\nsteps:\\n  - {id: s, type: tool, tool_name: echo, "
         "output: o}\\n', tools={'echo': lambda **k: 1}))"),
        ("yaml", "5,000-digit integer in state",
         "outcome(lambda: run('name: s\\nstate: {x: ' + '9'*5000 + '}\\nsteps:\\n  - {id: s, type: tool, "
         "tool_name: echo, tool_args: {x: \"{state.x}\"}, output: o}\\n', tools={'echo': lambda **k: 1}))"),
        ("yaml", "lone surrogate in name (escaped)",
         "outcome(lambda: run('name: \"a\\\\ud800b\"\\nsteps:\\n  - {id: s, type: tool, tool_name: echo, "
         "output: o}\\n', tools={'echo': lambda **k: 1}, checkpoint_dir='cp'))"),
        ("loader", "1,000-step dependency cycle", f"outcome(lambda: validate({cycle!r}))"),
        ("loader", "300 conversation steps in one layer (problem count)",
         f"outcome(lambda: str(len(validate({layer!r}))))"),
        ("loader", "1 MB workflow: load time", f"import time; t=time.time(); outcome(lambda: validate({big!r})); "
         "print('RESULT seconds', round(time.time()-t, 2))"),
        ("loader", "backoff_multiplier: 1e300",
         "from pytest_agentloom import Scripted; from pytest_agentloom._core.clock import VirtualClock; "
         "outcome(lambda: run('name: b\\nsteps:\\n  - {id: s, type: llm_call, model: m, prompt: hi, output: o, retry: "
         "{max_retries: 3, backoff_multiplier: 1e300, backoff_seconds: 1}}\\n', "
         "provider=Scripted.from_data({'s': [{'error': 500}, {'error': 500}, {'error': 500}, 'ok']}), "
         "clock=VirtualClock()))"),
        ("templates", "format width {state.x:>999999999}", SCRIPTED +
         runs(LLM % ("a", "{state.x:>999999999}"), ", provider=P")),
        ("expressions", "('a'*100000).replace('a','a'*100000)",
         runs(ROUTER % "('a'*100000).replace('a','a'*100000) == 'b'")),
        ("expressions", "str([[1]*100000]*100000)",
         runs(ROUTER % "len(str([[1]*100000]*100000)) > 1")),
        ("cli", "--state 2 KB nested [", "outcome(lambda: cli('run', 'flow.yaml', '--no-record', '--state', "
         "'x=' + '['*20000 + ']'*20000)) if Path('flow.yaml').write_text('name: f\\nsteps: []\\n') else None"),
    ]
    return hang + bad_files()


def bad_files() -> list[tuple[str, str, str]]:
    snap_test = ("from pytest_agentloom import Scripted\n"
                 "def test_snap(agentloom):\n"
                 "    r = agentloom.run('flow.yaml', provider=Scripted({'s': 'hi'}))\n"
                 "    agentloom.assert_snapshot(r)\n")
    flow = "name: f\nsteps:\n  - {id: s, type: llm_call, model: m, prompt: hi, output: o}\n"
    snap = "__agentloom_snapshots__/test_probe/test_snap.yaml"
    out: list[tuple[str, str, str]] = []
    for name, body in [("invalid YAML", "a: [1,"), ("non-UTF-8", b"\xff\xfe bad"), ("a directory", None)]:
        files = {"flow.yaml": flow}
        pre = ""
        if body is None:
            pre = f"Path({snap!r}).mkdir(parents=True); "
        else:
            files[snap] = body
        out.append(("snapshot", f"snapshot: {name}",
                    pre + f"outcome(lambda: pytest_run({snap_test!r}, {files!r}))"))
    tape_test = ("import pytest\n"
                 "@pytest.mark.agentloom(cassette='c.yaml')\n"
                 "def test_tape(agentloom):\n"
                 "    agentloom.run('flow.yaml')\n")
    for name, body in [("invalid YAML", "calls: [1,"), ("a list", "- 1\n- 2\n"), ("non-UTF-8", b"\xff\xfe")]:
        code = ("from pytest_agentloom.replay._tool_tape import ToolTape; "
                f"Path('t.tools.yaml').write_bytes({body if isinstance(body, bytes) else body.encode()!r}); "
                "outcome(lambda: ToolTape('t.tools.yaml', recording=False).entries)")
        out.append(("tool tape", f"tool tape: {name}", code))
    del tape_test
    cassette = ("format_version: 1\ninteractions:\n- request: {method: POST, url: 'http://x/v1', headers: [a, b]}\n"
                "  response: {status: 200, headers: [a, b], body: {text: hi}}\n")
    out.append(("cassette", "cassette: headers as a list",
                f"from pytest_agentloom.replay._cassette_file import loads; outcome(lambda: loads({cassette!r}))"))
    tables: list[tuple[str, str, bytes]] = [
        ("non-UTF-8 YAML", "t.yaml", b"- id: a\n  state: {x: \"\xff\"}\n"),
        ("deep nesting JSONL", "t.jsonl", b'{"id": "a", "state": {"x": ' + b"[" * 100000 + b"]" * 100000 + b"}}\n"),
        ("deep nesting CSV cell", "t.csv", b"id,state\na,\"{\"\"x\"\": " + b"[" * 100000 + b"]" * 100000 + b"}\"\n"),
        ("CSV cell over 128 KB", "t.csv", b"id,state\na,\"" + b"x" * 200_000 + b"\"\n"),
        ("duplicate CSV header column", "t.csv", b'id,state,state\na,{},"{""x"": 1}"\n'),
        ("alias bomb in a YAML row", "t.yaml", ("- id: a\n  state:\n" + "\n".join(
            "    " + line for line in BOMB_STATE.splitlines()[2:11])).encode()),
        ("duplicate key in a YAML row", "t.yaml", b"- id: a\n  state: {}\n  state: {x: 1}\n"),
    ]
    for name, file, body in tables:
        code = ("from pytest_agentloom.testing._scenarios.table import load_table; "
                f"Path({file!r}).write_bytes({body!r}); "
                f"outcome(lambda: [s.id for s in load_table(Path({file!r}), default_workflow='f.yaml')])")
        out.append(("scenario table", f"scenario table: {name}", code))
    tampers = [
        ("state a list", "d['state'] = [1]"),
        ("steps a list", "d['steps'] = [1]"),
        ("a step not a mapping", "d['steps']['gate'] = 'x'"),
        ("workflow missing", "del d['workflow']"),
        ("workflow a string", "d['workflow'] = 'x'"),
        ("definition a list", "d['workflow']['definition'] = [1]"),
        ("run_id a number", "d['run_id'] = 7"),
        ("completed_steps a mapping", "d['completed_steps'] = {'a': 1}"),
        ("pending_approval a string", "d['pending_approval'] = 'x'"),
        ("status a number", "d['status'] = 3"),
        ("a step's status unknown", "d['steps']['gate']['status'] = 'weird'"),
        ("not JSON", None),
    ]
    for name, change in tampers:
        edit = ("p.write_text('{not json')" if change is None
                else f"d = json.loads(p.read_text()); {change}; p.write_text(json.dumps(d))")
        code = (f"Path('flow.yaml').write_text({GATE!r}); cli('run', 'flow.yaml', '--run-id', 'r1'); "
                "p = Path('agentloom_runs/checkpoints/r1.json'); " + edit + "; "
                "before = p.read_bytes(); outcome(lambda: cli('resume', 'r1', '--approve') + "
                "(' (file kept)' if p.read_bytes() == before else ' (FILE CHANGED)'))")
        out.append(("checkpoint", f"checkpoint: {name} -> resume", code))
    for name, make in [("non-UTF-8", "Path('.agentloom/salt').write_bytes(b'\\xff\\xfe\\n')"),
                       ("a directory", "Path('.agentloom/salt').mkdir()")]:
        code = ("Path('.git').mkdir(); Path('.agentloom').mkdir(); " + make + "; "
                "from pytest_agentloom._redaction.salt import load_salt; "
                "os.environ.pop('AGENTLOOM_REDACTION_SALT', None); outcome(lambda: load_salt(Path('.')))")
        out.append(("salt", f"salt file: {name}", code))
    return out


def run_case(code: str) -> str:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        try:
            script = os.path.join(folder, "probe_case.py")
            with open(script, "w", encoding="utf-8") as handle:
                handle.write(PRELUDE + textwrap.dedent(code))
            done = subprocess.run([sys.executable, script], cwd=folder,
                                  capture_output=True, text=True, timeout=TIME_LIMIT, preexec_fn=limit,
                                  env={**os.environ, "AGENTLOOM_REDACTION_SALT": "probe"})
        except subprocess.TimeoutExpired:
            return f"TIMEOUT (> {TIME_LIMIT:g}s)"
        took = time.monotonic() - started
        lines = [line[len("RESULT "):] for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        if done.returncode < 0:
            return f"CRASH signal {-done.returncode} ({took:.1f}s)"
        if not lines:
            tail = (done.stderr.strip().splitlines() or ["?"])[-1]
            return f"{'MEMORY' if 'MemoryError' in done.stderr else 'died'}: {tail[:120]} ({took:.1f}s)"
        return " ; ".join(lines) + f" ({took:.1f}s)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    parser.add_argument("--start", type=int, default=0, help="skip the first N cases")
    args = parser.parse_args()
    for kind, name, code in cases()[args.start:]:
        if args.k and args.k not in name and args.k not in kind:
            continue
        print(f"{kind:15} | {name:48} | {run_case(code)}", flush=True)


if __name__ == "__main__":
    main()
