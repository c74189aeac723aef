"""What a program can do, judged before ``shell_command`` runs it: the policy behind ``danger_opt_in``.

``allowed_commands`` says which programs a workflow may start; it cannot say what their arguments make
them do. Many ordinary programs run other programs when asked to (``find -exec``, ``timeout``,
``git -c alias.x=!sh``, ``sed 's/x/y/e'``), so a name on the allowlist would be a shell for whoever
writes the arguments (a model, through a tool call). The policy sorts programs in three kinds:

* :data:`RUNS_PROGRAMS`: programs whose *purpose* is to run another program or an arbitrary
  expression (shells, interpreters, wrappers such as ``env``, ``nice`` or ``timeout``, editors,
  pagers, debuggers, containers, remote shells, build and package tools). They run only when also in
  ``danger_opt_in``.
* :data:`EVERYDAY`: programs that are fine to allow except for some options (``git``, ``find``,
  ``sed``, ``tar``, ``make``, ``zip``, ``sort``, ``split``, ``wget``). Those options are refused with
  a :class:`~pytest_agentloom.errors.SandboxRefusal` naming the option; ``danger_opt_in`` lifts it.
* everything else, which the allowlist alone decides.

A program is judged by every name it goes by: the name written in the command, the name of the file
found (a symbolic link keeps its name, as a multi-call binary such as busybox dispatches on it) and
the name of the file the links lead to, so a link named ``tool`` to ``python3`` is ``python3``. Names
are compared without case, an ``.exe``-style suffix or a trailing version (``python3.11``,
``lua5.4``). The tables are listed, with the options, in docs/sandbox.md.
"""

from __future__ import annotations

import filecmp
import functools
import os
import re
from collections.abc import Callable, Iterable, Sequence

from ._argv import before_operands, long_option, short_option
from ._git import git_refusal
from ._sed import sed_refusal

__all__ = [
    "EVERYDAY", "FOLDER_CODE", "PROGRAM_VARIABLES", "RUNS_PROGRAMS", "command_names", "copy_of", "folder_options",
    "needs_opt_in", "normalized", "refused_use", "runs_programs_variable",
]

#: programs that run another program or an arbitrary expression, by what they are
RUNS_PROGRAMS: dict[str, frozenset[str]] = {
    "shells": frozenset({
        "sh", "bash", "dash", "ash", "zsh", "ksh", "mksh", "pdksh", "csh", "tcsh", "fish", "rbash", "yash",
        "elvish", "nu", "xonsh", "busybox", "toybox", "pwsh", "powershell", "cmd", "osascript", "wscript",
        "cscript", "rc", "es",
    }),
    "interpreters": frozenset({
        "python", "pypy", "ipython", "perl", "ruby", "irb", "node", "nodejs", "deno", "bun", "php", "lua",
        "luajit", "tclsh", "wish", "expect", "r", "rscript", "julia", "guile", "racket", "sbcl", "clisp",
        "ocaml", "ghci", "runghc", "jshell", "java", "jrunscript", "groovy", "scala", "kotlin", "erl",
        "escript", "elixir", "iex", "dotnet", "swift", "awk", "gawk", "mawk", "nawk", "original-awk",
        "goawk", "busybox-awk", "m4", "dc", "sqlite", "psql", "mysql", "gdb", "lldb", "jjs",
    }),
    "wrappers": frozenset({
        "env", "xargs", "parallel", "exec", "eval", "source", ".", "command", "builtin", "nohup", "nice",
        "renice", "timeout", "stdbuf", "setsid", "flock", "script", "taskset", "ionice", "chrt", "unshare",
        "nsenter", "chroot", "prlimit", "setpriv", "numactl", "cpulimit", "time", "watch", "entr",
        "faketime", "fakeroot", "unbuffer", "rlwrap", "xvfb-run", "dbus-launch", "dbus-run-session",
        "ssh-agent", "sg", "newgrp", "run-parts", "start-stop-daemon", "daemonize", "chpst", "caffeinate",
        "catchsegv", "strace", "ltrace", "valgrind", "perf", "sudo", "su", "doas", "pkexec", "runuser",
        "firejail", "bwrap", "proot", "screen", "tmux", "at", "batch", "crontab", "systemd-run",
        "systemd-nspawn", "machinectl", "ld.so", "ld-linux", "ld-linux-x86-64.so", "ld-linux-aarch64.so",
        "ld-musl-x86_64.so", "ld64.so", "xterm", "openvt", "script-replay", "scriptreplay", "busybox-sh",
    }),
    "editors and pagers": frozenset({
        "vi", "vim", "nvim", "view", "vimdiff", "rvim", "ex", "ed", "red", "emacs", "emacsclient", "nano",
        "pico", "joe", "mg", "micro", "kak", "helix", "hx", "less", "more", "most", "pg", "man", "info",
        "pager", "sensible-pager", "editor", "sensible-editor", "sensible-browser", "x-www-browser",
        "xdg-open", "open", "start",
    }),
    "remote shells and network relays": frozenset({
        "ssh", "scp", "sftp", "rsh", "rlogin", "telnet", "rsync", "nc", "ncat", "netcat", "socat", "ftp",
        "lftp", "mail", "mailx", "mutt", "aria2c", "cpio",
    }),
    "containers, builds and packages": frozenset({
        "docker", "podman", "nerdctl", "kubectl", "lxc", "flatpak", "snap", "vagrant", "npm", "npx",
        "yarn", "pnpm", "pip", "pipx", "uv", "uvx", "poetry", "pdm", "hatch", "conda", "mamba", "tox",
        "nox", "pytest", "cargo", "rustc", "go", "mvn", "gradle", "ant", "rake", "bundle", "gem",
        "composer", "cmake", "ninja", "meson", "gcc", "g++", "cc", "c++", "clang", "clang++", "tcc",
        "ansible", "terraform",
    }),
}
_SUFFIXES = (".exe", ".com", ".bat", ".cmd")
_VERSION = re.compile(r"(?<=.)[-_.]?[0-9][0-9.]*$")


#: environment variables that make programs run other programs (or load code): ``shell_env`` passes one on
#: only when ``danger_opt_in`` lists it too; a trailing ``*`` takes every name it starts
PROGRAM_VARIABLES = (
    "GIT_*", "LD_*", "DYLD_*", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS",
    "EDITOR", "VISUAL", "PAGER", "MANPAGER", "GIT_PAGER", "SYSTEMD_PAGER", "BROWSER", "LESSOPEN", "LESSCLOSE",
    "LESSKEY", "SSH_ASKPASS", "SUDO_ASKPASS", "RSYNC_RSH", "RSH", "CVS_RSH", "TAR_OPTIONS", "ZIPOPT", "ZIP",
    "UNZIP", "MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "WGETRC", "XDG_CONFIG_HOME", "PYTHON*", "PERL5*", "PERLLIB",
    "RUBYOPT", "RUBYLIB", "NODE_OPTIONS", "NODE_PATH", "LUA_INIT*", "TCLLIBPATH", "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS", "GCONV_PATH", "HOSTALIASES", "AWKPATH", "SED",
)


def runs_programs_variable(name: str) -> bool:
    """Whether the environment variable ``name`` can make a program run another (see :data:`PROGRAM_VARIABLES`)."""
    upper = name.upper()
    return any(upper.startswith(entry[:-1]) if entry.endswith("*") else upper == entry for entry in PROGRAM_VARIABLES)


def normalized(name: str) -> str:
    """``name`` as the tables spell it: no case, no ``.exe``-style suffix, no trailing version or ``.so``."""
    name = name.lower()
    for suffix in _SUFFIXES:
        name = name.removesuffix(suffix)
    return _VERSION.sub("", name) if name[-1:].isdigit() else name  # python3.11, lua5.4, gawk-5.1 (not "7z")


#: multi-call binaries: run through a link, they run the tool the link is named after (``ls -> busybox`` is ls)
_MULTI_CALL = frozenset({"busybox", "toybox"})


def command_names(written: str, program: str) -> set[str]:
    """Every name the program of a command goes by: as written, as found, and where its links lead.

    A link to a multi-call binary is judged by its own name only, as that is the tool it runs: on a
    BusyBox system ``ls`` stays ``ls`` (and ``sh`` stays ``sh``), while ``busybox`` itself needs the opt-in.
    """
    names = {normalized(name) for name in (os.path.basename(written), os.path.basename(program)) if name}
    real = normalized(os.path.basename(os.path.realpath(program)))
    if real not in _MULTI_CALL or real in names:
        names.add(real)
    return names


def copy_of(program: str, search_path: str | None) -> str | None:
    """The name of the program of :data:`RUNS_PROGRAMS` that ``program`` is a hard link or a byte-for-byte copy
    of (among those found on ``search_path``), so a renamed copy of ``python3`` is judged as ``python3``.

    The programs on the path are listed once per path and process; a program is compared by its file
    identity, then (same size only) by its bytes.
    """
    try:
        facts = os.stat(program)
    except OSError:
        return None
    by_identity, by_size = _dangerous_files(search_path or os.defpath)
    known = by_identity.get((facts.st_dev, facts.st_ino))
    if known is not None:
        return known
    for other, name in by_size.get(facts.st_size, ()):
        try:
            if filecmp.cmp(program, other, shallow=False):
                return name
        except OSError:
            continue
    return None


@functools.lru_cache(maxsize=8)
def _dangerous_files(search_path: str) -> tuple[dict[tuple[int, int], str], dict[int, list[tuple[str, str]]]]:
    """The programs of :data:`RUNS_PROGRAMS` in the folders of ``search_path`` (each folder listed once, its
    names compared as :func:`normalized` spells them): by (device, inode), and by size."""
    dangerous = frozenset(name for members in RUNS_PROGRAMS.values() for name in members)
    by_identity: dict[tuple[int, int], str] = {}
    by_size: dict[int, list[tuple[str, str]]] = {}
    for folder in dict.fromkeys(search_path.split(os.pathsep)):
        try:
            entries = list(os.scandir(folder or "."))
        except OSError:
            continue
        for entry in entries:
            name = normalized(entry.name)
            if name not in dangerous:
                continue
            try:
                facts = os.stat(entry.path)
            except OSError:
                continue
            if (facts.st_dev, facts.st_ino) not in by_identity:
                by_identity[(facts.st_dev, facts.st_ino)] = name
                by_size.setdefault(facts.st_size, []).append((entry.path, name))
    return by_identity, by_size


def needs_opt_in(names: Iterable[str]) -> tuple[str, str] | None:
    """The name that makes a program with ``names`` run only when in ``danger_opt_in``, and why."""
    for kind, members in RUNS_PROGRAMS.items():
        found = sorted(set(names) & members)
        if found:
            return found[0], (f"'{found[0]}' can run any other program or expression ({kind}), so "
                              "allowed_commands alone does not let it run")
    return None


# -- everyday programs: the options that run programs ------------------------------------------------------------

Check = Callable[[Sequence[str]], "str | None"]


def _find(args: Sequence[str]) -> str | None:
    found = next((arg for arg in args if arg in ("-exec", "-execdir", "-ok", "-okdir")), None)
    return f"'find {found}' runs a program for each file" if found else None


_TAR_VALUED = "bCfgHKLNTVX"  # tar's short options that take a value (the rest of the cluster, or the next arg)


def _tar_archives(options: Sequence[str]) -> list[str]:
    """The archive names ``options`` give tar (``-f X``, ``-fX``, ``-xvf X``, ``--file=X``, ``--file X``,
    old style ``tar xf X``): what tar opens, and may open on another host."""
    found: list[str] = []
    for index, arg in enumerate(options):
        following = options[index + 1] if index + 1 < len(options) else ""
        name, equals, value = arg.partition("=")
        if name.startswith("--fi") and "--file".startswith(name):  # --fi, --fil, --file (getopt prefixes)
            found.append(value if equals else following)
        elif arg.startswith("-") and not arg.startswith("--"):
            for position, letter in enumerate(arg[1:], start=2):
                if letter in _TAR_VALUED:
                    if letter == "f":
                        found.append(arg[position:] or following)
                    break
        elif index == 0:  # old style: each letter that takes a value takes the next argument, in order
            values = iter(options[1:])
            for letter in arg:
                if letter in _TAR_VALUED:
                    value = next(values, "")
                    if letter == "f":
                        found.append(value)
    return found


def _remote_archive(options: Sequence[str]) -> str | None:
    """The archive name GNU tar would open on another host (over ``rsh``/``ssh``: a program started for
    it): a colon before any slash (``host:file``, ``user@host:path``), unless ``--force-local``."""
    if any(arg.startswith("--force-l") and "--force-local".startswith(arg) for arg in options):
        return None
    return next((archive for archive in _tar_archives(options)
                 if ":" in archive and "/" not in archive.split(":", 1)[0]), None)


def _tar(args: Sequence[str]) -> str | None:
    options = before_operands(args)
    remote = _remote_archive(options)
    if remote is not None:
        return (f"'tar -f {remote}' names an archive on another host (a colon before any slash), which tar "
                "reaches by running a remote shell; write './' before the name or add --force-local")
    names = ("--checkpoint-action", "--to-command", "--use-compress-program", "--rsh-command", "--rmt-command",
             "--info-script", "--new-volume-script")
    for index, arg in enumerate(options):
        option = long_option(arg, names, exact=("--checkpoint",)) or short_option(arg, "IF", "bCfgHKLNTVX")
        if option is None and index == 0 and not arg.startswith("-"):  # old style: "tar xIf prog archive"
            option = next((f"-{letter}" for letter in arg if letter in "IF"), None)
        if option == "--checkpoint-action":
            value = arg.split("=", 1)[1] if "=" in arg else (options[index + 1] if index + 1 < len(options) else "")
            if not value.startswith("exec"):
                continue  # --checkpoint-action=dot, =echo, =sleep=1 ...: only exec runs a program
        if option:
            return f"'tar {option}' runs a program"
    return None


def _make(args: Sequence[str]) -> str | None:
    names = ("--eval", "--file", "--makefile", "--directory", "--include-dir")
    for arg in before_operands(args):
        option = long_option(arg, names) or short_option(arg, "ECfI", "jlOoW")
        if option:
            return f"'make {option}' makes make run recipes the workflow's folder does not hold"
        if not arg.startswith("-") and "=" in arg:
            return f"'make {arg.split('=', 1)[0]}=...' replaces a variable that recipes may run as a command"
    return None


def _zip(args: Sequence[str]) -> str | None:
    for arg in before_operands(args):
        option = "-TT" if arg.startswith("-TT") else long_option(arg, ("--unzip-command",))
        if option:
            return f"'zip {option}' runs a program to test the archive"
    return None


def _options_of(program: str, names: tuple[str, ...], short: str = "", takes_value: str = "") -> Check:
    """The check of a program whose only dangerous options are ``names`` (and the short ``short``)."""

    def check(args: Sequence[str]) -> str | None:
        for arg in before_operands(args):
            option = long_option(arg, names) or (short_option(arg, short, takes_value) if short else None)
            if option:
                return f"'{program} {option}' runs a program"
        return None

    return check


#: everyday programs and the check of their arguments: a reason when they would run a program
EVERYDAY: dict[str, Check] = {
    "find": _find,
    "git": git_refusal,
    "sed": sed_refusal,
    "tar": _tar,
    "make": _make,
    "zip": _zip,
    "sort": _options_of("sort", ("--compress-program",)),
    "split": _options_of("split", ("--filter",)),
    "wget": _options_of("wget", ("--use-askpass", "--execute", "--config"), short="e", takes_value="oOaAPtTwQUdY"),
}


#: everyday programs that run what the folder they work in says (git: config and hooks; make: a Makefile)
FOLDER_CODE = frozenset({"git", "make"})
_FOLDER_OPTIONS = ("-C", "--git-dir", "--work-tree", "--directory")


def folder_options(args: Sequence[str]) -> list[str]:
    """The folders ``args`` point git or make at (``-C DIR``, ``--git-dir=DIR``, ``--work-tree DIR``)."""
    folders: list[str] = []
    for index, arg in enumerate(before_operands(args)):
        name, _, value = arg.partition("=")
        if name in _FOLDER_OPTIONS:
            if value:
                folders.append(value)
            elif index + 1 < len(args):
                folders.append(args[index + 1])
        elif arg.startswith("-C") and len(arg) > 2:  # make -Cdir
            folders.append(arg[2:])
    return folders


def refused_use(names: Iterable[str], args: Sequence[str]) -> tuple[str, str] | None:
    """The everyday program of ``names`` and why it may not run with ``args`` (``None``: it may)."""
    for name in sorted(set(names) & EVERYDAY.keys()):
        reason = EVERYDAY[name](args)
        if reason:
            return name, reason
    return None
