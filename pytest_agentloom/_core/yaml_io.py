"""The one way the package reads YAML: safe, bounded, and strict about duplicate keys.

Every YAML file we read (workflows, scenario tables, cassettes, snapshots, tool
tapes, ``--state`` and ``--script`` files) is untrusted: a 400-byte file of
nested anchors expands to gigabytes, 100,000 nested ``[`` crash a recursive
reader, and a repeated key silently replaces the first (``api_key: {redact: true}``
then ``api_key: {redact: false}`` would switch redaction off). So the reader
refuses a text over :attr:`YamlLimits.max_bytes`, nesting deeper than
``max_depth``, more than ``max_aliases`` aliases, aliases that together stand
for more than ``max_alias_values`` values or ``max_alias_chars`` characters of
text (each alias counted as the copy the program will see, so a 400-byte
"billion laughs" is refused), an anchor that refers to itself, and a key given
twice in one mapping (merge keys ``<<`` may be overridden, as YAML intends).
Each refusal is a :class:`~pytest_agentloom.errors.YamlReadError` naming the
file, the line and what is wrong; callers that have an error of their own (a
workflow, a scenario table, a cassette) wrap it, keeping the text.

The text is read in one pass over the events of libyaml's parser (PyYAML's
public ``check_event``/``get_event``; its pure-Python parser where PyYAML has no
libyaml). The parser is iterative, and so is the pass: no text, however deeply
nested, can exhaust the stack. The pass checks every limit as the events come,
and builds, for the constructor PyYAML's safe loader uses:

- the data itself, when the document is of the core tags (strings, numbers,
  booleans, nulls, any other scalar tag through the loader's constructors,
  plain mappings with scalar keys, lists): the same data, with one object per
  anchor, as PyYAML builds it;
- else (a merge key, a tag such as ``!!set``, a key that is a collection or an
  alias, a key given twice, a value that cannot be built), the text is read
  again into a node tree, with the same checks in the same order, and PyYAML's
  ``construct_document`` builds it, or the error is named.

Building the data in the pass is what keeps the reader cheap: a node tree
holds three objects the garbage collector follows per value (the node and two
marks), and a 1,000-interaction cassette's 250,000 of them made collections take
most of the read (0.9 s against 0.2 s in a process with the vcrpy and openai
modules loaded). With ``AGENTLOOM_SPEEDUPS=0`` (:mod:`.speedups`) every document
takes the node tree, and the parser's tags are asked of the resolver every time.
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
from .speedups import speedups_on

__all__ = [
    "DEFAULT_LIMITS", "YamlLimits", "load_yaml", "load_yaml_items", "parse_yaml", "read_text_capped", "read_yaml_file",
]

_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"

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
    """The safe loader; only its parser, resolver and constructor are used (the pass is ours)."""


def load_yaml(text: str, *, file: str | os.PathLike[str] = "<string>", limits: YamlLimits = DEFAULT_LIMITS) -> Any:
    """The data of the one YAML document in ``text`` (``None`` for an empty text); see the module doc."""
    return _read(text, str(file), limits, None)


def load_yaml_items(text: str, *, file: str | os.PathLike[str] = "<string>",
                    limits: YamlLimits = DEFAULT_LIMITS) -> tuple[Any, list[int] | None]:
    """The data of ``text`` as :func:`load_yaml` reads it, and, when it is a list, the line (1-based) each
    item starts on (``None`` otherwise): a scenario table's rows, whose errors name their lines."""
    lines: list[int] = []
    data = _read(text, str(file), limits, lines)
    return data, lines if isinstance(data, list) else None


def parse_yaml(text: str, *, file: str | os.PathLike[str] = "<string>",
               limits: YamlLimits = DEFAULT_LIMITS) -> tuple[Any, Node | None]:
    """The data and the root node (for line numbers: ``node.start_mark.line``) of ``text``."""
    name = str(file)
    root = _pass(text, name, limits, nodes=True, item_lines=None)
    return _constructed(root, name, limits), root


def _read(text: str, file: str, limits: YamlLimits, item_lines: list[int] | None) -> Any:
    """The data of ``text``: built in the pass, or from the node tree (see the module docs)."""
    if speedups_on():
        try:
            return _pass(text, file, limits, nodes=False, item_lines=item_lines)
        except _NeedsNodes:
            if item_lines is not None:
                item_lines.clear()
    root = _pass(text, file, limits, nodes=True, item_lines=item_lines)
    return _constructed(root, file, limits)


def _pass(text: str, file: str, limits: YamlLimits, *, nodes: bool, item_lines: list[int] | None) -> Any:
    """One pass over the events of ``text``: its data, or its root node (``None`` for an empty text)."""
    if len(text) > limits.max_bytes:
        raise YamlReadError(f"the text is {len(text):,} characters, over the limit of {limits.max_bytes:,}",
                            file=file, hint="split the file, or keep large data out of YAML.")
    loader = _Loader(text)
    try:
        return _Pass(loader, file, limits, nodes=nodes, item_lines=item_lines).document()
    except (yaml.YAMLError, ValueError, OverflowError, IndexError) as exc:
        if isinstance(exc, YamlReadError):  # a ValueError too
            raise
        raise _refusal(exc, file, limits) from None
    finally:
        loader.dispose()


def _constructed(root: Node | None, file: str, limits: YamlLimits) -> Any:
    """PyYAML's data of a checked node tree."""
    if root is None:
        return None
    loader = _Loader("")  # for its constructor: its parser is never asked
    try:
        return loader.construct_document(root)
    except (yaml.YAMLError, ValueError, OverflowError, IndexError) as exc:
        raise _refusal(exc, file, limits) from None
    finally:
        loader.dispose()


def _refusal(exc: Exception, file: str, limits: YamlLimits) -> YamlReadError:
    """The :class:`YamlReadError` for what PyYAML (or Python, building a value) raised."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or ""
        if "nesting depth" in problem:  # libyaml (0.2.5 and later) stops deep nesting while scanning ahead
            return _failure(file, f"the data is nested more than {limits.max_depth} levels deep", mark,
                            "flatten the data.")
        return _failure(file, f"invalid YAML: {problem}", mark, "fix the YAML syntax.")
    if isinstance(exc, yaml.YAMLError):
        return _failure(file, f"invalid YAML: {exc}", None, "fix the YAML syntax.")
    # an int over Python's digit limit, a date out of range, an empty '!!int' (PyYAML's int constructor
    # indexes the empty text)
    return _failure(file, f"a value cannot be read: {exc}", None, "quote the value to keep it as text.")


def _failure(file: str, problem: str, mark: Any, hint: str) -> YamlReadError:
    return YamlReadError(problem, file=file, line=mark.line + 1 if mark else None,
                         column=mark.column + 1 if mark else None, hint=hint)


class _NeedsNodes(Exception):
    """The document is not of the core tags: it is read again into a node tree (see the module docs)."""


_NO_KEY: Any = object()


class _Frame:
    """A mapping or sequence being read: what it builds, its anchor, the sizes when it started, the key
    waiting for its value and, in a node tree, the keys seen so far (for the duplicate check)."""

    __slots__ = ("anchor", "chars", "container", "is_list", "key", "seen", "values")

    def __init__(self, container: Any, is_list: bool, anchor: str | None, values: int, chars: int) -> None:
        self.container, self.is_list, self.anchor = container, is_list, anchor
        self.values, self.chars = values, chars
        self.key: Any = _NO_KEY
        self.seen: dict[Any, ScalarNode] | None = None


#: Scalar tags the pass builds with the loader's own constructor functions (``str`` is the text itself); any
#: other scalar tag (a timestamp, ``!!binary``) is left to the node tree.
_CORE_SCALARS = frozenset({"tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int",
                           "tag:yaml.org,2002:float"})


class _Pass:
    """The events of one text to its data or its node tree, checking the limits as they come."""

    def __init__(self, loader: Any, file: str, limits: YamlLimits, *, nodes: bool,
                 item_lines: list[int] | None) -> None:
        self.loader, self.file, self.limits = loader, file, limits
        self.nodes, self.item_lines = nodes, item_lines
        resolvers = loader.yaml_implicit_resolvers
        # the first characters an implicit resolver looks at: a plain scalar starting with another is a string,
        # as the resolver would answer. None (ask the resolver every time) when one looks at every scalar or a
        # path resolver is registered, and with the speed-ups off.
        self.first: frozenset[str] | None = (None if None in resolvers or loader.yaml_path_resolvers
                                             or not speedups_on() else frozenset(resolvers))
        self.tags: dict[str, str] = {}  # short plain texts (keys, null, 200) -> their tag: they repeat
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # name -> (its value or node, values, characters)
        self.open: set[str] = set()  # anchors whose value is being read
        self.values = self.chars = 0  # read inside open anchors, each alias counted as the copy it stands for
        self.aliases = self.alias_values = self.alias_chars = 0

    def fail(self, problem: str, mark: Any, hint: str) -> YamlReadError:
        return _failure(self.file, problem, mark, hint)

    def document(self) -> Any:
        loader = self.loader
        loader.get_event()  # the stream's start
        if loader.check_event(StreamEndEvent):
            return None
        loader.get_event()  # the document's start
        root = self._root()
        if not isinstance(loader.get_event(), DocumentEndEvent):  # pragma: no cover - the parser's order
            raise self.fail("the document does not end", None, "fix the YAML syntax.")
        if not loader.check_event(StreamEndEvent):
            raise self.fail("the file holds more than one YAML document", loader.peek_event().start_mark,
                            "keep one document; remove the '---' line that starts the next one.")
        return root

    def _root(self) -> Any:
        """The document's root: the hot loop (the common cases inline; the rest in the methods below)."""
        get, nodes, item_lines = self.loader.get_event, self.nodes, self.item_lines
        first, open_anchors, tags = self.first, self.open, self.tags
        stack: list[_Frame] = []
        while True:
            event: Any = get()  # C and Python events: the same classes and fields
            kind = type(event)
            if item_lines is not None and len(stack) == 1 and stack[0].is_list and kind is not SequenceEndEvent:
                item_lines.append(event.start_mark.line + 1)  # an item of the top-level list starts here
            if kind is ScalarEvent:
                text = event.value
                if (first is not None and not nodes and event.tag is None and event.anchor is None
                        and not open_anchors and (not event.implicit[0] or text[:1] not in first
                                                  or tags.get(text) == _STR_TAG)):
                    value = text  # most values: a string, as the resolver says (or has said), outside anchors
                else:
                    value = self._scalar(event)
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                value = self._close(stack.pop(), event)
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                stack.append(self._open(event, kind is SequenceStartEvent, len(stack)))
                continue
            elif kind is AliasEvent:
                value = self._alias(event)
            else:  # pragma: no cover - the parser emits nothing else inside a document
                raise self.fail(f"unexpected {kind.__name__}", event.start_mark, "fix the YAML syntax.")
            if not stack:
                return value
            frame = stack[-1]
            if frame.is_list:
                (frame.container.value if nodes else frame.container).append(value)
            elif frame.key is _NO_KEY:
                if not nodes and (kind is not ScalarEvent or value in frame.container):  # a scalar: hashable
                    raise _NeedsNodes  # a key that is a collection or an alias, or given twice
                frame.key = value
            elif nodes:
                self._pair(frame, value)
            else:
                frame.container[frame.key] = value
                frame.key = _NO_KEY

    def _scalar(self, event: Any) -> Any:
        text = event.value
        tag = event.tag
        if tag is None or tag == "!":
            tag = self._tag(text, event.implicit)
        if self.open:
            self.values += 1
            self.chars += len(text)
        if self.nodes:
            value: Any = ScalarNode(tag, text, event.start_mark, event.end_mark, style=event.style)
        elif tag == _STR_TAG:
            value = text
        elif tag in _CORE_SCALARS:
            try:
                value = self.loader.yaml_constructors[tag](self.loader, ScalarNode(tag, text))
            except (yaml.YAMLError, ValueError, OverflowError, IndexError) as exc:
                raise _NeedsNodes from exc  # the node tree names it, after the checks of what comes before
        else:
            raise _NeedsNodes  # a merge key, a timestamp, !!binary, a tag of one's own
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, 1, len(text))
        return value

    def _tag(self, text: str, implicit: tuple[bool, bool]) -> str:
        """The tag the resolver gives a scalar written without one (see ``first`` in ``__init__``)."""
        first = self.first
        if first is None:
            return self.loader.resolve(ScalarNode, text, implicit)  # type: ignore[no-any-return]
        if not implicit[0] or text[:1] not in first:
            return _STR_TAG  # quoted, a block, or plain with no resolver for its first character
        tag = self.tags.get(text)
        if tag is None:
            tag = self.loader.resolve(ScalarNode, text, implicit)
            if len(text) <= 64:
                self.tags[text] = tag
        return tag  # type: ignore[return-value]

    def _open(self, event: Any, is_list: bool, depth: int) -> _Frame:
        limits = self.limits
        if depth >= limits.max_depth:
            raise self.fail(f"the data is nested more than {limits.max_depth} levels deep", event.start_mark,
                            "flatten the data.")
        tag = event.tag
        if tag is None or tag == "!":  # what the resolver answers (``first``: no path resolver registered)
            tag = ((_SEQ_TAG if is_list else _MAP_TAG) if self.first is not None
                   else self.loader.resolve(SequenceNode if is_list else MappingNode, None, event.implicit))
        container: Any
        if self.nodes:
            container = (SequenceNode if is_list else MappingNode)(tag, [], event.start_mark, None,
                                                                   flow_style=event.flow_style)
        elif tag != (_SEQ_TAG if is_list else _MAP_TAG):
            raise _NeedsNodes  # !!set, !!omap, !!pairs, a tag of one's own
        else:
            container = [] if is_list else {}
        if event.anchor is not None:
            self.open.add(event.anchor)
        frame = _Frame(container, is_list, event.anchor, self.values, self.chars)
        if self.open:  # the collection is one value of each anchor around it (its own included)
            self.values += 1
        return frame

    def _close(self, frame: _Frame, event: Any) -> Any:
        container = frame.container
        if self.nodes:
            container.end_mark = event.end_mark
        if frame.anchor is not None:
            self.open.discard(frame.anchor)
            self.anchors[frame.anchor] = (container, self.values - frame.values, self.chars - frame.chars)
        return container

    def _alias(self, event: Any) -> Any:
        name, mark, limits = event.anchor, event.start_mark, self.limits
        if name in self.open:
            raise self.fail(f"the alias *{name} refers to a value that contains it (a loop)", mark,
                            "a value cannot include itself; write it out instead.")
        if name not in self.anchors:
            raise self.fail(f"the alias *{name} refers to no anchor", mark, f"define '&{name}' before using '*{name}'.")
        self.aliases += 1
        if self.aliases > limits.max_aliases:
            raise self.fail(f"more than {limits.max_aliases:,} aliases", mark,
                            "write the repeated values out, or use fewer '*' aliases.")
        value, values, chars = self.anchors[name]
        self.alias_values += values
        self.alias_chars += chars
        if self.alias_values > limits.max_alias_values or self.alias_chars > limits.max_alias_chars:
            raise self.fail(
                f"the aliases stand for more than {limits.max_alias_values:,} values or "
                f"{limits.max_alias_chars:,} characters (an alias bomb?)", mark,
                "the aliases ('*name') repeat too much data: write the values out, or use fewer aliases.")
        if self.open:
            self.values += values
            self.chars += chars
        return value

    def _pair(self, frame: _Frame, value: Node) -> None:
        """A key and its value into a mapping node, refusing a key given twice (a merge key ``<<`` may be)."""
        key, frame.key = frame.key, _NO_KEY
        if type(key) is ScalarNode and key.tag != _MERGE_TAG:
            seen = frame.seen if frame.seen is not None else {}
            frame.seen = seen
            compared = self._key(key)
            earlier = seen.get(compared)
            if earlier is not None:
                raise self.fail(
                    f"the key '{key.value}' appears twice in one mapping (first on line {earlier.start_mark.line + 1})",
                    key.start_mark, f"keep one '{key.value}:'; a repeated key silently replaces the first.")
            seen[compared] = key
        frame.container.value.append((key, value))

    def _key(self, key: ScalarNode) -> Any:
        """What the constructor builds of a key, as the duplicate check compares it (its text when it cannot be
        built: the constructor says why, after the checks)."""
        if key.tag == _STR_TAG:
            return key.value
        try:
            value = self.loader.construct_object(key, True)
            hash(value)
        except (yaml.YAMLError, ValueError, OverflowError, IndexError, TypeError):
            return ("text", key.value)
        return value


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
