"""A one-pass reader for plain YAML documents: parser events straight to data, no node tree.

:mod:`.yaml_io` reads a document in two passes: it composes a node tree from
libyaml's events (checking every limit) and then PyYAML's constructor turns the
nodes into data. Both passes are Python, per value; for a 1,000-interaction
cassette (60,000 values) they cost several times what libyaml takes to parse.

:func:`plain_data` builds the data while it reads the events, applying the
same limits, for the *plain* documents that nearly every file is: one
document of mappings, sequences and scalars of the core tags (``str``, ``int``,
``float``, ``bool``, ``null``), keys that are such scalars, anchors and aliases
without loops. On anything else (another tag, a merge key ``<<``, a complex
key, a repeated key, an unknown alias, a limit passed, a syntax error, a second
document) it gives up and answers :data:`NOT_PLAIN`, and the caller reads the
text the two-pass way, which either builds the same data or raises its usual,
precise error. So this module never decides what is wrong with a file; it only
decides what a file that is plainly right holds, and builds it as PyYAML's safe
constructor would: same scalar constructors, same key equality, one shared
object per anchor.
"""

from __future__ import annotations

from typing import Any

from yaml import events
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

__all__ = ["NOT_PLAIN", "plain_data"]

NOT_PLAIN: Any = object()

_SCALAR, _ALIAS = events.ScalarEvent, events.AliasEvent
_MAP_START, _MAP_END, _SEQ_START, _SEQ_END = (events.MappingStartEvent, events.MappingEndEvent,
                                              events.SequenceStartEvent, events.SequenceEndEvent)

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
#: Scalar tags built by PyYAML's own constructor functions (all but ``str``, which is the text itself).
_CONSTRUCTED = frozenset({"tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int",
                          "tag:yaml.org,2002:float"})


class _NotPlain(Exception):
    """Give up: the two-pass reader decides."""


def plain_data(loader: Any, limits: Any, item_lines: list[int] | None = None) -> Any:
    """The data of the document ``loader`` (a fresh PyYAML loader) parses, or :data:`NOT_PLAIN`.

    ``item_lines``, when given, gets the line (1-based) each item of a top-level sequence starts on:
    what a scenario table's errors name, which the two-pass reader finds in its node tree.
    """
    try:
        return _Builder(loader, limits, item_lines).build()
    except Exception:  # whatever went wrong, the two-pass reader says it properly
        return NOT_PLAIN


class _Builder:
    """Events to data with the limits of :class:`~.yaml_io.YamlLimits` (see the module docs)."""

    def __init__(self, loader: Any, limits: Any, item_lines: list[int] | None = None) -> None:
        self.loader, self.limits = loader, limits
        self.item_lines = item_lines
        resolvers = loader.yaml_implicit_resolvers
        # the first characters an implicit resolver looks at (loader.resolve returns str for any other), or
        # None when a resolver would look at every scalar: then every scalar goes through loader.resolve
        self.resolved_first: frozenset[str] | None = (
            None if None in resolvers or loader.yaml_path_resolvers else frozenset(resolvers))
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # name -> (value, values, characters) it stands for
        self.open_anchors: set[str] = set()
        self.tags: dict[str, str] = {}  # plain scalar text -> its resolved tag
        self.values = 0  # values read inside open anchors, aliases counted as the copies they stand for
        self.chars = 0
        self.aliases = 0
        self.alias_values = 0
        self.alias_chars = 0

    def build(self) -> Any:
        self._expect(events.StreamStartEvent, events.DocumentStartEvent)
        value = self._document()
        self._expect(events.DocumentEndEvent, events.StreamEndEvent)
        return value

    def _expect(self, *kinds: type) -> None:
        for kind in kinds:
            if type(self.loader.get_event()) is not kind:
                raise _NotPlain

    def _document(self) -> Any:
        loader, max_depth = self.loader, self.limits.max_depth
        first, open_anchors = self.resolved_first, self.open_anchors
        # a frame: [container, anchor, values and characters when it started, key waiting for its value]
        stack: list[list[Any]] = []
        pending = _NO_KEY
        item_lines = self.item_lines
        while True:
            event: Any = loader.get_event()
            kind = type(event)
            if item_lines is not None and len(stack) == 1 and type(stack[0][0]) is list and kind is not _SEQ_END:
                item_lines.append(event.start_mark.line + 1)  # an item of the top-level sequence starts here
            if kind is _SCALAR:
                text = event.value
                if (event.tag is None and event.anchor is None and first is not None
                        and (not event.implicit[0] or text[:1] not in first) and not open_anchors):
                    value = text  # the common case, inline: a string no resolver applies to, outside anchors
                else:
                    value = self._scalar(event)
            elif kind is _MAP_END or kind is _SEQ_END:
                container, anchor, values, chars, pending = stack.pop()
                if anchor is not None:
                    self.open_anchors.discard(anchor)
                    self.anchors[anchor] = (container, self.values - values, self.chars - chars)
                value = container
            elif kind is _MAP_START or kind is _SEQ_START:
                if len(stack) >= max_depth:
                    raise _NotPlain
                mapping = kind is _MAP_START
                tag = event.tag
                if tag is None or tag == "!":
                    tag = loader.resolve(MappingNode if mapping else SequenceNode, None, event.implicit)
                if tag != (_MAP if mapping else _SEQ):
                    raise _NotPlain
                if event.anchor is not None:
                    self.open_anchors.add(event.anchor)
                stack.append([{} if mapping else [], event.anchor, self.values, self.chars, pending])
                if open_anchors:  # sizes matter only inside an anchor (for the aliases that repeat it)
                    self.values += 1
                pending = _NO_KEY
                continue
            elif kind is _ALIAS:
                value = self._alias(event)
            else:
                raise _NotPlain
            if not stack:
                return value
            container = stack[-1][0]
            if type(container) is list:
                container.append(value)
            elif pending is _NO_KEY:
                if kind is not _SCALAR or value in container:
                    raise _NotPlain  # a complex key or an alias as a key, a repeated key: the two-pass reader
                pending = value
            else:
                container[pending] = value
                pending = _NO_KEY

    def _scalar(self, event: Any) -> Any:
        text = event.value
        tag = event.tag
        if tag is None or tag == "!":
            first = self.resolved_first
            if first is not None and (not event.implicit[0] or text[:1] not in first):
                tag = _STR  # quoted, a block, or a plain scalar no resolver applies to: what resolve answers
            elif first is not None:  # a plain scalar: its tag depends on its text alone
                tag = self.tags.get(text)
                if tag is None:
                    tag = self.loader.resolve(ScalarNode, text, event.implicit)
                    if len(text) <= 40:  # keys and short values repeat; long texts would only fill the memo
                        self.tags[text] = tag
            else:
                tag = self.loader.resolve(ScalarNode, text, event.implicit)
        if tag == _STR:
            value: Any = text
        elif tag in _CONSTRUCTED:
            value = self.loader.yaml_constructors[tag](self.loader, ScalarNode(tag, text))
        else:
            raise _NotPlain
        if self.open_anchors:
            self.values += 1
            self.chars += len(text)
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, 1, len(text))
        return value

    def _alias(self, event: Any) -> Any:
        name = event.anchor
        if name not in self.anchors or name in self.open_anchors:
            raise _NotPlain
        value, values, chars = self.anchors[name]
        self.aliases += 1
        self.alias_values += values
        self.alias_chars += chars
        limits = self.limits
        if (self.aliases > limits.max_aliases or self.alias_values > limits.max_alias_values
                or self.alias_chars > limits.max_alias_chars):
            raise _NotPlain
        self.values += values
        self.chars += chars
        return value


_NO_KEY: Any = object()
