"""The YAML text of a snapshot: libyaml's emitter where it writes the very bytes PyYAML's own emitter would.

Snapshot files are reviewed and committed, so their bytes must not depend on whether PyYAML was built with
libyaml. The two emitters agree on the plain, single-quoted and literal-block scalars snapshots are made of,
and differ in a few places, found by comparing both on random documents (tests/plugin/test_snapshot_dumper.py
keeps checking it):

- double-quoted scalars (a tab, a control character, a BOM or a line separator, or a line that ends in a
  space before a line break): long ones are folded at other places;
- characters beyond the Basic Multilingual Plane (emoji): libyaml escapes them;
- a literal block that keeps its trailing line breaks (``|+``: a text ending in a blank line): libyaml
  closes the document with ``...``;
- a long mapping key (about 120 characters or 128 bytes): each switches to the ``? key`` form at its own length;
- an empty mapping key: PyYAML writes it as a complex key (``? ''``).

:func:`dump_yaml` looks for these first (one walk, a regular expression per text) and uses the pure-Python
emitter for a document holding one of them, libyaml's for every other: on a state of megabytes the
pure-Python emitter takes most of a snapshot's time. The same documents are the ones whose YAML reads back as
the data written (a line separator, for one, reads back as a space), so a snapshot of any other can be
compared with its file without writing its text.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["DUMPER_NAME", "dump_yaml", "dump_yaml_python", "fast_dumper_agrees"]

_STR_TAG = "tag:yaml.org,2002:str"


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar(_STR_TAG, value, style="|")
    return dumper.represent_scalar(_STR_TAG, value)


class _SnapshotDumper(yaml.SafeDumper):
    """Keeps insertion order (already stable) and writes multi-line strings as ``|`` blocks."""


_SnapshotDumper.add_representer(str, _represent_str)

_FastBase: type | None = getattr(yaml, "CSafeDumper", None)
if _FastBase is not None:
    class _FastSnapshotDumper(_FastBase):  # type: ignore[misc,valid-type]
        """:class:`_SnapshotDumper` on libyaml's emitter."""

    _FastSnapshotDumper.add_representer(str, _represent_str)
    _FAST: type | None = _FastSnapshotDumper
else:  # pragma: no cover - PyYAML built without libyaml
    _FAST = None

#: which emitter writes snapshots when the document allows it (for the bench's output)
DUMPER_NAME = "libyaml (yaml.CSafeDumper), same bytes" if _FAST is not None else "pure Python (yaml.SafeDumper)"

#: a character either emitter may write escaped in a double-quoted scalar (not a printable one, or a BOM, a
#: line or paragraph separator, a character beyond the BMP)
_ODD = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
_PLAIN_ATOMS = (int, float, bool, type(None))
#: keys longer than this (characters, or UTF-8 bytes) go to the pure-Python emitter: the two switch to the
#: ``? key`` form at different lengths (libyaml counts bytes, PyYAML characters and its context)
_LONG_KEY = 100


def _odd_text(text: str) -> bool:
    if _ODD.search(text):
        return True
    if "\n" in text:  # a literal block, unless a space ends a line (double-quoted) or the text (single-quoted)
        return " \n" in text or text.endswith((" ", "\n\n")) or text == "\n"
    return False


def _odd_key(key: Any) -> bool:
    if type(key) is not str or not key:  # PyYAML writes an empty key as "? ''", libyaml as "''"
        return True
    if "\n" in key or _ODD.search(key):
        return True
    return len(key) > _LONG_KEY or (not key.isascii() and len(key.encode("utf-8")) > _LONG_KEY)


def fast_dumper_agrees(data: Any) -> bool:
    """Whether libyaml's emitter writes ``data`` byte for byte as PyYAML's does (see the module docs)."""
    stack = [data]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        value = pop()
        kind = type(value)
        if kind is str:
            if _odd_text(value):
                return False
        elif kind is dict:
            for key, item in value.items():
                if _odd_key(key):
                    return False
                push(item)
        elif kind is list:
            extend(value)
        elif kind not in _PLAIN_ATOMS:
            return False
    return True


def dump_yaml(data: Any, *, agrees: bool | None = None) -> str:
    """A snapshot's text: keys in insertion order, multi-line strings as ``|`` blocks, 100 columns.

    ``agrees``: what :func:`fast_dumper_agrees` answered for ``data``, if the caller asked already.
    """
    if agrees is None:
        agrees = _FAST is not None and fast_dumper_agrees(data)
    dumper = _FAST if _FAST is not None and agrees else _SnapshotDumper
    return yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True, width=100,
                     default_flow_style=False)


def dump_yaml_python(data: Any) -> str:
    """The same text, always from PyYAML's own emitter (what :func:`dump_yaml` must equal)."""
    return yaml.dump(data, Dumper=_SnapshotDumper, sort_keys=False, allow_unicode=True, width=100,
                     default_flow_style=False)
