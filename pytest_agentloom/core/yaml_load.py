"""Reading YAML fast: PyYAML's C loader when it has one, and a document composed only once.

The pure-Python loader is ten times slower than libyaml's, which matters for
big scenario tables and for a workflow loaded once per row. Both loaders give
the same data; :func:`load_yaml_with_node` also returns the composed node, for
callers that report line numbers, instead of parsing the text a second time.
Their error messages differ, though: a text the C loader refuses is read again
by the Python loader, so the error the user sees is always the same one.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["SAFE_LOADER", "load_yaml", "load_yaml_with_node"]

SAFE_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, with the C loader where PyYAML has it."""
    try:
        return yaml.load(text, Loader=SAFE_LOADER)
    except yaml.YAMLError:
        return yaml.load(text, Loader=yaml.SafeLoader)  # raises again, with the Python loader's message


def load_yaml_with_node(text: str) -> tuple[Any, yaml.Node | None]:
    """The data of a one-document YAML text and its composed node (for line numbers), from one parse."""
    try:
        return _with_node(text, SAFE_LOADER)
    except yaml.YAMLError:
        return _with_node(text, yaml.SafeLoader)  # raises again, with the Python loader's message


def _with_node(text: str, loader_class: type) -> tuple[Any, yaml.Node | None]:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        return (loader.construct_document(node) if node is not None else None), node
    finally:
        loader.dispose()
