"""Whether a ``sed`` command runs a program: GNU sed's ``e`` command and the ``e`` flag of ``s``.

The script is read as GNU sed reads it (``sed/compile.c``: a regular expression ends at the first
unescaped delimiter, bracket expressions included; ``r``/``w`` file names run to the end of the line),
and whatever cannot be read with certainty is refused rather than guessed: a script file (``-f``),
an unknown command, an unterminated ``s``. What is refused names the part that runs a program.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._argv import long_option

__all__ = ["sed_refusal"]

_NO_ARGUMENT = set("=dDFgGhHnNpPxz")
_NUMBER_ARGUMENT = set("qQlL")
_LABEL = set(":btT")
_TEXT = set("aic")
_FILE = set("rRwW")
_S_FLAGS = set("gpiImM0123456789")
_END = set(";\n}#")


def _unreadable(why: str) -> ValueError:
    """The script is not one this reader is sure of (caught in :func:`sed_refusal`, never raised further)."""
    return ValueError(why)


def sed_refusal(args: Sequence[str]) -> str | None:
    """Why ``sed`` with ``args`` would run a program, or cannot be checked; ``None`` when it would not."""
    try:
        scripts = _scripts(args)
        if _runs_program("\n".join(scripts)):
            return "'sed' with the 'e' command or the 'e' flag of 's' runs its text as a shell command"
    except ValueError as why:
        return f"'sed' script cannot be checked ({why}), and a sed script can run a shell command"
    return None


def _scripts(args: Sequence[str]) -> list[str]:
    """The script parts of a sed command: each ``-e``, or the first operand when there is none."""
    scripts: list[str] = []
    operands: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            operands += args[index:]
            break
        if long_option(arg, ("--file",)):
            raise _unreadable("a script file (--file) is not read")
        if long_option(arg, ("--expression",)):
            if "=" in arg:
                scripts.append(arg.split("=", 1)[1])
            elif index < len(args):
                scripts.append(args[index])
                index += 1
            continue
        if long_option(arg, ("--line-length",)) and "=" not in arg:
            index += 1
            continue
        if arg.startswith("-") and not arg.startswith("--") and arg != "-":
            script, used_next = _short_cluster(arg, args[index] if index < len(args) else None)
            if script is not None:
                scripts.append(script)
            index += used_next
            continue
        if not arg.startswith("-"):
            operands.append(arg)
    if not scripts and operands:
        scripts.append(operands[0])
    return scripts


def _short_cluster(arg: str, following: str | None) -> tuple[str | None, int]:
    """The script a short cluster (``-ne 's/x/y/'``) gives (if any), and how many following arguments it used."""
    for position, letter in enumerate(arg[1:], start=1):
        rest = arg[position + 1:]
        if letter == "f":
            raise _unreadable("a script file (-f) is not read")
        if letter == "e":
            if rest:
                return rest, 0
            if following is None:
                raise _unreadable("-e without a script")
            return following, 1
        if letter == "l":  # -l N or -lN: a line length
            return None, 0 if rest else 1
        if letter == "i":  # -i[SUFFIX]: the rest is the suffix
            return None, 0
    return None, 0


def _runs_program(script: str) -> bool:
    """Whether ``script`` holds an ``e`` command or an ``s`` command with the ``e`` flag."""
    at = 0
    while at < len(script):
        at = _skip(script, at, " \t\n;}")
        if at >= len(script):
            return False
        if script[at] == "#":
            at = _line_end(script, at)
            continue
        at = _skip(script, _address(script, at), " \t!")
        if at >= len(script):
            raise _unreadable("an address without a command")
        command = script[at]
        if command == "e":
            return True
        if command == "s":
            flags, at = _substitution(script, at + 1)
            if "e" in flags:
                return True
        else:
            at = _other(script, command, at + 1)
    return False


def _other(script: str, command: str, at: int) -> int:
    """Past every command but ``s`` and ``e``, checking it ends where sed says it does."""
    if command == "{":
        return at
    if command in _NO_ARGUMENT:
        return _end_of_command(script, at)
    if command in _NUMBER_ARGUMENT:
        at = _skip(script, at, " \t")
        while at < len(script) and script[at].isdigit():
            at += 1
        return _end_of_command(script, at)
    if command in _LABEL or command == "v":
        at = _skip(script, at, " \t")
        while at < len(script) and script[at] not in ";\n \t":
            at += 1
        return _end_of_command(script, at)
    if command in _TEXT or command in _FILE:
        return _text_end(script, at) if command in _TEXT else _line_end(script, at)
    if command == "y":
        delimiter, at = _delimiter(script, at)
        at = _delimited(script, _delimited(script, at, delimiter), delimiter)
        return _end_of_command(script, at)
    raise _unreadable(f"unknown command {command!r}")


def _substitution(script: str, at: int) -> tuple[str, int]:
    """The flags of an ``s`` command starting at its delimiter, and where the command ends."""
    delimiter, at = _delimiter(script, at)
    at = _delimited(script, _delimited(script, at, delimiter), delimiter)
    flags = ""
    while at < len(script) and script[at] in _S_FLAGS | {"e", "w"}:
        flags += script[at]
        at += 1
        if flags.endswith("w"):
            return flags, _line_end(script, at)
    return flags, _end_of_command(script, at)


def _address(script: str, at: int) -> int:
    """Past an address (``3``, ``$``, ``/re/I``, ``\\%re%``, ``first~step``, ``a,b``, ``a,+n``), if any."""
    for part in range(2):
        if part and (at >= len(script) or script[at] != ","):
            return at
        if part:
            at = _skip(script, at + 1, " \t")
        if at < len(script) and script[at] in "+~" and part:
            at += 1
        if at < len(script) and script[at] == "$":
            at += 1
        elif at < len(script) and script[at].isdigit():
            while at < len(script) and (script[at].isdigit() or script[at] == "~"):
                at += 1
        elif at < len(script) and script[at] in "/\\":
            delimiter = "/"
            if script[at] == "\\":
                delimiter, at = _delimiter(script, at + 1)
            else:
                at += 1
            at = _delimited(script, at, delimiter)
            while at < len(script) and script[at] in "IM":
                at += 1
        elif not part:
            return at
        at = _skip(script, at, " \t")
    return at


def _delimiter(script: str, at: int) -> tuple[str, int]:
    if at >= len(script) or script[at] in "\n\\":
        raise _unreadable("a missing or invalid delimiter")
    return script[at], at + 1


def _delimited(script: str, at: int, delimiter: str) -> int:
    """Past the text ending at the first unescaped ``delimiter`` (a backslash escapes any character)."""
    while at < len(script):
        char = script[at]
        if char == "\\":
            at += 2
            continue
        if char == delimiter:
            return at + 1
        if char == "\n":
            break
        at += 1
    raise _unreadable("an unterminated expression")


def _end_of_command(script: str, at: int) -> int:
    at = _skip(script, at, " \t")
    if at < len(script) and script[at] not in _END:
        raise _unreadable(f"unexpected {script[at]!r} after a command")
    return at


def _text_end(script: str, at: int) -> int:
    """Past the text of ``a``, ``i`` or ``c``: to the end of the line, and on while a line ends in ``\\``."""
    while True:
        end = _line_end(script, at)
        line = script[at:end]
        if end >= len(script) or (len(line) - len(line.rstrip("\\"))) % 2 == 0:
            return end  # an odd number of backslashes at the end escapes the newline: the text goes on
        at = end + 1


def _line_end(script: str, at: int) -> int:
    end = script.find("\n", at)
    return len(script) if end < 0 else end


def _skip(script: str, at: int, characters: str) -> int:
    while at < len(script) and script[at] in characters:
        at += 1
    return at
