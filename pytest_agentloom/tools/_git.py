"""Whether a ``git`` command runs a program other than git: configuration, options and subcommands.

Git runs programs its configuration names (``alias.x=!sh``, ``core.pager``, ``core.sshCommand``,
``core.editor``, ``core.fsmonitor``, ``diff.external``, filters, credential helpers, ...) and programs
some options name (``--upload-pack``, ``--exec-path``, ``rebase --exec``, ``grep -O``, ...). Listing
the dangerous keys would miss the next one, so configuration given on the command line (``-c``,
``clone --config``) is accepted only for keys of :data:`SAFE_CONFIG` (colours, the author's name,
...), and ``git config`` may only read. ``--config-env`` and the subcommands that exist to run
programs (``filter-branch``, ``submodule foreach``, ``bisect run``, ``mergetool``, ...) are refused.

What git reads from the repository and from ``HOME`` (``.git/config``, hooks) is not seen here:
keep a repository's ``.git`` folder out of ``writable_paths`` (docs/sandbox.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._argv import before_operands, long_option, short_option

__all__ = ["SAFE_CONFIG", "git_refusal"]

#: configuration keys (lower case; a trailing dot takes a whole section) that ``-c`` may set
SAFE_CONFIG = ("color.", "advice.", "user.name", "user.email", "init.defaultbranch", "core.quotepath",
               "core.autocrlf", "core.safecrlf", "core.eol", "column.ui", "log.date", "log.decorate",
               "i18n.", "status.short", "status.branch", "pull.rebase", "pull.ff", "merge.ff")

#: global options that take the next argument as their value
_GLOBAL_VALUES = ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--attr-source")

#: per subcommand: (long options, short letters) that name a program to run
_OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "clone": (("--upload-pack", "--template"), "u"),
    "init": (("--template",), ""),
    "fetch": (("--upload-pack",), ""),
    "pull": (("--upload-pack",), ""),
    "ls-remote": (("--upload-pack",), "u"),
    "fetch-pack": (("--upload-pack", "--exec"), ""),
    "push": (("--receive-pack", "--exec"), ""),
    "send-pack": (("--receive-pack", "--exec"), ""),
    "archive": (("--exec",), ""),
    "rebase": (("--exec",), "x"),
    "grep": (("--open-files-in-pager",), "O"),
}
#: subcommands (or a subcommand's first word) that exist to run programs
_RUN_PROGRAMS = {"difftool": "", "help": "", "filter-branch": "", "filter-repo": "", "mergetool": "",
                 "send-email": "", "instaweb": "", "web--browse": "", "daemon": "", "credential": "",
                 "shell": "", "upload-pack": "", "receive-pack": "", "submodule": "foreach", "bisect": "run"}
_CONFIG_READS = {"get", "list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l",
                 "--get-color", "--get-colorbool"}


def git_refusal(args: Sequence[str]) -> str | None:
    """Why ``git`` with ``args`` would run another program, or ``None``."""
    at = 0
    while at < len(args) and args[at].startswith("-"):
        arg = args[at]
        reason = _global_option(arg, args[at + 1] if at + 1 < len(args) else "")
        if reason:
            return reason
        at += 2 if arg in _GLOBAL_VALUES else 1
    if at >= len(args):
        return None
    return _subcommand(args[at], args[at + 1:])


def _global_option(arg: str, value: str) -> str | None:
    if arg == "-c":
        return _config_key(value, "git -c")
    if long_option(arg, ("--config-env",)):
        return "'git --config-env' sets configuration from a variable, which can make git run a program"
    if arg.startswith("--exec-path="):
        return "'git --exec-path=...' makes git run its commands from another folder"
    return None


def _config_key(setting: str, spelled: str) -> str | None:
    key = setting.split("=", 1)[0].strip().lower()
    if any(key == safe or (safe.endswith(".") and key.startswith(safe)) for safe in SAFE_CONFIG):
        return None
    return (f"'{spelled} {key}=...' sets configuration, and git configuration can name programs to run "
            f"(alias.*=!, core.pager, core.sshCommand, core.fsmonitor, ...); only {', '.join(SAFE_CONFIG)} may be set")


def _subcommand(name: str, args: Sequence[str]) -> str | None:
    options = before_operands(args)
    if name in _RUN_PROGRAMS:
        word = _RUN_PROGRAMS[name]
        if not word or word in options:
            return f"'git {name}{' ' + word if word else ''}' runs programs"
    if name == "config" and not set(options) & _CONFIG_READS:
        return "'git config' may only read (--get, --list): what it writes can make later git commands run programs"
    if name == "clone":
        for at, arg in enumerate(options):
            if arg.startswith("--") and "=" in arg and long_option(arg, ("--config",)):
                reason = _config_key(arg.split("=", 1)[1], "git clone --config")
            elif (arg == "-c" or long_option(arg, ("--config",))) and at + 1 < len(options):
                reason = _config_key(options[at + 1], f"git clone {arg}")
            else:
                continue
            if reason:
                return reason
    long_names, letters = _OPTIONS.get(name, ((), ""))
    for arg in options:
        option = long_option(arg, long_names) or (short_option(arg, letters, "") if letters else None)
        if option:
            return f"'git {name} {option}' runs a program"
    return None
