"""Transition conditions written by intervention authors: allow-listed at load, evaluated safely."""

import ast
import difflib
import operator
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from simpleeval import EvalWithCompoundTypes, InvalidExpression

ALIASES = {"true": True, "false": False, "none": None}
MAX_NODES = 200

_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn)
_SYMBOLS = {
    ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
    ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
    ast.MatMult: "@", ast.Is: "is", ast.IsNot: "is not", ast.UAdd: "unary +", ast.Invert: "~",
}  # fmt: skip
_REJECTED = {
    ast.Call: "calls", ast.Lambda: "lambdas", ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions", ast.DictComp: "comprehensions",
    ast.GeneratorExp: "comprehensions", ast.JoinedStr: "f-strings",
    ast.Starred: "starred expressions", ast.NamedExpr: "assignments (:=)",
    ast.IfExp: "'x if y else z' expressions (use and/or)", ast.Dict: "dictionaries",
    ast.Set: "sets",
}  # fmt: skip


class ConditionError(ValueError):
    """A condition an author wrote that cannot be used, with the column it went wrong at."""

    def __init__(self, message: str, column: int | None = None, line: int = 1, hint: str = ""):
        where = "" if column is None else f" at column {column}"
        where += f" of line {line}" if column is not None and line > 1 else ""
        super().__init__(message + where + hint)
        self.column = column
        self.line = line


@dataclass(frozen=True)
class Evaluation:
    """The outcome of one condition check: False with a reason when data was missing or odd."""

    value: bool
    error: str | None = None


@dataclass(frozen=True)
class Condition:
    """A checked condition; evaluate it against a JSON-like context many times."""

    source: str
    _expression: ast.expr = field(repr=False, compare=False)
    _names: frozenset[str] = field(repr=False, compare=False)

    @property
    def tree(self) -> ast.expr:
        """The checked expression (true/false/none already constants), for the type checker."""
        return self._expression

    def names(self) -> set[str]:
        """The dotted references used, e.g. {'judgements.engaged.response', 'step.turns'}."""
        return set(self._names)

    def check(self, context: Mapping[str, object]) -> Evaluation:
        """Evaluate; anything that goes wrong (a missing key, a type mismatch, an index past
        the end) gives False with an explanation, never an exception."""
        try:
            return Evaluation(bool(self.value(context)))
        except ConditionError as exc:
            return Evaluation(False, str(exc))

    def value(self, context: Mapping[str, object]) -> object:
        """The expression's value (a `set:` value); ConditionError if it cannot be computed."""
        try:
            return _DataEval(context).eval(self.source, self._expression)
        except (InvalidExpression, TypeError, ArithmeticError, LookupError, ValueError) as exc:
            raise ConditionError(str(exc)) from None
        except RecursionError:
            raise ConditionError("the expression is nested too deeply") from None

    def evaluate(self, context: Mapping[str, object]) -> bool:
        """Evaluate to a plain bool, False whenever check() would report an error."""
        return self.check(context).value


def compile_condition(
    source: str, known_roots: Collection[str], max_length: int = 500, max_nodes: int = MAX_NODES
) -> Condition:
    """Parse and allow-list a condition, raising ConditionError with an author-friendly message."""
    text = source.strip()
    if not text:
        raise ConditionError("the condition is empty")
    if len(text) > max_length:
        raise ConditionError(
            f"the condition is too long ({len(text)} characters, max {max_length})"
        )
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError) as exc:
        reason = getattr(exc, "msg", None) or str(exc)
        offset = getattr(exc, "offset", None)
        column = offset if offset and offset > 0 else None
        line = getattr(exc, "lineno", None) or 1
        hint = " (wrap a condition that spans lines in parentheses)" if "\n" in text else ""
        raise ConditionError(f"not a valid condition ({reason})", column, line, hint) from None
    except (RecursionError, MemoryError):
        raise ConditionError("the condition is nested too deeply") from None
    size = sum(isinstance(node, ast.expr) for node in ast.walk(tree))
    if size > max_nodes:
        raise ConditionError(f"the condition is too complex ({size} parts, max {max_nodes})")
    checker = _Checker(text, set(known_roots))
    expression = checker.check(tree.body)
    return Condition(text, expression, frozenset(checker.names))


class _Checker:
    """Walks a parsed condition, rejecting anything not on the allow-list and noting references."""

    def __init__(self, source: str, roots: set[str]) -> None:
        self.source, self.roots, self.names = source, roots, set[str]()

    def fail(self, message: str, node: ast.expr, part: str = "", hint: str = "") -> ConditionError:
        """Name the offending part and its 1-based character column (ast counts UTF-8 bytes)."""
        part = part or ast.get_source_segment(self.source, node) or ""
        if isinstance(node, ast.Call):
            part = (ast.get_source_segment(self.source, node.func) or "") + "(...)"
        part = part if len(part) <= 40 else part[:37] + "..."
        line_text = re.split(r"\r\n|\r|\n", self.source)[node.lineno - 1]
        column = len(line_text.encode()[: node.col_offset].decode(errors="replace")) + 1
        return ConditionError(f"{message}: '{part}'", column, node.lineno, hint)

    def check(self, node: ast.expr) -> ast.expr:
        """Return the node to evaluate (aliases become constants) or raise ConditionError."""
        match node:
            case ast.Name(id=name) if name in ALIASES and name not in self.roots:
                return ast.copy_location(ast.Constant(ALIASES[name]), node)
            case ast.BoolOp(values=values):
                node.values = [self.check(value) for value in values]
            case ast.UnaryOp(op=ast.Not() | ast.USub()):
                node.operand = self.check(node.operand)
            case ast.Compare(ops=ops, comparators=comparators):
                for op in ops:
                    if type(op) not in _COMPARISONS:
                        hint = ", use == or != instead" if type(op) in (ast.Is, ast.IsNot) else ""
                        raise self.fail(f"'{_SYMBOLS[type(op)]}' is not allowed{hint}", node)
                node.left = self.check(node.left)
                node.comparators = [self.check(each) for each in comparators]
            case ast.BinOp(op=ast.Add() | ast.Sub(), left=left, right=right):
                for side in (left, right):
                    if isinstance(side, ast.Constant | ast.List | ast.Tuple) and not _is_number(
                        getattr(side, "value", None)
                    ):
                        raise self.fail("+ and - work on numbers only", side)
                node.left, node.right = self.check(left), self.check(right)
            case ast.BinOp(op=op) | ast.UnaryOp(op=op):
                raise self.fail(
                    f"the '{_SYMBOLS.get(type(op), '?')}' operator is not allowed", node
                )
            case ast.Constant(value=value):
                if not isinstance(value, str | int | float | type(None)):
                    raise self.fail("only text, numbers, true/false and none can be values", node)
            case ast.List(elts=items) | ast.Tuple(elts=items):
                node.elts = [self.check(item) for item in items]
                if not all(isinstance(item, ast.Constant) or _is_negative(item) for item in items):
                    raise self.fail("lists may only hold fixed values like [1, 2] or ['a']", node)
            case ast.Name() | ast.Attribute() | ast.Subscript():
                self.names.add(_dotted(self.reference(node)))
            case _:
                what = _REJECTED.get(type(node), f"{type(node).__name__} expressions")
                raise self.fail(f"{what} are not allowed", node)
        return node

    def reference(self, node: ast.Name | ast.Attribute | ast.Subscript) -> list[str | int]:
        """Check a chain like judgements.engaged['response'] and return its keys."""
        match node:
            case ast.Name(id=name) if name in self.roots:
                return [name]
            case ast.Name(id=name):
                close = difflib.get_close_matches(name, sorted(self.roots), n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                hint = hint or f"; known names: {', '.join(sorted(self.roots)) or 'none'}"
                raise self.fail("unknown name", node, hint=hint)
            case ast.Attribute(attr=attr) | ast.Subscript(slice=ast.Constant(value=str(attr))):
                if attr.startswith("_"):
                    raise self.fail("names starting with '_' are not allowed", node, part=attr)
                key: str | int = attr
            case ast.Subscript(slice=index) if _is_integer(index) or _is_negative(index):
                key = ast.literal_eval(index)
            case ast.Subscript():
                raise self.fail("[...] needs a fixed text key or whole number", node)
        if not isinstance(node.value, ast.Name | ast.Attribute | ast.Subscript):
            raise self.fail("'.' and [...] can only follow a name such as 'profile'", node)
        return [*self.reference(node.value), key]


def _dotted(path: list[str | int]) -> str:
    """Render keys up to the first list index: ['notes', 'TOPICS', 0] -> 'notes.TOPICS'."""
    keys = path[: next((i for i, key in enumerate(path) if isinstance(key, int)), len(path))]
    return ".".join(str(key) for key in keys)


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_integer(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _is_negative(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and (isinstance(node.operand, ast.Constant) and _is_number(node.operand.value))
    )


def _arithmetic(
    symbol: str, apply: Callable[[Any, Any], object]
) -> Callable[[object, object], object]:
    def numbers_only(left: object, right: object) -> object:
        if not (_is_number(left) and _is_number(right)):
            raise TypeError(f"'{symbol}' works on numbers only, not {left!r} and {right!r}")
        return apply(left, right)

    return numbers_only


def _negate(value: object) -> object:
    if not _is_number(value):
        raise TypeError(f"'-' works on numbers only, not {value!r}")
    return -value


_OPERATORS = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Not: operator.not_, ast.USub: _negate,
    ast.In: lambda item, box: item in box, ast.NotIn: lambda item, box: item not in box,
    ast.Add: _arithmetic("+", operator.add), ast.Sub: _arithmetic("-", operator.sub),
}  # fmt: skip
_EVALUATED = (ast.BoolOp, ast.UnaryOp, ast.Compare, ast.BinOp, ast.Constant, ast.List, ast.Tuple)


class _MissingValue(InvalidExpression):
    """A reference that names data the context does not (yet) hold."""


class _DataEval(EvalWithCompoundTypes):
    """simpleeval limited to allowed nodes, where '.' and [...] only read keys of plain data."""

    # simpleeval's own attribute lookup tries getattr() first, so `profile.items` would yield the
    # dict method rather than the author's data; reading keys ourselves keeps '.' data-only.
    def __init__(self, context: Mapping[str, object]) -> None:
        super().__init__(operators=_OPERATORS, functions={}, names=context)
        self.functions.clear()
        self.nodes: dict[type[ast.AST], Callable[[Any], object]]
        self.nodes = {kind: run for kind, run in self.nodes.items() if kind in _EVALUATED}
        self.nodes |= {ast.Name: self._read, ast.Attribute: self._read, ast.Subscript: self._read}

    def _read(self, node: ast.Name | ast.Attribute | ast.Subscript) -> object:
        if isinstance(node, ast.Name):
            container, key = self.names, node.id
        else:
            container = self._eval(node.value)
            key = node.attr if isinstance(node, ast.Attribute) else ast.literal_eval(node.slice)
        if isinstance(container, Mapping) and isinstance(key, str) and key in container:
            return container[key]
        if isinstance(container, list | tuple) and isinstance(key, int):
            if -len(container) <= key < len(container):
                return container[key]
        if isinstance(container, Mapping | list | tuple):
            raise _MissingValue(f"'{ast.unparse(node)}' is not set")
        assert not isinstance(node, ast.Name)  # a Name always reads from the context mapping
        parent = ast.unparse(node.value)
        raise _MissingValue(f"'{ast.unparse(node)}' is not set: '{parent}' is {container!r}")


def is_expression(value: Any) -> TypeGuard[str]:
    """Whether a `set:` value is an expression: text, unless it is one bare word such as
    `plan` (never a name: names have a dot), which is stored as that word."""
    if not isinstance(value, str):
        return False
    word = value.strip()
    return not (word.isidentifier() and word not in ALIASES)
