"""Safe expressions for ``router`` conditions, evaluated without ``eval``.

A router step chooses its next step with conditions such as
``steps.classify.output == 'bug'``. Workflow files are data that may come
from anywhere, so the text is never handed to ``eval``/``exec``. Instead it is
parsed with :func:`ast.parse`, checked once against an allowlist when the
workflow is loaded (:func:`compile_expression`), and evaluated later by
walking the tree (:meth:`Expression.evaluate`).

What an expression may contain:

* literals (str, int, float, bool, None) and list/tuple/set/dict displays;
* names: ``state`` is the whole state mapping, any other bare name ``x`` reads
  the top-level state key ``x``;
* ``a.b`` and ``a[k]`` -- both are *only* container lookups (dict key or
  list/tuple/str index), never Python attribute access, so ``a.b`` on an
  object cannot reach its internals. Names starting with ``_`` are ordinary
  keys (the engine stores ``_approval``); dunder names are refused;
* comparisons (chained too), ``and``/``or``/``not`` with Python's
  short-circuit semantics, unary ``-``/``+``, ``+ - * / // %``, and
  ``a if c else b``;
* calls of a small set of string methods (``x.lower()``) and of the builtins
  ``len str int float bool abs min max``, positional arguments only.

Missing data is not an error. A router must keep working when a step has not
written a key yet, so a missing key, an index out of range, or a lookup
through something that is not a container evaluates to ``None``; a string
method called on ``None`` also gives ``None``. Hence
``state.missing.lower() == 'x'`` is simply ``False``.

Genuine mistakes still fail loudly at run time with :class:`EvaluationError`:
comparing incompatible values (``None < 1``), a string method called on a
number, dividing by zero, ``len(None)``, ``%`` used to format a string, or
``+``/``*``, ``str()`` or ``.replace()`` building a string or list longer
than 100,000 items (so ``'x' * 1000000000``, ``str([[1]*100000]*100000)`` and
``('a'*100000).replace('a', 'a'*100000)`` cannot exhaust memory), and
:class:`~pytest_agentloom.errors.ExpressionBudgetError` when the work would pass the operation budget
of :mod:`.budget` (``[[0]*99999]*99999 == [[0]*99999]*99999`` compares 10**10 items), so no condition
runs for long whatever it compares. Anything outside the allowlist
(lambda, comprehensions, f-strings, ``**``, bitwise operators, other calls,
dunder names, ...) is refused at load time with :class:`ExpressionSyntaxError`.
"""

from __future__ import annotations

import ast
import operator
import re
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ...errors import EvaluationError, ExpressionSyntaxError, UsageError
from .budget import OPERATION_BUDGET, SCALARS, TEXT_UNIT, Budget
from .sizes import text_length_at_most

__all__ = [
    "ALLOWED_BUILTINS",
    "ALLOWED_METHODS",
    "EvaluationError",
    "Expression",
    "ExpressionSyntaxError",
    "compile_expression",
]

_METHODS = (
    "lower", "upper", "strip", "lstrip", "rstrip", "startswith", "endswith", "casefold",
    "title", "capitalize", "replace", "split", "count", "find", "isdigit", "isalpha", "isnumeric",
)  # fmt: skip
ALLOWED_METHODS: frozenset[str] = frozenset(_METHODS)
"""String methods an expression may call; none of them can reach outside the string."""

_BUILTINS: dict[str, Callable[..., Any]] = {
    "len": len,
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "abs": abs,
    "min": min,
    "max": max,
}
ALLOWED_BUILTINS: frozenset[str] = frozenset(_BUILTINS)
"""Builtin functions an expression may call by bare name."""

_CONSTANT_TIME = frozenset({"len", "bool", "abs"})
"""Builtins whose cost does not grow with a container argument (the rest are charged its size)."""

_MAX_DEPTH = 100
"""Deepest syntax tree accepted; keeps the recursive evaluator far from Python's recursion limit."""

_MAX_SEQUENCE = 100_000
"""Longest string/list that ``*`` or ``+`` may build, so ``'x' * 10**9``-style bombs fail fast."""

_SNIPPET_WIDTH = 40


# --------------------------------------------------------------------------- operators

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda item, container: item in container,
    ast.NotIn: lambda item, container: item not in container,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}

_MEMBERSHIP: frozenset[type[ast.cmpop]] = frozenset({ast.In, ast.NotIn})
_IDENTITY: frozenset[type[ast.cmpop]] = frozenset({ast.Is, ast.IsNot})
_EQUALITY: frozenset[type[ast.cmpop]] = frozenset({ast.Eq, ast.NotEq})

_ARITHMETIC: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}

_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.Not: operator.not_,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}

_BITWISE_SYMBOLS: dict[type[ast.AST], str] = {
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.MatMult: "@",
    ast.Invert: "~",
}

_LITERAL_TYPES = (str, int, float, bool, type(None))
_SEQUENCES = (str, list, tuple)


# --------------------------------------------------------------------------- validation

_REFUSED: dict[type[ast.AST], str] = {
    ast.Lambda: "lambda expressions are not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "generator expressions are not allowed",
    ast.NamedExpr: "assignment expressions (:=) are not allowed",
    ast.JoinedStr: "f-strings are not allowed",
    ast.FormattedValue: "f-strings are not allowed",
    ast.Starred: "starred expressions (*x) are not allowed",
    ast.Slice: "slices are not allowed (use a single index such as a[0] or a[-1])",
    ast.Await: "await is not allowed",
}

_SIMPLE_NODES: tuple[type[ast.AST], ...] = (
    ast.Expression, ast.Subscript, ast.List, ast.Tuple, ast.Set, ast.Compare, ast.BoolOp, ast.IfExp,
    ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop,
)  # fmt: skip
"""Nodes that need no check of their own (operators are checked on their parent node)."""


def _allowed_calls_text() -> str:
    """List what may be called, so a refused call tells the author what would work."""
    methods = ", ".join(_METHODS)
    builtins = ", ".join(_BUILTINS)
    return f"only string methods {methods} and builtins {builtins}"


def _is_dunder(name: str) -> bool:
    """Dunder names are the doorway to Python internals, so they are refused outright."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _column(text: str, node: ast.AST) -> int:
    """1-based character column of ``node`` (ast offsets count UTF-8 bytes, authors count characters)."""
    lineno: int = getattr(node, "lineno", 1)
    offset: int = getattr(node, "col_offset", 0)
    lines = re.split(r"\r\n|\r|\n", text)
    line = lines[lineno - 1] if 0 < lineno <= len(lines) else ""
    return len(line.encode()[:offset].decode(errors="ignore")) + 1


def _snippet(text: str, node: ast.AST) -> str:
    """Short quoted source of the offending node; calls are shown as ``name(...)``."""
    shown_node = node.func if isinstance(node, ast.Call) else node
    segment = ast.get_source_segment(text, shown_node) or type(node).__name__
    if isinstance(node, ast.Call):
        segment += "(...)"
    segment = " ".join(segment.split())
    if len(segment) > _SNIPPET_WIDTH:
        segment = segment[: _SNIPPET_WIDTH - 3] + "..."
    return repr(segment)


def _refuse(text: str, node: ast.AST, reason: str) -> ExpressionSyntaxError:
    """Build the load-time error in one shape: reason, offending source, column."""
    column = _column(text, node)
    return ExpressionSyntaxError(
        f"{reason}: {_snippet(text, node)} at column {column}", expression=text, column=column
    )


def _constant_problem(node: ast.Constant) -> str | None:
    """Only plain scalar literals; bytes, complex numbers and ``...`` have no use in routing."""
    value = node.value
    if isinstance(value, _LITERAL_TYPES):
        return None
    if value is Ellipsis:
        return "'...' is not allowed"
    return f"{type(value).__name__} literals are not allowed"


def _name_problem(node: ast.Name) -> str | None:
    """Bare names are state keys; dunders are refused even though lookups could not misuse them."""
    return "dunder names are not allowed" if _is_dunder(node.id) else None


def _attribute_problem(node: ast.Attribute) -> str | None:
    """``a.b`` is a key lookup; dunder keys are refused so nobody mistakes it for getattr."""
    return "dunder attributes are not allowed" if _is_dunder(node.attr) else None


def _call_problem(node: ast.Call) -> str | None:
    """Only allowlisted string methods and builtins, with positional arguments."""
    if node.keywords:
        return "keyword arguments are not allowed in calls"
    func = node.func
    if isinstance(func, ast.Name) and func.id in ALLOWED_BUILTINS:
        return None
    if isinstance(func, ast.Attribute) and func.attr in ALLOWED_METHODS:
        return None
    if isinstance(func, ast.Attribute):
        return f"method .{func.attr}() is not allowed ({_allowed_calls_text()})"
    return f"function calls are not allowed ({_allowed_calls_text()})"


def _binop_problem(node: ast.BinOp) -> str | None:
    """``**`` can build numbers big enough to hang the run; bitwise operators have no routing use."""
    if isinstance(node.op, ast.Pow):
        return "the ** operator is not allowed (it can build enormous numbers)"
    if type(node.op) in _ARITHMETIC:
        return None
    return f"operator {_BITWISE_SYMBOLS.get(type(node.op), type(node.op).__name__)!r} is not allowed"


def _unary_problem(node: ast.UnaryOp) -> str | None:
    """Only ``not``, ``-`` and ``+``."""
    if type(node.op) in _UNARY:
        return None
    return f"operator {_BITWISE_SYMBOLS.get(type(node.op), type(node.op).__name__)!r} is not allowed"


def _dict_problem(node: ast.Dict) -> str | None:
    """``{**a}`` unpacking is refused along with every other starred form."""
    return "dict unpacking (**) is not allowed" if None in node.keys else None


_CHECKS: dict[type[ast.AST], Callable[[Any], str | None]] = {
    ast.Constant: _constant_problem,
    ast.Name: _name_problem,
    ast.Attribute: _attribute_problem,
    ast.Call: _call_problem,
    ast.BinOp: _binop_problem,
    ast.UnaryOp: _unary_problem,
    ast.Dict: _dict_problem,
}


def _problem(node: ast.AST) -> str | None:
    """Why ``node`` is refused, or ``None`` when it is allowed."""
    check = _CHECKS.get(type(node))
    if check is not None:
        return check(node)
    if isinstance(node, _SIMPLE_NODES):
        return None
    return _REFUSED.get(type(node), f"{type(node).__name__} expressions are not allowed")


def _depth(tree: ast.AST) -> int:
    """Depth of the tree, measured iteratively so a huge expression cannot crash the check itself."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _validate(text: str, tree: ast.Expression) -> None:
    """Reject the first refused construct; ``ast.walk`` is breadth-first, so the outermost one wins."""
    for node in ast.walk(tree):
        reason = _problem(node)
        if reason is not None:
            raise _refuse(text, node, reason)
    if _depth(tree) > _MAX_DEPTH:
        raise ExpressionSyntaxError(
            f"expression is nested too deeply (more than {_MAX_DEPTH} levels)", expression=text
        )


def _parse(text: str) -> ast.Expression:
    """Parse with Python's own grammar, turning its errors into ours with Python's message."""
    try:
        with warnings.catch_warnings():  # "1and x" warns (invalid decimal literal): the text is data, not our code
            warnings.simplefilter("ignore", SyntaxWarning)
            return ast.parse(text, mode="eval")
    except SyntaxError as exc:
        where = f" at column {exc.offset}" if exc.offset else ""
        raise ExpressionSyntaxError(
            f"invalid expression syntax: {exc.msg}{where}", expression=text, column=exc.offset or None
        ) from None
    except (RecursionError, MemoryError):
        raise ExpressionSyntaxError("expression is nested too deeply", expression=text) from None


def compile_expression(text: str) -> Expression:
    """Parse and validate ``text`` once, at load time, so bad routers fail before anything runs.

    Surrounding whitespace (common in YAML block scalars) is ignored.
    """
    if not isinstance(text, str):
        raise UsageError(f"compile_expression() needs a str, got {type(text).__name__}")
    source = text.strip()
    if not source:
        raise ExpressionSyntaxError("expression is empty", expression=text)
    tree = _parse(source)
    _validate(source, tree)
    _mark_settled_comparisons(tree)
    return Expression(source=source, tree=tree)


class _SettledCompare(ast.Compare):
    """A comparison whose every link is settled at once, whatever the state holds: nothing to charge.

    ``score >= 50``, ``label == 'bug'``, ``label in ['bug', 'crash']``: a number or a short text written
    in the expression compares with anything without visiting its items, and so does looking anything up
    in a short list of them. Marked once when the expression compiles, so evaluating the usual router
    condition costs what it did before the budget (see :mod:`.budget`).
    """


def _mark_settled_comparisons(tree: ast.Expression) -> None:
    for node in ast.walk(tree):
        if type(node) is ast.Compare and all(
                _settled_link(op, left, right)
                for op, left, right in zip(node.ops, [node.left, *node.comparators], node.comparators, strict=False)):
            node.__class__ = _SettledCompare


def _settled_link(op: ast.cmpop, left: ast.expr, right: ast.expr) -> bool:
    if type(op) in _MEMBERSHIP:
        return isinstance(right, ast.List | ast.Tuple) and len(right.elts) < TEXT_UNIT and all(map(_short_constant,
                                                                                                  right.elts))
    return _short_constant(left) or _short_constant(right)


def _short_constant(node: ast.expr) -> bool:
    """A number, ``None``, a boolean or a text shorter than :data:`~.budget.TEXT_UNIT` written in the expression."""
    if not isinstance(node, ast.Constant):
        return False
    return type(node.value) in SCALARS or (type(node.value) is str and len(node.value) < TEXT_UNIT)


# --------------------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class Expression:
    """A validated router expression. Build it with :func:`compile_expression`."""

    source: str
    tree: ast.Expression = field(repr=False, compare=False)

    def evaluate(self, state: Mapping[str, Any]) -> Any:
        """Evaluate against ``state``; lookups of absent keys give ``None`` instead of failing."""
        if not isinstance(state, Mapping):
            raise UsageError(f"Expression.evaluate() needs a mapping, got {type(state).__name__}")
        try:
            return _Evaluator(state, self.source).visit(self.tree.body)
        except EvaluationError:
            raise
        except (TypeError, ValueError, ArithmeticError) as exc:
            raise EvaluationError(self.source, str(exc) or type(exc).__name__) from exc
        except RecursionError:  # Python compared a value nested too deeply for its own recursion limit
            raise EvaluationError(self.source, "a value is nested too deeply to compare") from None

    def names(self) -> set[str]:
        """Top-level state keys the expression reads, so the loader can warn about unknown ones."""
        return set(_state_keys(self.tree))


def _state_keys(tree: ast.Expression) -> Iterator[str]:
    """Yield the state keys read through bare names, ``state.key`` and ``state['key']``."""
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}  # ``tree`` holds the nodes
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id != "state" and id(node) not in called:
            yield node.id
        elif isinstance(node, ast.Attribute) and _is_state(node.value):
            yield node.attr
        elif isinstance(node, ast.Subscript) and _is_state(node.value):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                yield key.value


def _is_state(node: ast.AST) -> bool:
    """True for the bare name ``state``, which stands for the whole mapping."""
    return isinstance(node, ast.Name) and node.id == "state"


def _lookup(container: Any, key: Any) -> Any:
    """Container lookup that turns every kind of absence into ``None``."""
    if isinstance(container, Mapping):
        return container.get(key)
    if isinstance(container, Sequence) and isinstance(key, int):
        try:
            return container[key]
        except IndexError:
            return None
    return None


def _check_size(op: ast.operator, left: Any, right: Any) -> None:
    """Refuse ``%`` formatting and sequence arithmetic that would build something enormous."""
    if isinstance(op, ast.Mod) and isinstance(left, str | bytes):
        raise TypeError("string formatting with % is not supported")
    if _result_length(op, left, right) > _MAX_SEQUENCE:
        raise ValueError(f"result would be longer than {_MAX_SEQUENCE} items")


def _result_length(op: ast.operator, left: Any, right: Any) -> int:
    """Length of the string/list ``left op right`` would build (0 when it builds none)."""
    if isinstance(op, ast.Add) and isinstance(left, _SEQUENCES) and isinstance(right, _SEQUENCES):
        return len(left) + len(right)
    if isinstance(op, ast.Mult) and isinstance(left, _SEQUENCES) and isinstance(right, int):
        return len(left) * right
    if isinstance(op, ast.Mult) and isinstance(right, _SEQUENCES) and isinstance(left, int):
        return len(right) * left
    return 0


def _arithmetic_cost(left: Any, right: Any, length: int) -> int:
    """Operations ``left op right`` costs: the items of a sequence it builds, or the digits of big integers."""
    if length:
        return length // TEXT_UNIT + 1 if isinstance(left, str) or isinstance(right, str) else length
    if type(left) is int and type(right) is int:
        return (left.bit_length() // 640) * (right.bit_length() // 640)  # schoolbook bound; 0 below 200 digits
    return 0


def _method_cost(name: str, text: str, args: list[Any]) -> int:
    """Operations a string method costs: a scan of the text, and one per part ``split`` builds."""
    scanned = len(text) + sum(len(arg) for arg in args if isinstance(arg, str))
    if name == "replace":
        scanned += max(_replaced_length(text, args), 0)
    cost = scanned // TEXT_UNIT + 1
    if name == "split":
        separator = args[0] if args and isinstance(args[0], str) else None
        cost += text.count(separator) + 1 if separator else len(text) // 2 + 1
    return cost


def _replaced_length(text: str, args: list[Any]) -> int:
    """Length of ``text.replace(*args)`` (0 when the arguments are not two or three strings and a count)."""
    if len(args) < 2 or not isinstance(args[0], str) or not isinstance(args[1], str):
        return 0
    old, new = args[0], args[1]
    count = text.count(old) if old else len(text) + 1
    if len(args) > 2 and isinstance(args[2], int) and args[2] >= 0:
        count = min(count, args[2])
    return len(text) + count * (len(new) - len(old))


class _Evaluator(Budget):
    """Walks a validated tree. Every node type the validator allows has a method here.

    It is its own :class:`~.budget.Budget` (one object per evaluation, not two): each operation that walks its
    operands is charged before it is done.
    """

    __slots__ = ("_state",)

    def __init__(self, state: Mapping[str, Any], source: str) -> None:  # Budget's fields, set here: one call less
        self.expression = source
        self.left = OPERATION_BUDGET
        self._state = state

    def visit(self, node: ast.expr) -> Any:
        """Dispatch on node type; the validator guarantees a handler exists."""
        return _HANDLERS[type(node)](self, node)

    def constant(self, node: ast.Constant) -> Any:
        return node.value

    def name(self, node: ast.Name) -> Any:
        if node.id == "state":
            return self._state
        return self._state.get(node.id)

    def attribute(self, node: ast.Attribute) -> Any:
        return _lookup(self.visit(node.value), node.attr)

    def subscript(self, node: ast.Subscript) -> Any:
        container = self.visit(node.value)
        key = self.visit(node.slice)
        if isinstance(container, Mapping):
            self.spend(self.size(key))  # hashing a tuple visits its items
            hash(key)  # an unhashable key is a mistake in the expression, not missing data
        return _lookup(container, key)

    def list_(self, node: ast.List) -> list[Any]:
        return [self.visit(item) for item in node.elts]

    def tuple_(self, node: ast.Tuple) -> tuple[Any, ...]:
        return tuple(self.visit(item) for item in node.elts)

    def set_(self, node: ast.Set) -> set[Any]:
        return {self._hashed(self.visit(item)) for item in node.elts}

    def dict_(self, node: ast.Dict) -> dict[Any, Any]:
        pairs = zip(node.keys, node.values, strict=True)
        return {self._hashed(self.visit(key)): self.visit(value) for key, value in pairs if key is not None}

    def _hashed(self, value: Any) -> Any:
        """Charge the hash a set or dict display takes of ``value`` (a tuple's walks its items)."""
        self.spend(self.size(value))
        return value

    def compare(self, node: ast.Compare) -> bool:
        """Chained comparisons stop at the first false link, exactly like Python."""
        left = self.visit(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.visit(right_node)
            kind = type(op)
            if kind in _MEMBERSHIP or type(left) not in SCALARS:  # a number compared with anything: nothing to count
                self._charge_comparison(kind, left, right)
            if not _COMPARE[kind](left, right):
                return False
            left = right
        return True

    def _charge_comparison(self, kind: type[ast.cmpop], left: Any, right: Any) -> None:
        """Charge, before Python compares, the items ``left <kind> right`` may visit.

        A short list of plain values, a short text, a number: nothing worth counting, found without a call.
        """
        right_kind = type(right)
        if kind in _MEMBERSHIP:
            if not ((right_kind is list and len(right) < TEXT_UNIT and (type(left) in SCALARS or type(left) is str))
                    or (right_kind is str and len(right) < TEXT_UNIT)):
                self.charge_contains(left, right)
        elif kind not in _IDENTITY and right_kind not in SCALARS and not (
                (type(left) is str and len(left) < TEXT_UNIT) or (right_kind is str and len(right) < TEXT_UNIT)):
            self.charge_compare(left, right, equality=kind in _EQUALITY)

    def settled_compare(self, node: ast.Compare) -> bool:
        """:meth:`compare` without the charges: every link of this one is settled at once."""
        left = self.visit(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.visit(right_node)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def bool_op(self, node: ast.BoolOp) -> Any:
        """Return the deciding operand, as Python's ``and``/``or`` do."""
        stop_when = not isinstance(node.op, ast.And)
        value: Any = None
        for operand in node.values:
            value = self.visit(operand)
            if bool(value) is stop_when:
                return value
        return value

    def unary_op(self, node: ast.UnaryOp) -> Any:
        return _UNARY[type(node.op)](self.visit(node.operand))

    def bin_op(self, node: ast.BinOp) -> Any:
        left, right = self.visit(node.left), self.visit(node.right)
        _check_size(node.op, left, right)
        cost = _arithmetic_cost(left, right, _result_length(node.op, left, right))
        if cost:
            self.spend(cost)
        return _ARITHMETIC[type(node.op)](left, right)

    def if_exp(self, node: ast.IfExp) -> Any:
        return self.visit(node.body) if self.visit(node.test) else self.visit(node.orelse)

    def call(self, node: ast.Call) -> Any:
        """Builtins by bare name; anything else the validator let through is a string method."""
        if isinstance(node.func, ast.Name):
            args = [self.visit(arg) for arg in node.args]
            if node.func.id == "str" and args and text_length_at_most(args[0], _MAX_SEQUENCE) > _MAX_SEQUENCE:
                raise ValueError(f"str() would build a string longer than {_MAX_SEQUENCE} characters")
            if node.func.id not in _CONSTANT_TIME:  # min, max, str, int, float walk or scan their arguments
                self.spend(sum(self.size(arg) for arg in args))
            return _BUILTINS[node.func.id](*args)
        return self._method(cast(ast.Attribute, node.func), node.args)

    def _method(self, func: ast.Attribute, args: list[ast.expr]) -> Any:
        """A string method on ``None`` (an absent key) gives ``None``; on anything else it is an error."""
        receiver = self.visit(func.value)
        if receiver is None:
            return None
        if not isinstance(receiver, str):
            raise TypeError(f".{func.attr}() needs a string, got {type(receiver).__name__}")
        values = [self.visit(arg) for arg in args]
        if func.attr == "replace" and _replaced_length(receiver, values) > _MAX_SEQUENCE:
            raise ValueError(f".replace() would build a string longer than {_MAX_SEQUENCE} characters")
        if values or len(receiver) >= TEXT_UNIT:  # a short text without arguments: nothing worth counting
            self.spend(_method_cost(func.attr, receiver, values))
        return getattr(receiver, func.attr)(*values)


_HANDLERS: dict[type[ast.AST], Callable[[_Evaluator, Any], Any]] = {
    ast.Constant: _Evaluator.constant,
    ast.Name: _Evaluator.name,
    ast.Attribute: _Evaluator.attribute,
    ast.Subscript: _Evaluator.subscript,
    ast.List: _Evaluator.list_,
    ast.Tuple: _Evaluator.tuple_,
    ast.Set: _Evaluator.set_,
    ast.Dict: _Evaluator.dict_,
    ast.Compare: _Evaluator.compare,
    _SettledCompare: _Evaluator.settled_compare,
    ast.BoolOp: _Evaluator.bool_op,
    ast.UnaryOp: _Evaluator.unary_op,
    ast.BinOp: _Evaluator.bin_op,
    ast.IfExp: _Evaluator.if_exp,
    ast.Call: _Evaluator.call,
}
