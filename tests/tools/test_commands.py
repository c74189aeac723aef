"""Programs that run programs are refused unless ``danger_opt_in`` lists them (tools/_commands.py).

Each escape is a real command that would create ``PWNED`` in the test's folder. Where the program is
installed here, the test shows both halves: refused as allowed, and (for most) the same command with
``danger_opt_in`` really creates the file, so the refusal is what kept it away. A program not installed
here is tested at the refusal level through a link of its name (the check judges names), noted as such.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pytest_agentloom.tools import Sandbox, SandboxRefusal, builtin_tools
from pytest_agentloom.tools._sandbox import SandboxConfig


def shell(tmp_path: Path, command: str, **config: Any) -> dict[str, Any]:
    """Run ``command`` through the built-in ``shell_command``, its program allowed by its first word."""
    program = shlex.split(command)[0]
    config.setdefault("allowed_commands", [program])
    made = {tool.name: tool for tool in builtin_tools(Sandbox(SandboxConfig(**config), base_dir=tmp_path))}
    return asyncio.run(made["shell_command"].invoke({"command": command, "timeout": 10}))


def refused(tmp_path: Path, command: str, **config: Any) -> SandboxRefusal:
    with pytest.raises(SandboxRefusal) as info:
        shell(tmp_path, command, **config)
    assert info.value.code == "sandbox_refused"
    assert not (tmp_path / "PWNED").exists()
    return info.value


def installed(*programs: str) -> Any:
    missing = [program for program in programs if shutil.which(program) is None]
    return pytest.mark.skipif(bool(missing), reason=f"not installed: {', '.join(missing)}")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "in.txt").write_text("one line\n")
    return tmp_path


# -- programs whose purpose is to run programs: refused, and with danger_opt_in they really run ------------------

ESCAPES = {
    "timeout": "timeout 5 touch PWNED",
    "nice": "nice touch PWNED",
    "nohup": "nohup touch PWNED",
    "stdbuf": "stdbuf -o0 touch PWNED",
    "setsid": "setsid -w touch PWNED",
    "flock": "flock lock touch PWNED",
    "mawk": "mawk 'BEGIN { system(\"touch PWNED\") }'",
    "nawk": "nawk 'BEGIN { system(\"touch PWNED\") }'",
    "script": "script -q -c 'touch PWNED' /dev/null",
    "taskset": "taskset -c 0 touch PWNED",
    "ionice": "ionice -c 3 touch PWNED",
    "env": "env touch PWNED",
    "xargs": "xargs touch PWNED",
    "perl": "perl -e 'system(\"touch PWNED\")'",
    "python3": "python3 -c 'open(\"PWNED\", \"w\")'",
    "node": "node -e 'require(\"fs\").writeFileSync(\"PWNED\", \"\")'",
    "sh": "sh -c 'touch PWNED'",
}


@pytest.mark.parametrize("program", sorted(ESCAPES))
def test_a_program_that_runs_programs_is_refused_unless_opted_in(folder: Path, program: str) -> None:
    if shutil.which(program) is None:
        pytest.skip(f"not installed: {program}")
    command = ESCAPES[program]
    error = refused(folder, command)
    assert error.rule == "danger_opt_in" and "danger_opt_in" in str(error)
    shell(folder, command, danger_opt_in=[program])
    assert (folder / "PWNED").exists()  # the command was a real escape


REFUSED_ONLY = {  # installed, but they need a terminal, privileges or a daemon to show the escape
    "chrt": "chrt -o 0 touch PWNED",
    "unshare": "unshare touch PWNED",
    "strace": "strace -o /dev/null touch PWNED",
    "vim": "vim -c '!touch PWNED' -c q",
    "vi": "vi -c '!touch PWNED' -c q",
    "watch": "watch -n 1 touch PWNED",
    "ssh": "ssh -o 'ProxyCommand=touch PWNED' host",
    "less": "less in.txt",
    "more": "more in.txt",
    "ed": "ed -s in.txt",
    "sqlite3": "sqlite3 ':memory:' '.shell touch PWNED'",
    "docker": "docker run --rm alpine touch PWNED",
}


@pytest.mark.parametrize("program", sorted(REFUSED_ONLY))
def test_installed_programs_that_run_programs_are_refused(folder: Path, program: str) -> None:
    if shutil.which(program) is None:
        pytest.skip(f"not installed: {program}")
    assert refused(folder, REFUSED_ONLY[program]).rule == "danger_opt_in"


#: not installed here: tested through a link of their name to ``true`` (the check judges the names)
BY_NAME = ["busybox", "gawk", "awk", "ruby", "rsync", "bash", "zsh", "emacs", "nano", "php", "lua5.4",
           "python3.12", "gdb", "podman", "kubectl", "npx", "sudo", "parallel", "original-awk", "pypy3"]


@pytest.mark.parametrize("name", BY_NAME)
def test_a_program_is_judged_by_its_name_even_where_it_is_not_installed(tmp_path: Path, name: str) -> None:
    link = tmp_path / "bin" / name
    link.parent.mkdir()
    link.symlink_to(shutil.which("true") or "/bin/true")
    error = refused(tmp_path, f"bin/{name} -c 'touch PWNED'")
    assert error.rule == "danger_opt_in"
    assert shell(tmp_path, f"bin/{name}", danger_opt_in=[name])["exit_code"] == 0


@installed("perl")
def test_a_link_of_a_harmless_name_to_an_interpreter_is_the_interpreter(tmp_path: Path) -> None:
    link = tmp_path / "bin" / "formatter"
    link.parent.mkdir()
    link.symlink_to(shutil.which("perl") or "")
    error = refused(tmp_path, "bin/formatter -e 'system(\"touch PWNED\")'")
    assert "'perl'" in str(error) and error.rule == "danger_opt_in"
    shell(tmp_path, "bin/formatter -e 'system(\"touch PWNED\")'", danger_opt_in=["formatter"])
    assert (tmp_path / "PWNED").exists()


@installed("perl")
@pytest.mark.parametrize("how", ["copy", "hard link"])
def test_a_renamed_copy_of_an_interpreter_is_the_interpreter(tmp_path: Path, how: str) -> None:
    real = Path(os.path.realpath(shutil.which("perl") or ""))
    twin = tmp_path / "bin" / "formatter"
    twin.parent.mkdir()
    if how == "copy":
        shutil.copy2(real, twin)
    else:
        try:
            os.link(real, twin)
        except OSError:
            pytest.skip("no hard link across these folders")
    error = refused(tmp_path, "bin/formatter -e 'system(\"touch PWNED\")'")
    assert "is a copy of 'perl'" in str(error) and error.rule == "danger_opt_in"
    shell(tmp_path, "bin/formatter -e 'system(\"touch PWNED\")'", danger_opt_in=["formatter"])
    assert (tmp_path / "PWNED").exists()


def test_a_link_to_a_multi_call_binary_is_the_tool_it_is_named_after(tmp_path: Path) -> None:
    """On a BusyBox system ``ls -> busybox`` runs ls, ``sh -> busybox`` a shell (busybox: not installed here)."""
    multi = tmp_path / "bin" / "busybox"
    multi.parent.mkdir()
    shutil.copy2(shutil.which("true") or "/bin/true", multi)
    for name in ("ls", "sh"):
        (tmp_path / "bin" / name).symlink_to(multi)
    assert shell(tmp_path, "bin/ls")["exit_code"] == 0
    assert refused(tmp_path, "bin/sh -c 'touch PWNED'").rule == "danger_opt_in"
    assert refused(tmp_path, "bin/busybox sh -c 'touch PWNED'").rule == "danger_opt_in"


def test_a_program_inside_writable_paths_is_refused_whatever_its_name(tmp_path: Path) -> None:
    tool = tmp_path / "out" / "report"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\ntouch PWNED\n")
    tool.chmod(0o755)
    error = refused(tmp_path, "out/report", allowed_commands=["out/report"], writable_paths=["out"])
    assert error.rule == "writable_paths"
    assert shell(tmp_path, "out/report", allowed_commands=["out/report"])["exit_code"] == 0  # not writable: runs


# -- everyday programs: the options that run programs are refused, the rest runs -------------------------------

OPTION_ESCAPES = {
    "find -exec": ("find . -maxdepth 0 -exec touch PWNED ;", "find"),
    "find -execdir": ("find . -maxdepth 0 -execdir touch PWNED ;", "find"),
    "find -ok": ("find . -maxdepth 0 -ok touch PWNED ;", "find"),
    "sed e command": ("sed '1e touch PWNED' in.txt", "sed"),
    "sed s///e": ("sed 's/.*/touch PWNED/e' in.txt", "sed"),
    "sed -n -e e": ("sed -n -e 'p;1e touch PWNED' in.txt", "sed"),
    "sed -ne cluster": ("sed -ne '$e touch PWNED' in.txt", "sed"),
    "sed after a text line": ("sed -e 'a x\\\\' -e '1e touch PWNED' in.txt", "sed"),
    "tar checkpoint exec": ("tar -cf a.tar --checkpoint=1 --checkpoint-action=exec='touch PWNED' in.txt", "tar"),
    "tar checkpoint abbreviated": ("tar -cf a.tar --checkpoint=1 --checkpoint-a=exec='touch PWNED' in.txt", "tar"),
    "tar --to-command": ("tar -cf a.tar in.txt --to-command='touch PWNED'", "tar"),
    "tar -I": ("tar -I 'sh -c \"touch PWNED\" #' -cf a.tar in.txt", "tar"),
    "tar old style I": ("tar cIf 'touch PWNED' a.tar in.txt", "tar"),
    "tar checkpoint apart": ("tar -cf a.tar --checkpoint=1 --checkpoint-action 'exec=touch PWNED' in.txt", "tar"),
    "tar --use-compress-program": ("tar --use-compress-program='touch PWNED' -cf a.tar in.txt", "tar"),
    "tar -f host:file": ("tar -cf host:a.tar in.txt", "tar"),
    "tar -fhost:file": ("tar -c -fhost:a.tar in.txt", "tar"),
    "tar --file=host:path": ("tar -c --file=host:/tmp/a.tar in.txt", "tar"),
    "tar --file host:path": ("tar -c --fil host:/tmp/a.tar in.txt", "tar"),
    "tar -f user@host:path": ("tar -xvf user@host:backups/a.tar", "tar"),
    "tar old style f remote": ("tar cf host:a.tar in.txt", "tar"),
    "tar old style bf remote": ("tar cbf 20 host:a.tar in.txt", "tar"),
    "make --eval": ("make --eval='all: ; touch PWNED' all", "make"),
    "make -E": ("make -E 'all: ; touch PWNED' all", "make"),
    "make variable": ("make 'SHELL=/bin/sh' '.SHELLFLAGS=-c touch PWNED'", "make"),
    "zip -TT": ("zip -T -TT 'touch PWNED ;' a.zip in.txt", "zip"),
    "zip --unzip-command": ("zip -T --unzip-command='touch PWNED ;' a.zip in.txt", "zip"),
    "sort --compress-program": ("sort --compress-program='touch' in.txt", "sort"),
    "split --filter": ("split --filter='touch PWNED' in.txt", "split"),
    "wget --use-askpass": ("wget --use-askpass='touch PWNED' http://127.0.0.1:9/", "wget"),
    "wget -e": ("wget -e 'use_askpass=touch PWNED' http://127.0.0.1:9/", "wget"),
}


@pytest.mark.parametrize("form", sorted(OPTION_ESCAPES))
def test_an_option_that_runs_a_program_is_refused(folder: Path, form: str) -> None:
    command, program = OPTION_ESCAPES[form]
    if shutil.which(program) is None:
        pytest.skip(f"not installed: {program}")
    error = refused(folder, command)
    assert error.rule == "danger_opt_in" and f"'{program}" in str(error)


REAL_OPTION_ESCAPES = ["find -exec", "sed e command", "sed s///e", "sed -ne cluster", "tar checkpoint exec",
                       "make --eval", "split --filter"]


@pytest.mark.parametrize("form", REAL_OPTION_ESCAPES)
def test_with_danger_opt_in_the_refused_option_runs_its_program(folder: Path, form: str) -> None:
    command, program = OPTION_ESCAPES[form]
    if shutil.which(program) is None:
        pytest.skip(f"not installed: {program}")
    shell(folder, command, danger_opt_in=[program])
    assert (folder / "PWNED").exists() or any(folder.glob("PWNED*"))


EVERYDAY_USES = [
    "find . -name '*.txt'",
    "sed -n 's/one/two/p' in.txt",
    "sed -e 's/e/E/g' -e '/x/d' in.txt",
    "sed -E 's|(o)ne|\\1|w /dev/stdout' in.txt",
    "sed '$a the end' in.txt",
    "sed -i.bak 's/one/1/' in.txt",
    "sed -n '/one/{p;q}' in.txt",
    "sed 'y/abc/xyz/' in.txt",
    "tar -cf a.tar in.txt",
    "tar --checkpoint=1 --checkpoint-action=dot -cf a.tar in.txt",
    "tar cf a.tar in.txt",
    "tar -cf ./a:b.tar in.txt",
    "tar --force-local -cf a:b.tar in.txt",
    "tar -cf a.tar --files-from=in.txt",
    "make --version",
    "zip -q a.zip in.txt",
    "sort -r in.txt",
    "split -l 1 in.txt part-",
    "git --version",
    "git -c color.ui=false -c user.name=x --no-pager log -1",
]


@pytest.mark.parametrize("command", EVERYDAY_USES)
def test_everyday_uses_run(folder: Path, command: str) -> None:
    program = shlex.split(command)[0]
    if shutil.which(program) is None:
        pytest.skip(f"not installed: {program}")
    if program == "git":
        subprocess.run(["git", "init", "-q", str(folder)], check=True)
    done = shell(folder, command)
    assert isinstance(done["exit_code"], int) and not (folder / "PWNED").exists()


@pytest.mark.parametrize("script", ["s/a/b/e", "1e touch x", "$!e", "/re/I e x", "\\%re%e x", "1,5{e x\n}",
                                    "s/a/b/gpe", "0~2 e", "y/a/b/;e", ":a;e", "p;e"])
def test_sed_scripts_that_run_a_command_are_found(script: str) -> None:
    from pytest_agentloom.tools._sed import sed_refusal

    assert sed_refusal([script]) is not None and "'e'" in (sed_refusal([script]) or "")


@pytest.mark.parametrize("args", [["-f", "script.sed"], ["--file=script.sed"], ["-nf", "x"], ["s/a/b"],
                                  ["s/a/b/x"], ["1k"], [":a e x"]])
def test_sed_scripts_that_cannot_be_read_with_certainty_are_refused(args: list[str]) -> None:
    from pytest_agentloom.tools._sed import sed_refusal

    assert "cannot be checked" in (sed_refusal(args) or "")


@pytest.mark.parametrize("args", [["s/e/E/g"], ["-e", "s/e/e/", "file"], ["a text with e\\", "e"], ["/e/d"],
                                  ["s/x/y/w out.txt"], ["-n", "-l", "5", "p"], ["-e", "i\\", "-e", "e is text"]])
def test_sed_scripts_without_a_command_run_pass(args: list[str]) -> None:
    from pytest_agentloom.tools._sed import sed_refusal

    assert sed_refusal(args) is None


# -- git: configuration and options that run programs -----------------------------------------------------------

GIT_ESCAPES = {
    "alias": "git -c 'alias.x=!touch PWNED' x",
    "alias, upper case": "git -c 'Alias.X=!touch PWNED' X",
    "core.pager": "git -c 'core.pager=touch PWNED' -p log",
    "core.sshCommand": "git -c 'core.sshCommand=touch PWNED' ls-remote ssh://example.invalid/x",
    "core.editor": "git -c 'core.editor=touch PWNED' commit --allow-empty",
    "core.fsmonitor": "git -c 'core.fsmonitor=touch PWNED' status",
    "core.hooksPath": "git -c core.hooksPath=hooks commit --allow-empty -m x",
    "include.path": "git -c include.path=evil.cfg status",
    "--config-env": "git --config-env=core.pager=PAGER log",
    "--exec-path": "git --exec-path=. status",
    "--upload-pack": "git ls-remote --upload-pack='touch PWNED;' .",
    "ls-remote -u": "git ls-remote -u 'touch PWNED;' .",
    "--upload-pack abbreviated": "git fetch --upload='touch PWNED;' .",
    "clone -u": "git clone -u 'touch PWNED;' . copy",
    "clone --config": "git clone --config core.fsmonitor='touch PWNED' . copy",
    "clone --template": "git clone --template=tpl . copy",
    "push --receive-pack": "git push --receive-pack='touch PWNED;' . HEAD",
    "archive --exec": "git archive --remote=. --exec='touch PWNED;' HEAD",
    "rebase --exec": "git rebase --exec 'touch PWNED' HEAD~1",
    "rebase -x": "git rebase -x 'touch PWNED' HEAD~1",
    "grep -O": "git grep -O'touch PWNED' line",
    "config writes": "git config alias.x '!touch PWNED'",
    "config --global": "git config --global core.pager 'touch PWNED'",
    "submodule foreach": "git submodule foreach 'touch PWNED'",
    "bisect run": "git bisect run touch PWNED",
    "filter-branch": "git filter-branch --tree-filter 'touch PWNED' HEAD",
    "difftool": "git difftool -x 'touch PWNED'",
    "mergetool": "git mergetool",
}


@installed("git")
@pytest.mark.parametrize("form", sorted(GIT_ESCAPES))
def test_git_configuration_and_options_that_run_programs_are_refused(folder: Path, form: str) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    error = refused(folder, GIT_ESCAPES[form])
    assert error.rule == "danger_opt_in" and "'git" in str(error)


@installed("git")
@pytest.mark.parametrize("form", ["alias", "--upload-pack", "core.fsmonitor"])
def test_with_danger_opt_in_the_git_escape_is_real(folder: Path, form: str) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    shell(folder, GIT_ESCAPES[form], danger_opt_in=["git"])
    assert (folder / "PWNED").exists()


@installed("git")
@pytest.mark.parametrize("command", ["git x", "git -C out x", "git --git-dir=out/.git x", "git --work-tree out x"])
def test_git_never_works_in_a_folder_the_workflow_can_write(folder: Path, command: str) -> None:
    """file_write could write a repository's config (an alias, core.fsmonitor) or hooks there."""
    (folder / "out").mkdir()
    subprocess.run(["git", "init", "-q", str(folder / "out")], check=True)
    with (folder / "out" / ".git" / "config").open("a") as config:
        config.write("[alias]\n\tx = !touch PWNED\n")  # as file_write could have written it
    cwd = "out" if command == "git x" else None
    made = {tool.name: tool for tool in builtin_tools(Sandbox(SandboxConfig(
        allowed_commands=["git"], writable_paths=["out"]), base_dir=folder))}
    with pytest.raises(SandboxRefusal) as info:
        asyncio.run(made["shell_command"].invoke({"command": command, "cwd": cwd}))
    assert info.value.rule == "writable_paths" and "'git' would work in" in str(info.value)
    assert not (folder / "PWNED").exists() and not (folder / "out" / "PWNED").exists()


@installed("make")
def test_make_never_works_in_a_folder_the_workflow_can_write(folder: Path) -> None:
    (folder / "out").mkdir()
    (folder / "out" / "Makefile").write_text("all:\n\ttouch PWNED\n")
    made = {tool.name: tool for tool in builtin_tools(Sandbox(SandboxConfig(
        allowed_commands=["make"], writable_paths=["out"]), base_dir=folder))}
    with pytest.raises(SandboxRefusal) as info:
        asyncio.run(made["shell_command"].invoke({"command": "make", "cwd": "out"}))
    assert info.value.rule == "writable_paths"
    assert not (folder / "out" / "PWNED").exists()


@installed("git")
def test_git_config_may_read(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    assert shell(folder, "git config --get core.bare")["stdout"].strip() == "false"
    assert shell(folder, "git config --list")["exit_code"] == 0


@pytest.mark.parametrize("name", ["GIT_SSH_COMMAND", "GIT_PAGER", "GIT_EDITOR", "GIT_CONFIG_COUNT", "GIT_EXEC_PATH",
                                  "LD_PRELOAD", "PAGER", "EDITOR", "LESSOPEN", "BASH_ENV", "TAR_OPTIONS", "PYTHONPATH",
                                  "NODE_OPTIONS", "PERL5OPT", "XDG_CONFIG_HOME", "git_ssh"])
def test_variables_that_make_programs_run_programs_need_danger_opt_in(name: str) -> None:
    with pytest.raises(ValidationError, match="danger_opt_in"):
        SandboxConfig(shell_env=[name])
    assert SandboxConfig(shell_env=[name], danger_opt_in=[name]).shell_env == [name]


@installed("git")
def test_a_git_variable_opted_in_reaches_git(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_AUTHOR_NAME", "someone")
    done = shell(folder, "git var GIT_AUTHOR_IDENT", shell_env=["GIT_AUTHOR_NAME"], danger_opt_in=["GIT_AUTHOR_NAME"])
    assert done["stdout"].startswith("someone")


def test_the_policy_table_in_the_docs_lists_every_program() -> None:
    from pytest_agentloom.tools._commands import EVERYDAY, RUNS_PROGRAMS

    page = (Path(__file__).parents[2] / "docs" / "sandbox.md").read_text()
    for members in RUNS_PROGRAMS.values():
        for name in members:
            assert f"`{name}`" in page, name
    for name in EVERYDAY:
        assert f"`{name}`" in page, name


def test_names_are_compared_without_version_suffix_or_case() -> None:
    from pytest_agentloom.tools._commands import normalized

    assert [normalized(name) for name in ("python3.11", "Perl5.36", "lua5.4", "gawk-5.1.0", "node18", "7z",
                                          "bash.exe", "ld-linux-x86-64.so.2")] == [
        "python", "perl", "lua", "gawk", "node", "7z", "bash", "ld-linux-x86-64.so"]
