"""Template rendering for prompts and tool arguments.

Prompts use Python's ``str.format`` syntax, but with a forgiving lookup: an
absent ``{state.…}`` value becomes a blank (and a warning) and an unknown bare
``{name}`` is kept verbatim, because a typo should be visible in what the
model receives rather than crash a long run. Broken braces and bad format
specs are different: they are authoring mistakes, so they raise
:class:`~pytest_agentloom.errors.TemplateError` and can be caught at load time
with :func:`check_template`. So are sizes past the limits: a width or precision
over :data:`MAX_FORMAT_WIDTH` (at load time), and a rendered text, or one value
as text, over :data:`MAX_RENDERED_CHARS` (when it renders).

Tool arguments often carry JSON, HTML or code whose braces are not meant as
templates, so :func:`render_args` only renders strings that visibly contain a
placeholder, and passes ``state.…`` strings through as the value itself.
"""

from __future__ import annotations

import copy
import functools
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from string import Formatter
from typing import Any, Final

from ..._core.state_paths import MISSING, Segment, format_path, get_path, parse_path
from ...errors import StepError, TemplateError
from .sizes import text_length_at_most

__all__ = [
    "MAX_FORMAT_WIDTH",
    "MAX_RENDERED_CHARS",
    "MissingHook",
    "check_template",
    "has_placeholder",
    "missing_key_message",
    "render",
    "render_args",
    "template_fields",
]

MissingHook = Callable[[str], None]
"""Called with a ``{state.…}`` field name (as written) whose value is absent."""

_LOG: Final = logging.getLogger("pytest_agentloom.templates")
_ERROR_PREFIX: Final = "Prompt template error: "
_FORMATTER: Final = Formatter()
_CONVERSIONS: Final = frozenset({"r", "s", "a"})

# Python's format-spec mini-language: [[fill]align][sign][z][#][0][width][grouping][.precision][type]
_SPEC: Final = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?[0-9]*[_,]?(?:\.[0-9]+)?[bcdeEfFgGnosxX%]?", re.DOTALL)

# What makes a tool_args string a template: "{state." / "{state[", or {name}, {name!c}, {name:spec}
# where the spec does not start with whitespace (that would be JSON or CSS).
_ARG_NAME: Final = r"[^\W\d]\w*(?:\.\w+|\[[^\[\]{}]+\])*"
_PLACEHOLDER: Final = re.compile(r"\{state[.\[]|\{" + _ARG_NAME + r"(?:![rsa])?(?::(?:[^\s{}][^{}]*)?)?\}")

_STATE_DOT: Final = "state."

MAX_RENDERED_CHARS: Final = 10_000_000
"""Longest text a template may render to (a prompt of this size is far past any model's context)."""
MAX_FORMAT_WIDTH: Final = 10_000
"""Largest width or precision a format spec may ask for (``{state.x:>999999999}`` would build 1 GB)."""


@dataclass(frozen=True)
class _Field:
    """One replacement field, kept in parts so it can be written back verbatim."""

    name: str
    conversion: str | None
    spec: str

    def as_written(self) -> str:
        """Rebuild the field text; an empty ``{name:}`` spec comes back as ``{name}``."""
        conversion = f"!{self.conversion}" if self.conversion else ""
        spec = f":{self.spec}" if self.spec else ""
        return f"{{{self.name}{conversion}{spec}}}"

    @functools.cached_property
    def segments(self) -> tuple[Segment, ...] | None:
        """The state path of a ``{state.…}`` field (None for a bare name), parsed once per template."""
        return _state_segments(self.name)

    @functools.cached_property
    def verbatim(self) -> bool:
        """No conversion and no spec: a string value is the text itself (``format(s, "") == s``)."""
        return self.conversion is None and not self.spec


_Chunk = tuple[str, _Field | None]


def missing_key_message(field: str) -> str:
    """The one wording used wherever a missing ``{state.…}`` value is reported."""
    return f"Template variable '{field}' not found, rendering as empty."


def _fail(reason: object) -> TemplateError:
    """Wrap a reason (usually Python's own message) in the standard template error."""
    return TemplateError(f"{_ERROR_PREFIX}{reason}")


# --------------------------------------------------------------------------- parsing and checks


def _parse(template: str) -> tuple[_Chunk, ...]:
    """Split with Python's own parser so escaping and brace errors match ``str.format``."""
    try:
        parsed = list(_FORMATTER.parse(template))
    except ValueError as exc:
        raise _fail(exc) from None
    return tuple(
        (literal, None if name is None else _Field(name, conversion, spec or ""))
        for literal, name, spec, conversion in parsed
    )


@functools.lru_cache(maxsize=16384)
def _checked(template: str) -> tuple[_Chunk, ...]:
    """Parse and statically validate once per distinct template; steps re-render the same text often.

    Room for the templates of a few thousand-step workflows: a cache smaller than one
    workflow's templates would miss on every step of every run.
    """
    chunks = _parse(template)
    for _, field in chunks:
        if field is not None:
            _check_field(field)
    return chunks


def _check_field(field: _Field) -> None:
    """Reject what is wrong whatever the state holds: bad specs, conversions or state paths."""
    _check_spec(field.spec)
    _check_conversion(field.conversion)
    _state_segments(field.name)


def _check_spec(spec: str) -> None:
    """Validate spec grammar; the message comes from Python so it reads like ``str.format``."""
    if _SPEC.fullmatch(spec):
        if any(int(number) > MAX_FORMAT_WIDTH for number in re.findall(r"[0-9]+", spec)):
            raise _fail(f"format spec '{spec}' asks for a width or precision over {MAX_FORMAT_WIDTH:,}")
        return
    try:
        format("", spec)
    except ValueError as exc:
        raise _fail(exc) from None
    raise _fail(f"Invalid format specifier '{spec}'")


def _check_conversion(conversion: str | None) -> None:
    """Reject anything but ``!r``, ``!s`` and ``!a``, with Python's message."""
    if conversion is None or conversion in _CONVERSIONS:
        return
    try:
        _FORMATTER.convert_field("", conversion)
    except ValueError as exc:
        raise _fail(exc) from None
    raise _fail(f"Unknown conversion specifier {conversion}")  # pragma: no cover - Python always raises


def _state_segments(name: str) -> tuple[Segment, ...] | None:
    """Path segments of a ``state.…``/``state[…]`` field, or None for any other field."""
    if name.startswith(_STATE_DOT):
        rest = name[len(_STATE_DOT) :]
    elif name.startswith("state["):
        rest = name[len("state") :]
    else:
        return None
    try:
        return parse_path(rest)
    except ValueError as exc:
        raise _fail(f"field {{{name}}} is not a valid state path ({exc})") from None


def check_template(template: str) -> None:
    """Raise :class:`TemplateError` for mistakes that need no state, so loaders can fail early."""
    _checked(template)


def template_fields(template: str) -> list[str]:
    """Field names in order of first use, so callers can tell which state a template reads."""
    names: dict[str, None] = {}
    for _, field in _parse(template):
        if field is not None and field.name:
            names.setdefault(field.name)
    return list(names)


# --------------------------------------------------------------------------- rendering


def render(template: str, state: Mapping[str, Any], *, on_missing: MissingHook | None = None) -> str:
    """Fill ``template`` from ``state``; absent values blank out or stay verbatim instead of raising.

    ``on_missing`` receives each absent ``{state.…}`` field; without it a warning is logged.
    """
    parts: list[str] = []
    length = 0
    for literal, field in _checked(template):
        parts.append(literal)
        if field is not None:
            parts.append(_render_field(field, state, on_missing))
        length += len(literal) + (len(parts[-1]) if field is not None else 0)
        if length > MAX_RENDERED_CHARS:
            raise _fail(f"the rendered text would be longer than {MAX_RENDERED_CHARS:,} characters")
    return "".join(parts)


def _render_field(field: _Field, state: Mapping[str, Any], on_missing: MissingHook | None) -> str:
    """Render one field: state paths blank out when absent, other names stay as written."""
    segments = field.segments
    if segments is None:
        value = _lookup_bare(field.name, state)
        return field.as_written() if value is MISSING else _format(value, field)
    value = get_path(state, segments)
    if value is MISSING:
        _report_missing(field.name, on_missing)
        return ""
    if type(value) is str and field.verbatim:  # the usual field: a string as it is, no walk, no format()
        if len(value) + 2 > MAX_RENDERED_CHARS:  # the bound text_length_at_most gives a string
            raise _too_long(field)
        return value
    return _format(value, field)


def _lookup_bare(name: str, state: Mapping[str, Any]) -> Any:
    """Look up a field without ``state.``; positional and unparsable names are never state keys."""
    head = re.split(r"[.\[]", name, maxsplit=1)[0]
    if not head or head.isdecimal():
        return MISSING
    try:
        segments = parse_path(name)
    except ValueError:
        return MISSING
    return get_path(state, segments)


def _too_long(field: _Field) -> TemplateError:
    return _fail(f"the value of {{{field.name}}} would be longer than {MAX_RENDERED_CHARS:,} characters as text")


def _format(value: Any, field: _Field) -> str:
    """Apply conversion then spec; a spec that does not suit the value is the author's error."""
    if text_length_at_most(value, MAX_RENDERED_CHARS) > MAX_RENDERED_CHARS:
        raise _too_long(field)
    try:
        return format(_FORMATTER.convert_field(value, field.conversion), field.spec)
    except (TypeError, ValueError) as exc:
        raise _fail(exc) from None


def _report_missing(name: str, on_missing: MissingHook | None) -> None:
    """Tell the caller, or the log, that a state value was absent; a typo should not pass silently."""
    if on_missing is not None:
        on_missing(name)
    else:
        _LOG.warning("%s", missing_key_message(name))


# --------------------------------------------------------------------------- tool_args


def has_placeholder(text: str) -> bool:
    """Whether a tool argument string is meant as a template rather than JSON, HTML or code."""
    return _PLACEHOLDER.search(text) is not None


@dataclass(frozen=True)
class _ArgContext:
    """What every level of a recursive tool_args render needs to report and render."""

    where: str
    state: Mapping[str, Any]
    on_missing: MissingHook | None

    def label(self, trail: tuple[Segment, ...]) -> str:
        """Name the argument in messages, e.g. ``tool_args 'headers.Authorization'``."""
        return f"{self.where} '{format_path(trail)}'" if trail else self.where


def render_args(
    value: Any,
    state: Mapping[str, Any],
    *,
    on_missing: MissingHook | None = None,
    where: str = "tool_args",
) -> Any:
    """Render tool arguments (or subworkflow inputs) at any depth.

    The result shares no containers with ``value`` or ``state``, so a tool that
    mutates its arguments cannot reach back into the run state. ``where`` names
    the field in error messages.
    """
    return _render_arg(value, _ArgContext(where, state, on_missing), ())


def _render_arg(value: Any, ctx: _ArgContext, trail: tuple[Segment, ...]) -> Any:
    """Dispatch on the shape of one argument value."""
    if _is_literal(value):
        return copy.deepcopy(value["value"])
    if isinstance(value, Mapping):
        return {key: _render_arg(item, ctx, (*trail, _trail_key(key))) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_render_arg(item, ctx, (*trail, index)) for index, item in enumerate(value)]
    if isinstance(value, str):
        return _render_arg_text(value, ctx, trail)
    return value


def _is_literal(value: Any) -> bool:
    """``{value: ..., template: false}`` and nothing else marks a value to send as written."""
    return (
        isinstance(value, Mapping)
        and len(value) == 2
        and "value" in value
        and value.get("template", True) is False
    )


def _trail_key(key: Any) -> Segment:
    """Keep message paths printable even for non-string mapping keys."""
    return key if isinstance(key, str | int) else str(key)


def _render_arg_text(text: str, ctx: _ArgContext, trail: tuple[Segment, ...]) -> Any:
    """A ``state.`` string is the value itself; other strings render only if they hold a placeholder."""
    if text.startswith(_STATE_DOT):
        return copy.deepcopy(_whole_value(text, ctx, trail))
    if not has_placeholder(text):
        return text
    try:
        return render(text, ctx.state, on_missing=ctx.on_missing)
    except TemplateError as exc:
        raise TemplateError(f"{exc} (in {ctx.label(trail)})") from exc


def _whole_value(text: str, ctx: _ArgContext, trail: tuple[Segment, ...]) -> Any:
    """Resolve ``state.<path>``; an absent key fails the step for good, since retrying cannot add it."""
    key = text[len(_STATE_DOT) :]
    try:
        value = get_path(ctx.state, parse_path(key))
    except ValueError as exc:
        message = f"{ctx.label(trail)}: '{text}' is not a valid state path ({exc})"
        raise StepError(message, code="missing_state_key", retryable=False) from None
    if value is MISSING:
        message = f"{ctx.label(trail)}: state key '{key}' does not exist"
        raise StepError(message, code="missing_state_key", retryable=False)
    return value
