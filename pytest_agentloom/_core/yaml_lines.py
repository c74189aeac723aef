"""Where in a YAML file a value was written: the line a message about it should point at.

The reader (:mod:`.yaml_io`) builds plain data and keeps no positions, since most documents are read
to be used and positions would cost every read. A message about a workflow is rare, so the line is
found when one is made: the text is read again into a node tree (:func:`.yaml_io.parse_yaml`, with
the reader's limits) and walked to the value.
"""

from __future__ import annotations

import re

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import DataFileError
from .yaml_io import parse_yaml

__all__ = ["line_of"]

_INDEXED = re.compile(r"^steps\[(\d+)\]$")
_PART = re.compile(r"[^.\[\]]+|\[\d+\]")


def line_of(text: str, step_id: str | None = None, field: str | None = None,
            needle: str | None = None) -> int | None:
    """The 1-based line of ``field`` (``prompt``, ``tool_args.text``, ``conditions[0].target``) in step
    ``step_id`` (or at the top level), or of the step itself; ``needle`` narrows it to the first line at or
    after that one holding the text (a placeholder inside a block scalar). ``None`` when it is not found."""
    try:
        _, root = parse_yaml(text)
    except DataFileError:
        return None
    node = _step_node(root, step_id) if step_id is not None else root
    if node is None:
        return _first_line_with(text, needle, 1) if needle else None
    node = _walk(node, field or "")
    line = node.start_mark.line + 1
    if needle:
        return _first_line_with(text, needle, line) or _first_line_with(text, needle, 1) or line
    return line


def _step_node(root: Node | None, step_id: str) -> Node | None:
    steps = _child(root, "steps")
    if not isinstance(steps, SequenceNode):
        return None
    indexed = _INDEXED.match(step_id)
    if indexed:
        index = int(indexed.group(1))
        return steps.value[index] if index < len(steps.value) else None
    for step in steps.value:
        found = _child(step, "id")
        if isinstance(found, ScalarNode) and found.value == step_id:
            return step
    return None


def _walk(node: Node, field: str) -> Node:
    """As deep into ``field``'s parts as the tree goes: the nearest value written."""
    for part in _PART.findall(field):
        inner = _child(node, part)
        if inner is None:
            break
        node = inner
    return node


def _child(node: Node | None, part: str) -> Node | None:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == part:
                return value
    elif isinstance(node, SequenceNode) and part.startswith("["):
        index = int(part[1:-1])
        return node.value[index] if index < len(node.value) else None
    return None


def _first_line_with(text: str, needle: str, start: int) -> int | None:
    for number, line in enumerate(text.splitlines()[start - 1:], start):
        if needle in line:
            return number
    return None
