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
"billion laughs" is refused), an anchor that contains an alias to itself, an
anchor defined twice, and a key given twice in one mapping (merge keys ``<<``
may be overridden, as YAML intends). Each refusal is a
:class:`~pytest_agentloom.errors.YamlReadError` naming the file, the line and
what is wrong; callers that have an error of their own (a workflow, a scenario
table, a cassette) wrap it, keeping the text.

A text is read in three steps, all through PyYAML's public loader API:

1. **Compose**: libyaml's C composer builds the node tree
   (``check_node``/``get_node``). It recurses, but libyaml (0.2.5 and later,
   the version PyYAML's wheels carry) stops any nesting deeper than 1,000
   levels while scanning, so no text can take it deeper. Where libyaml lacks
   that limit, or PyYAML was built without libyaml, PyYAML's Python composer
   builds the tree instead, stopped at ``max_depth`` as it descends: a deep
   text is a :class:`YamlReadError`, never a crash.
2. **Check**: one iterative walk over the nodes checks depth, aliases and
   their expanded size, loops and duplicate keys. Nothing is constructed
   before the whole document has passed.
3. **Construct**: a document of the core tags (``str``, ``int``, ``float``,
   ``bool``, ``null``, plain mappings and lists; any scalar tag) is built by a
   second iterative walk; one with a merge key, a collection tag such as
   ``!!set``, or a non-scalar key goes to PyYAML's ``construct_document``.
   Both give the same data (one shared object per anchor, as PyYAML builds
   it); the walk reads a 1,000-interaction cassette about 40% faster. With
   ``AGENTLOOM_SPEEDUPS=0`` (:mod:`.speedups`) every document takes
   ``construct_document``.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.events import StreamEndEvent
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

try:  # libyaml's parser and composer when PyYAML was built with it
    _BaseLoader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _BaseLoader = yaml.SafeLoader

_LIBYAML_NEST_LIMIT = 1_000  # libyaml >= 0.2.5 refuses nesting this deep, in the scanner


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
    """PyYAML's safe loader, with libyaml's parser and composer where PyYAML has them.

    The composer asks :meth:`resolve` the tag of every node; PyYAML's answer for a plain scalar tries a
    regular expression or two by its first character. Its answer depends on the text alone when no path
    resolver is registered (none is, by default), so each loader remembers it for short texts, which
    repeat (keys, ``null``, ``200``): a fifth of composing a cassette. Quoted and block scalars and
    collections get the default tags, as PyYAML gives them.
    """

    def __init__(self, stream: str, *, remember: bool) -> None:
        super().__init__(stream)
        self.remembered: dict[str, str] | None = {} if remember else None

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        remembered = self.remembered
        if remembered is None or self.yaml_path_resolvers:
            return super().resolve(kind, value, implicit)  # type: ignore[no-any-return]
        if kind is not ScalarNode:
            return self.DEFAULT_MAPPING_TAG if kind is MappingNode else self.DEFAULT_SEQUENCE_TAG  # type: ignore[no-any-return]
        if not implicit[0]:
            return self.DEFAULT_SCALAR_TAG  # type: ignore[no-any-return]
        tag = remembered.get(value)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(value) <= 64:
                remembered[value] = tag
        return tag  # type: ignore[no-any-return]


class _DepthBoundComposer(Composer):
    """PyYAML's Python composer, refusing nesting past ``max_depth`` as it descends (see the module docs)."""

    max_depth: int
    depth: int

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.depth > self.max_depth:  # the walk names the exact level; this only stops the recursion
            raise _TooDeep(self.peek_event().start_mark)  # type: ignore[attr-defined] # the loader's parser
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


class _DepthBoundLoader(_DepthBoundComposer, _BaseLoader):  # type: ignore[misc,valid-type]
    """The safe loader with the depth-bound Python composer in front of libyaml's (or in PyYAML's place)."""

    def __init__(self, stream: str, max_depth: int) -> None:
        _BaseLoader.__init__(self, stream)  # type: ignore[misc]
        Composer.__init__(self)  # libyaml's loader does not set up the Python composer
        self.max_depth, self.depth = max_depth, 0


class _TooDeep(Exception):
    """Raised by :class:`_DepthBoundLoader`, turned into a :class:`YamlReadError` by the reader."""

    def __init__(self, mark: Any) -> None:
        super().__init__()
        self.mark = mark


@functools.cache
def _composer_is_bounded() -> bool:
    """Whether libyaml's C composer is there and cannot be driven deeper than its nesting limit.

    Asked once: the parser's events for one level past the limit (no node is composed, so nothing recurses).
    """
    if _BaseLoader is yaml.SafeLoader:  # pragma: no cover - PyYAML without libyaml
        return False
    depth = _LIBYAML_NEST_LIMIT + 1
    loader = _BaseLoader("[" * depth + "]" * depth)
    try:
        while not loader.check_event(StreamEndEvent):
            loader.get_event()
    except yaml.YAMLError:
        return True
    finally:
        loader.dispose()
    return False  # pragma: no cover - a libyaml older than 0.2.5


def load_yaml(text: str, *, file: str | os.PathLike[str] = "<string>", limits: YamlLimits = DEFAULT_LIMITS) -> Any:
    """The data of the one YAML document in ``text`` (``None`` for an empty text); see the module doc."""
    return parse_yaml(text, file=file, limits=limits)[0]


def load_yaml_items(text: str, *, file: str | os.PathLike[str] = "<string>",
                    limits: YamlLimits = DEFAULT_LIMITS) -> tuple[Any, list[int] | None]:
    """The data of ``text`` as :func:`load_yaml` reads it, and, when it is a list, the line (1-based) each
    item starts on (``None`` otherwise): a scenario table's rows, whose errors name their lines."""
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
    fast = speedups_on()
    loader = _Loader(text, remember=fast) if _composer_is_bounded() else _DepthBoundLoader(text, limits.max_depth)
    try:
        root = _compose(loader, name)
        if root is None:
            return None, None
        walk = _Walk(loader, name, limits, track=not fast or "&" in text)
        walk.check(root)
        data = _build(root, loader, walk.shared) if fast and walk.plain else loader.construct_document(root)
        return data, root
    except YamlReadError:  # a ValueError too
        raise
    except (yaml.YAMLError, _TooDeep, ValueError, OverflowError, IndexError) as exc:  # named in _refusal
        raise _refusal(exc, text, name, limits) from None
    finally:
        loader.dispose()


def _compose(loader: Any, name: str) -> Node | None:
    """The root node of the one document in the text, ``None`` for none (public Composer API)."""
    if not loader.check_node():
        return None
    root: Node = loader.get_node()
    if not loader.check_event(StreamEndEvent):
        mark = loader.peek_event().start_mark
        raise YamlReadError("the file holds more than one YAML document", file=name, line=mark.line + 1,
                            column=mark.column + 1,
                            hint="keep one document; remove the '---' line that starts the next one.")
    return root


def _refusal(exc: Exception, text: str, name: str, limits: YamlLimits) -> YamlReadError:
    """The :class:`YamlReadError` for what PyYAML (or Python, building a value) raised reading ``text``."""
    if isinstance(exc, _TooDeep):
        return _too_deep(name, limits, exc.mark)
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or ""
        if "nesting depth" in problem:  # libyaml's own limit, met while scanning ahead
            return _too_deep(name, limits, mark)
        if problem.startswith("found undefined alias"):
            alias = _name_at(text, mark, "*")
            return _failure(name, f"the alias *{alias} refers to no anchor", mark,
                            f"define '&{alias}' before using '*{alias}'.")
        if (exc.context or "").startswith("found duplicate anchor") and exc.context_mark is not None:
            anchor = _name_at(text, mark, "&")
            return _failure(name, f"the anchor &{anchor} is defined twice (first on line "
                            f"{exc.context_mark.line + 1})", mark, "give each anchor its own name.")
        return _failure(name, f"invalid YAML: {problem}", mark, "fix the YAML syntax.")
    if isinstance(exc, yaml.YAMLError):
        return _failure(name, f"invalid YAML: {exc}", None, "fix the YAML syntax.")
    # an int over Python's digit limit, a date out of range, an empty '!!int' (PyYAML's int constructor
    # indexes the empty text)
    return _failure(name, f"a value cannot be read: {exc}", None, "quote the value to keep it as text.")


def _failure(name: str, problem: str, mark: Any, hint: str) -> YamlReadError:
    return YamlReadError(problem, file=name, line=mark.line + 1 if mark else None,
                         column=mark.column + 1 if mark else None, hint=hint)


def _too_deep(name: str, limits: YamlLimits, mark: Any) -> YamlReadError:
    return _failure(name, f"the data is nested more than {limits.max_depth} levels deep", mark, "flatten the data.")


_NAME = re.compile(r"[^\s,\[\]{}]+")


def _name_at(text: str, mark: Any, sign: str) -> str:
    """The anchor or alias name written at ``mark`` (PyYAML's marks count characters), after ``sign``."""
    index = mark.index if mark is not None else -1
    if 0 <= index < len(text) and text[index] == sign:
        found = _NAME.match(text, index + 1)
        if found:
            return found.group()
    return "?"


class _Walk:
    """The checks of the module docs, in one iterative walk over the node tree in document order.

    ``shared`` gets the ``id()`` of every node met more than once (an anchor's node, met again at each alias),
    and ``plain`` whether :func:`_build` can construct the tree. The ids stay valid: the tree holds every node
    while the read lasts, and nothing outlives it.
    """

    def __init__(self, loader: Any, file: str, limits: YamlLimits, *, track: bool = True) -> None:
        self.loader, self.file, self.limits = loader, file, limits
        self.track = track
        self.shared: set[int] = set()
        self.plain = True
        self.aliases = self.alias_values = self.alias_chars = 0
        self.sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded values, expanded characters)

    def check(self, root: Node) -> None:
        """Walk the collections in document order, each once; scalars are looked at in their collection's turn.

        Only a text with an ``&`` can hold an anchor, so only then are nodes told apart from aliases to them.
        """
        if type(root) is ScalarNode:
            return
        track = self.track
        max_depth = self.limits.max_depth
        seen: set[int] = set()
        opened: set[int] = set()  # the collections around the one being looked at
        stack: list[tuple[Node, int, Node]] = [(root, 0, root)]  # node, depth (-1: leaving it), where written
        while stack:
            node, depth, where = stack.pop()
            if track:
                key = id(node)
                if depth < 0:
                    opened.discard(key)
                    continue
                if key in seen:
                    self._alias(node, where, key in opened)
                    continue
                seen.add(key)
                opened.add(key)
                stack.append((node, -1, node))
            if depth >= max_depth:
                raise _too_deep(self.file, self.limits, node.start_mark)
            depth += 1
            if type(node) is SequenceNode:
                self.plain = self.plain and node.tag == _SEQ_TAG
                for child in reversed(node.value):
                    if type(child) is not ScalarNode:
                        stack.append((child, depth, node))
                    elif track:
                        if id(child) in seen:
                            self._alias(child, node, False)
                        seen.add(id(child))
            else:
                self._keys(node)
                for key, value in reversed(node.value):
                    for child in (value, key):
                        if type(child) is not ScalarNode:
                            stack.append((child, depth, key))
                        elif track:  # a scalar met again is an alias to it, whichever meeting comes first
                            if id(child) in seen:
                                self._alias(child, key, False)
                            seen.add(id(child))

    def _keys(self, node: Node) -> None:
        """Refuse a key given twice; a merge key, a non-scalar key or a tag such as ``!!set`` is not plain."""
        self.plain = self.plain and node.tag == _MAP_TAG
        seen: dict[Any, Node] = {}
        for key, _ in node.value:
            if type(key) is not ScalarNode or key.tag == _MERGE_TAG:
                self.plain = False
                continue
            value = key.value if key.tag == _STR_TAG else self._key(key)
            earlier = seen.get(value)
            if earlier is not None:
                raise _failure(
                    self.file, f"the key '{key.value}' appears twice in one mapping (first on line "
                    f"{earlier.start_mark.line + 1})", key.start_mark,
                    f"keep one '{key.value}:'; a repeated key silently replaces the first.")
            seen[value] = key

    def _key(self, key: ScalarNode) -> Any:
        """What the constructor builds of a key that is not a plain string, as the duplicate check compares it
        (its text when it cannot be built: the construction says why, after the checks)."""
        try:
            value = self.loader.construct_object(key, True)
            hash(value)
        except (yaml.YAMLError, ValueError, OverflowError, IndexError, TypeError):
            return ("text", key.value)
        return value

    def _alias(self, node: Node, where: Node, loop: bool) -> None:
        mark = where.start_mark
        if loop:
            raise _failure(self.file, "an alias refers to a value that contains it (a loop)", mark,
                           "a value cannot include itself; write it out instead.")
        self.shared.add(id(node))
        limits = self.limits
        self.aliases += 1
        if self.aliases > limits.max_aliases:
            raise _failure(self.file, f"more than {limits.max_aliases:,} aliases", mark,
                           "write the repeated values out, or use fewer '*' aliases.")
        values, chars = self._size(node)
        self.alias_values += values
        self.alias_chars += chars
        if self.alias_values > limits.max_alias_values or self.alias_chars > limits.max_alias_chars:
            raise _failure(
                self.file, f"the aliases stand for more than {limits.max_alias_values:,} values or "
                f"{limits.max_alias_chars:,} characters (an alias bomb?)", mark,
                "the aliases ('*name') repeat too much data: write the values out, or use fewer aliases.")

    def _size(self, node: Node) -> tuple[int, int]:
        """How many values and characters ``node`` stands for, its aliases expanded (each alias counted as the
        copy a program sees). Computed only for alias targets, once each (most documents have none). The nodes
        form no loop: a loop is refused before its alias is sized."""
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


def _build(root: Node, loader: Any, shared: set[int]) -> Any:
    """The data of a checked, plain tree (see :class:`_Walk`), as ``construct_document`` builds it: strings as
    written, other scalars by the loader's own constructors, one object for each node met more than once.

    Iterative: each collection is made empty when first met and filled when its turn comes off the stack.
    ``made`` is keyed by ``id()`` of shared nodes, which the tree holds while this runs.
    """
    if type(root) is ScalarNode:
        return _scalar(root, loader)
    construct = loader.construct_object
    made: dict[int, Any] = {}
    stack: list[tuple[Node, Any]] = []

    def collection(node: Node) -> Any:
        if shared and id(node) in made:
            return made[id(node)]
        data: Any = {} if type(node) is MappingNode else []
        if shared and id(node) in shared:
            made[id(node)] = data
        stack.append((node, data))
        return data

    top = collection(root)
    while stack:
        node, data = stack.pop()
        if type(node) is SequenceNode:
            append = data.append
            for child in node.value:
                if type(child) is not ScalarNode:
                    append(collection(child))
                else:
                    append(child.value if child.tag == _STR_TAG else construct(child, True))
            continue
        for key, child in node.value:
            if type(child) is not ScalarNode:
                value = collection(child)
            else:
                value = child.value if child.tag == _STR_TAG else construct(child, True)
            data[key.value if key.tag == _STR_TAG else construct(key, True)] = value
    return top


def _scalar(node: ScalarNode, loader: Any) -> Any:
    return node.value if node.tag == _STR_TAG else loader.construct_object(node, True)


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
