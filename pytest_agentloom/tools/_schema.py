"""JSON Schema for tools: derived from a function's type hints, and a small validator.

The derivation covers what tool signatures use in practice: ``str``, ``int``,
``float``, ``bool``, ``list[X]``, ``dict[str, X]``, ``Literal[...]`` (an
``enum``), ``X | None`` (optional) and pydantic models. A parameter with a
default is not required. ``*args``/``**kwargs`` and parameters named ``ctx``
are left out.

The validator checks the subset of JSON Schema that tool parameters use
(``type``, ``properties``, ``required``, ``additionalProperties: false``,
``enum``, ``items``, length and range bounds). Each problem names the path of
the value it is about, e.g. ``$.to: expected string, got integer``.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, Literal

__all__ = ["find_additional_properties_true", "schema_for_function", "schema_for_type", "validate_against"]

_SIMPLE: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object",
                           list: "array", type(None): "null"}


def schema_for_function(function: Callable[..., Any], *, skip: tuple[str, ...] = ("self", "ctx")) -> dict[str, Any]:
    """The ``parameters`` object of a tool whose arguments are ``function``'s parameters."""
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # unresolvable forward references: fall back to no type for those parameters
        hints = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, parameter in signature.parameters.items():
        if name in skip or parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        hint = hints.get(name, parameter.annotation)
        prop = {} if hint is inspect.Parameter.empty else schema_for_type(hint)
        if parameter.default is not inspect.Parameter.empty:
            if parameter.default is not None and _json_literal(parameter.default):
                prop = {**prop, "default": parameter.default}
        elif not _accepts_none(hint):
            required.append(name)
        properties[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def schema_for_type(hint: Any) -> dict[str, Any]:
    """The JSON Schema of one Python type hint; ``{}`` (anything) for types it can't express."""
    if hint in _SIMPLE:
        return {"type": _SIMPLE[hint]}
    if hint is Any or hint is object:
        return {}
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        return schema_for_type(args[0])
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in args if arg is not type(None)]
        if len(options) == 1:
            return schema_for_type(options[0])
        return {"anyOf": [schema_for_type(arg) for arg in options]}
    if origin in (list, tuple, set, frozenset) or origin is typing.Sequence:
        schema: dict[str, Any] = {"type": "array"}
        if args and args[0] is not Ellipsis:
            schema["items"] = schema_for_type(args[0])
        return schema
    if origin is dict or origin is typing.Mapping:
        schema = {"type": "object"}
        if len(args) == 2 and args[1] is not Any:
            schema["additionalProperties"] = schema_for_type(args[1])
        return schema
    if isinstance(hint, type) and hasattr(hint, "model_json_schema"):
        return dict(hint.model_json_schema())
    return {}


def _accepts_none(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in typing.get_args(hint)


def _json_literal(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def _json_type(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPE_CHECKS[name](value):
            return name
    return type(value).__name__


def validate_against(schema: dict[str, Any], value: Any, path: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema``, as ``path: problem`` lines; empty when it fits."""
    problems: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        allowed = expected if isinstance(expected, list) else [expected]
        if not any(_TYPE_CHECKS.get(kind, lambda v: True)(value) for kind in allowed):
            return [f"{path}: expected {' or '.join(allowed)}, got {_json_type(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of {schema['enum']!r}")
    if "const" in schema and value != schema["const"]:
        problems.append(f"{path}: must be {schema['const']!r}")
    if "anyOf" in schema and not any(not validate_against(option, value, path) for option in schema["anyOf"]):
        problems.append(f"{path}: matches none of the allowed shapes")
    if isinstance(value, str):
        problems.extend(_bounds(path, len(value), schema, "minLength", "maxLength", "characters"))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{path}: {value} is less than the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{path}: {value} is more than the maximum {schema['maximum']}")
    if isinstance(value, list):
        problems.extend(_bounds(path, len(value), schema, "minItems", "maxItems", "items"))
        if isinstance(schema.get("items"), dict):
            for index, item in enumerate(value):
                problems.extend(validate_against(schema["items"], item, f"{path}[{index}]"))
    if isinstance(value, dict):
        problems.extend(_validate_object(schema, value, path))
    return problems


def _bounds(path: str, size: int, schema: dict[str, Any], low: str, high: str, unit: str) -> list[str]:
    problems = []
    if low in schema and size < schema[low]:
        problems.append(f"{path}: has {size} {unit}, fewer than {schema[low]}")
    if high in schema and size > schema[high]:
        problems.append(f"{path}: has {size} {unit}, more than {schema[high]}")
    return problems


def _validate_object(schema: dict[str, Any], value: dict[str, Any], path: str) -> list[str]:
    problems = []
    properties = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            problems.append(f"{path}: missing required property '{name}'")
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            problems.extend(validate_against(properties[name], item, f"{path}.{name}"))
        elif extra is False:
            problems.append(f"{path}: unexpected property '{name}'")
        elif isinstance(extra, dict):
            problems.extend(validate_against(extra, item, f"{path}.{name}"))
    return problems


def find_additional_properties_true(schema: Any, path: str = "schema") -> str | None:
    """The path of the first ``additionalProperties: true`` in ``schema``, if any: response schemas refuse it."""
    if isinstance(schema, dict):
        if schema.get("additionalProperties") is True:
            return f"{path}.additionalProperties"
        for key, value in schema.items():
            found = find_additional_properties_true(value, f"{path}.{key}")
            if found:
                return found
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found = find_additional_properties_true(value, f"{path}[{index}]")
            if found:
                return found
    return None
