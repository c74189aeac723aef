"""The one way the package reads YAML: safe, bounded, and strict about duplicate keys.

Every YAML file we read (workflows, scenario tables, cassettes, snapshots, tool
tapes, ``--state`` and ``--script`` files) is untrusted: a 400-byte file of
nested anchors expands to gigabytes, 100,000 nested ``[`` crash the C parser,
and a repeated key silently replaces the first (``api_key: {redact: true}``
then ``api_key: {redact: false}`` would switch redaction off). So the reader:

- parses with libyaml's C parser where PyYAML has it (10-50x faster than the
  pure-Python one), and builds the node tree itself, without recursion;
- refuses a text over :attr:`YamlLimits.max_bytes`, nesting deeper than
  ``max_depth``, more than ``max_aliases`` aliases, aliases that together
  stand for more than ``max_alias_values`` values or ``max_alias_chars``
  characters of text (each alias counted as the copy the program will see,
  so a 400-byte "billion laughs" is refused), an anchor that refers to itself, and a
  key given twice in one mapping (merge keys ``<<`` may be overridden, as YAML
  intends);
- raises :class:`~pytest_agentloom.errors.YamlReadError` naming the file, the
  line and what is wrong. Callers that have an error of their own (a workflow,
  a scenario table, a cassette) wrap it, keeping the text.

The checks cost one pass over the parser's events. :func:`parse_yaml` builds a
node tree in that pass and constructs nothing before the whole document has
passed them. :func:`load_yaml` first tries :mod:`.yaml_fast`, which builds the
data of a plain document (core tags, scalar keys) in the same pass with the
same limits and hands anything else, and every error, to the two-pass way: a
1,000-interaction cassette reads about four times faster, with the garbage
collector paused while it is built (:mod:`.gc_pause`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import DataReadError, YamlReadError
from .gc_pause import paused_gc
from .yaml_fast import NOT_PLAIN, plain_data

__all__ = [
    "DEFAULT_LIMITS", "YamlLimits", "load_yaml", "load_yaml_items", "parse_yaml", "read_text_capped", "read_yaml_file",
]

_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"

try:  # libyaml's parser when PyYAML was built with it
    _BaseLoader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _BaseLoader = yaml.SafeLoader


@dataclass(frozen=True)
class YamlLimits:
    """How big a YAML document may be, as written and once its aliases are expanded."""

    max_bytes: int = 64 * 1024 * 1024
    max_depth: int = 200
    max_aliases: int = 10_000
    max_alias_values: int = 200_000
    max_alias_chars: int = 16 * 1024 * 1024


DEFAULT_LIMITS = YamlLimits()


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """The safe loader; only its parser, resolver and constructor are used (the composer is ours)."""


def load_yaml(text: str, *, file: str | os.PathLike[str] = "<string>", limits: YamlLimits = DEFAULT_LIMITS) -> Any:
    """The data of the one YAML document in ``text`` (``None`` for an empty text); see the module doc.

    A plain document is read in one pass (:mod:`.yaml_fast`, same limits, same data); anything else, and
    every error, goes the two-pass way of :func:`parse_yaml`.
    """
    if len(text) <= limits.max_bytes:
        loader = _Loader(text)
        try:
            with paused_gc():
                data = plain_data(loader, limits)
        finally:
            loader.dispose()
        if data is not NOT_PLAIN:
            return data
    return parse_yaml(text, file=file, limits=limits)[0]


def load_yaml_items(text: str, *, file: str | os.PathLike[str] = "<string>",
                    limits: YamlLimits = DEFAULT_LIMITS) -> tuple[Any, list[int] | None]:
    """The data of ``text`` as :func:`load_yaml` reads it, and, when it is a list, the line (1-based) each
    item starts on (``None`` otherwise): a scenario table's rows, whose errors name their lines.

    A plain document is read in one pass, as by :func:`load_yaml`; anything else, and every error,
    goes the two-pass way, whose node tree has the lines.
    """
    if len(text) <= limits.max_bytes:
        lines: list[int] = []
        loader = _Loader(text)
        try:
            with paused_gc():
                data = plain_data(loader, limits, lines)
        finally:
            loader.dispose()
        if data is not NOT_PLAIN:
            return data, lines if isinstance(data, list) else None
    data, root = parse_yaml(text, file=file, limits=limits)
    if not isinstance(data, list) or not isinstance(root, SequenceNode):
        return data, None
    return data, [item.start_mark.line + 1 for item in root.value]


def parse_yaml(text: str, *, file: str | os.PathLike[str] = "<string>",
               limits: YamlLimits = DEFAULT_LIMITS) -> tuple[Any, Node | None]:
    """The data and the root node (for line numbers: ``node.start_mark.line``) of ``text``."""
    name = str(file)
    if len(text) > limits.max_bytes:
        raise YamlReadError(f"the text is {len(text):,} characters, over the limit of {limits.max_bytes:,}",
                            file=name, hint="split the file, or keep large data out of YAML.")
    loader = _Loader(text)
    try:
        with paused_gc():  # nodes and values are only allocated here, never freed: see core.gc_pause
            root = _Composer(loader, name, limits).compose()
            if root is None:
                return None, None
            return loader.construct_document(root), root
    except YamlReadError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if "nesting depth" in str(exc.problem):  # libyaml >= 0.2.5 stops deep flow nesting while scanning ahead
            raise YamlReadError(f"the data is nested more than {limits.max_depth} levels deep", file=name,
                                line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None,
                                hint="flatten the data.") from None
        raise YamlReadError(f"invalid YAML: {exc.problem or exc.context}", file=name,
                            line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None,
                            hint="fix the YAML syntax.") from None
    except yaml.YAMLError as exc:
        raise YamlReadError(f"invalid YAML: {exc}", file=name, hint="fix the YAML syntax.") from None
    except (ValueError, OverflowError, IndexError) as exc:  # an int over Python's digit limit, a date out of
        # range, an empty '!!int' (PyYAML's int constructor indexes the empty text)
        raise YamlReadError(f"a value cannot be read: {exc}", file=name,
                            hint="quote the value to keep it as text.") from None
    finally:
        loader.dispose()


def read_text_capped(path: str | os.PathLike[str], *, max_bytes: int, what: str = "file") -> str:
    """The UTF-8 text of the regular file at ``path``, refusing FIFOs, devices and files over ``max_bytes``.

    The size is checked on the open file before reading a byte, and the read stops at the cap even if the
    file grows meanwhile. ``FileNotFoundError`` passes through (callers often treat it apart); every other
    problem is a :class:`DataReadError` naming the file.
    """
    name = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise DataReadError(f"the {what} cannot be opened: {_reason(exc)}", file=name,
                            hint="pass the path of a readable file.") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file (a FIFO, socket or device)"
        raise DataReadError(f"the {what} is {kind}", file=name, hint="pass the path of a regular file.")
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > max_bytes:
            raise DataReadError(f"the {what} is {info.st_size:,} bytes, over the limit of {max_bytes:,}",
                                file=name, hint="split the file, or keep large data out of it.")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise DataReadError(f"the {what} is over the limit of {max_bytes:,} bytes", file=name,
                            hint="split the file, or keep large data out of it.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataReadError(f"the {what} is not UTF-8 text (byte {exc.start} cannot be decoded)", file=name,
                            hint="save the file as UTF-8.") from None


def read_yaml_file(path: str | os.PathLike[str], *, limits: YamlLimits = DEFAULT_LIMITS) -> Any:
    """:func:`load_yaml` of a regular file, read with :func:`read_text_capped`."""
    return load_yaml(read_text_capped(path, max_bytes=limits.max_bytes, what="YAML file"), file=Path(path),
                     limits=limits)


def _reason(exc: Exception) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


class _Composer:
    """Events to nodes without recursion, checking the limits as it goes."""

    def __init__(self, loader: Any, file: str, limits: YamlLimits) -> None:
        self.loader, self.file, self.limits = loader, file, limits
        self.anchors: dict[str, Node] = {}
        self.open_anchors: set[str] = set()
        self.sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded nodes, expanded characters)
        self.aliases = 0
        self.alias_values = 0
        self.alias_chars = 0

    def fail(self, problem: str, mark: Any, hint: str) -> YamlReadError:
        return YamlReadError(problem, file=self.file, line=mark.line + 1 if mark else None,
                             column=mark.column + 1 if mark else None, hint=hint)

    def compose(self) -> Node | None:
        loader = self.loader
        loader.get_event()  # the stream start
        if loader.check_event(StreamEndEvent):
            loader.get_event()
            return None
        root = self._document()
        if not loader.check_event(StreamEndEvent):
            event = loader.get_event()
            raise self.fail("the file holds more than one YAML document", event.start_mark,
                            "keep one document; remove the '---' line that starts the next one.")
        loader.get_event()
        return root

    def _document(self) -> Node:
        loader = self.loader
        loader.get_event()  # the document start
        stack: list[_Frame] = []
        root: Node | None = None
        while root is None:
            event: Any = loader.get_event()  # C and Python events: same classes and fields, different Mark classes
            kind = type(event)
            done: Node
            if kind is ScalarEvent:  # first: most events are scalars
                tag = event.tag
                if tag is None or tag == "!":
                    tag = loader.resolve(ScalarNode, event.value, event.implicit)
                done = ScalarNode(tag, event.value, *_marks(event), style=event.style)
                if event.anchor is not None:
                    self.anchors[event.anchor] = done
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                frame = stack.pop()
                frame.node.end_mark = event.end_mark
                if frame.anchor is not None:
                    self.open_anchors.discard(frame.anchor)
                done = frame.node
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                node_kind = MappingNode if kind is MappingStartEvent else SequenceNode
                tag = event.tag
                if tag is None or tag == "!":
                    tag = loader.resolve(node_kind, None, event.implicit)
                node = node_kind(tag, [], _marks(event)[0], None, flow_style=event.flow_style)
                if len(stack) >= self.limits.max_depth:
                    raise self.fail(f"the data is nested more than {self.limits.max_depth} levels deep",
                                    event.start_mark, "flatten the data.")
                if event.anchor is not None:
                    self.anchors[event.anchor] = node
                    self.open_anchors.add(event.anchor)
                stack.append(_Frame(node, event.anchor))
                continue
            elif kind is AliasEvent:
                done = self._alias(event)
            else:  # pragma: no cover - the parser emits nothing else inside a document
                raise self.fail(f"unexpected {kind.__name__}", event.start_mark, "fix the YAML syntax.")
            if not stack:
                root = done
            else:
                self._add(stack[-1], done)
        end = loader.get_event()
        assert isinstance(end, DocumentEndEvent)
        return root

    def _alias(self, event: Any) -> Node:
        if event.anchor not in self.anchors:
            raise self.fail(f"the alias *{event.anchor} refers to no anchor", event.start_mark,
                            f"define '&{event.anchor}' before using '*{event.anchor}'.")
        if event.anchor in self.open_anchors:
            raise self.fail(f"the alias *{event.anchor} refers to a value that contains it (a loop)",
                            event.start_mark, "a value cannot include itself; write it out instead.")
        self.aliases += 1
        if self.aliases > self.limits.max_aliases:
            raise self.fail(f"more than {self.limits.max_aliases:,} aliases", event.start_mark,
                            "write the repeated values out, or use fewer '*' aliases.")
        target = self.anchors[event.anchor]
        values, chars = self._size(target)
        self.alias_values += values
        self.alias_chars += chars
        if self.alias_values > self.limits.max_alias_values or self.alias_chars > self.limits.max_alias_chars:
            raise self.fail(
                f"the aliases stand for more than {self.limits.max_alias_values:,} values or "
                f"{self.limits.max_alias_chars:,} characters (an alias bomb?)", event.start_mark,
                "the aliases ('*name') repeat too much data: write the values out, or use fewer aliases.")
        return target

    def _size(self, node: Node) -> tuple[int, int]:
        """How many values and characters ``node`` stands for, its aliases expanded (each alias counted as the
        copy a program sees). Computed only for alias targets, once each: most documents have no alias, and
        sizing every node cost a third of reading a big cassette. The nodes form no loop (refused in ``_alias``).
        """
        sizes = self.sizes
        stack: list[tuple[Node, bool]] = [(node, False)]
        while stack:
            current, children_done = stack.pop()
            if id(current) in sizes:
                continue
            if isinstance(current, ScalarNode):
                sizes[id(current)] = (1, len(current.value))
                continue
            children = ([part for pair in current.value for part in pair] if isinstance(current, MappingNode)
                        else current.value)
            if children_done:
                parts = [sizes[id(child)] for child in children]
                sizes[id(current)] = (1 + sum(n for n, _ in parts), sum(c for _, c in parts))
            else:
                stack.append((current, True))
                stack.extend((child, False) for child in children if id(child) not in sizes)
        return sizes[id(node)]

    def _add(self, frame: _Frame, child: Node) -> None:
        if isinstance(frame.node, SequenceNode):
            frame.node.value.append(child)
            return
        if frame.key is None:
            frame.key = child
            return
        key, frame.key = frame.key, None
        if isinstance(key, ScalarNode) and key.tag != _MERGE_TAG:
            self._check_duplicate(frame, key)
        frame.node.value.append((key, child))

    def _check_duplicate(self, frame: _Frame, key: ScalarNode) -> None:
        value = self._key(key)
        earlier = frame.seen.setdefault(value, key)
        if earlier is not key:
            raise self.fail(
                f"the key '{key.value}' appears twice in one mapping (first on line {earlier.start_mark.line + 1})",
                key.start_mark, f"keep one '{key.value}:'; a repeated key silently replaces the first.")

    def _key(self, key: ScalarNode) -> Any:
        if key.tag == _STR_TAG:  # what the constructor would build, without calling it (most keys)
            return key.value
        try:
            value = self.loader.construct_object(key)
        except (yaml.YAMLError, ValueError, OverflowError):
            value = key.value
        try:
            hash(value)
        except TypeError:
            value = key.value
        return value


def _marks(event: Any) -> tuple[Any, Any]:
    """An event's start and end marks (libyaml's Mark class is not the one PyYAML's nodes are typed with)."""
    return event.start_mark, event.end_mark


class _Frame:
    """A mapping or sequence being composed: its node, the key waiting for its value, the keys seen."""

    __slots__ = ("anchor", "key", "node", "seen")

    def __init__(self, node: Node, anchor: str | None) -> None:
        self.node, self.anchor = node, anchor
        self.key: Node | None = None
        self.seen: dict[Any, ScalarNode] = {}
