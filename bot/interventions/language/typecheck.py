"""The type checker of conditions and `set:` expressions (pure): the type of every part is known
from bot.interventions.language.types, and each misuse is said with the type of each side."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping

from bot.interventions.language import ranges
from bot.interventions.language.expressions import Condition
from bot.interventions.language.ranges import UNKNOWN, Truth
from bot.interventions.language.types import ANY, YES_NO, Type

_FORMATS = {"date": re.compile(r"^\d{4}-\d{2}-\d{2}$"), "time": re.compile(r"^\d{2}:\d{2}$")}
_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def condition_type_problems(condition: Condition, types: Mapping[str, Type]) -> list[str]:
    """What is wrong with the types in a condition; a condition itself must be yes or no."""
    checker = _Types(condition.source, types)
    found = checker.infer(condition.tree)
    if not checker.problems and found.kind not in ("yes/no", "any"):
        checker.problems.append(
            f"a condition must be yes or no, but `{condition.source}` is {found}"
            " (compare it with something, e.g. `!= none`)"
        )
    # the ranges of values of the wrong type mean nothing: a type problem is said alone
    return checker.problems or checker.constant


def truthy_condition_problems(source: str, types: Mapping[str, Type]) -> list[str]:
    """What is wrong in a template's test (`{% if ... %}`, written as a condition): the same
    checks as a condition, except that any value may be tested for truth (text is true when
    it is not empty), as Jinja does."""
    checker = _Types(source, types, truthy=True)
    checker.infer(ast.parse(source, mode="eval").body)
    return checker.problems or checker.constant


def expression_type(expression: Condition, types: Mapping[str, Type]) -> tuple[Type, list[str]]:
    """The type of an expression (a `set:` value) and what is wrong in it."""
    checker = _Types(expression.source, types)
    found = checker.infer(expression.tree)
    return found, checker.problems or checker.constant


def literal_type(value: object) -> Type:
    """The type of a value written in YAML (a `set:` value that is not an expression)."""
    if value is None:
        return Type("none")
    if isinstance(value, bool):
        return Type("yes/no", literal=value)
    if isinstance(value, int):
        return Type("integer", literal=value)
    if isinstance(value, float):
        return Type("number", literal=value)
    return Type("text", literal=str(value))


def assignable(value: Type, target: Type) -> str | None:
    """Why a value of type `value` cannot be stored in a field of type `target` (None: it can)."""
    if value.kind == "any" or target.kind == "any":
        return None
    if value.kind == "none":
        return None if target.optional else f"it is {target} and cannot be none"
    if value.kind == target.kind or (value.kind == "integer" and target.kind == "number"):
        if target.kind == "choice" and not set(value.options) <= set(target.options):
            extra = ", ".join(repr(o) for o in sorted(set(value.options) - set(target.options)))
            return f"it is {target}, and the value may be {extra}"
        return None
    if target.kind == "choice" and value.kind == "text" and isinstance(value.literal, str):
        return None if value.literal in target.options else f"it is {target}"
    if target.kind == "text" and value.kind == "choice":
        return None
    if target.kind in _FORMATS and value.kind == "text" and isinstance(value.literal, str):
        return None if _FORMATS[target.kind].match(value.literal) else f"it is a {target.kind}"
    return f"it is {target}, and the value is {value}"


class _Types:
    def __init__(self, source: str, types: Mapping[str, Type], truthy: bool = False) -> None:
        self.source, self.types, self.problems = source, types, list[str]()
        self.truthy = truthy  # a template's test: any value may be tested for truth
        self.truths: dict[int, Truth] = {}  # what each yes/no part can be (bot...ranges)
        self.seen: dict[str, Type] = {}  # each name read, with its type
        self.constant: list[str] = []  # the parts that are always or never true

    def text(self, node: ast.expr) -> str:
        return ast.get_source_segment(self.source, node) or ast.unparse(node)

    def say(self, message: str) -> Type:
        self.problems.append(message)
        return ANY

    def infer(self, node: ast.expr) -> Type:
        match node:
            case ast.Constant(value=bool(value)):
                return Type("yes/no", literal=value)
            case ast.Constant(value=int(value)):
                return Type("integer", literal=value)
            case ast.Constant(value=float(value)):
                return Type("number", literal=value)
            case ast.Constant(value=str(value)):
                return Type("text", literal=value)
            case ast.Constant(value=None):
                return Type("none")
            case ast.List(elts=items) | ast.Tuple(elts=items):
                return self.listed(node, [self.infer(item) for item in items])
            case ast.UnaryOp(op=ast.Not(), operand=operand):
                found = self.yes_no("not", [operand])
                self.judge(node, ranges.negate(self.truth(operand)), [operand])
                return found
            case ast.UnaryOp(op=ast.USub(), operand=operand):
                found = self.infer(operand)
                if found.kind in ("integer", "number", "any"):
                    low, high = found.bounds
                    bounds = (_minus(high), _minus(low))
                    return Type(found.kind, literal=_negated(found.literal), bounds=bounds)
                return self.say(f"'-' works on numbers, but `{self.text(operand)}` is {found}")
            case ast.BoolOp(op=op, values=values):
                found = self.yes_no("and" if isinstance(op, ast.And) else "or", values)
                parts = [self.truth(value) for value in values]
                self.judge(node, ranges.combine(isinstance(op, ast.And), parts), values)
                return found
            case ast.BinOp(op=op, left=left, right=right):
                return self.arithmetic("+" if isinstance(op, ast.Add) else "-", left, right)
            case ast.Compare(left=left, ops=ops, comparators=comparators):
                sides = [left, *comparators]
                truths = [
                    self.compare(comparison, sides[n], sides[n + 1])
                    for n, comparison in enumerate(ops)
                ]
                self.judge(node, ranges.combine(True, truths), [])
                return YES_NO
            case ast.Name() | ast.Attribute() | ast.Subscript():
                found = self.reference(node)
                self.seen[self.text(node)] = found
                if found.kind == "yes/no":  # read as a condition: true for true only
                    self.truths[id(node)] = ranges.of_values(
                        self.text(node), frozenset((True, False)), frozenset((True,))
                    )
                return found
        return ANY  # the allow-list has refused anything else

    def listed(self, node: ast.expr, items: list[Type]) -> Type:
        kinds = {item.kind for item in items}
        if kinds <= {"integer", "number"} and len(kinds) == 2:
            kinds = {"number"}
        if len(kinds) > 1:
            shown = ", ".join(sorted(kinds))
            return self.say(f"the list `{self.text(node)}` mixes values of types {shown}")
        kind = kinds.pop() if kinds else "any"
        literals = tuple(item.literal for item in items)
        return Type("list", item=Type(kind), literal=literals)

    def yes_no(self, word: str, operands: list[ast.expr]) -> Type:
        for operand in operands:
            found = self.infer(operand)
            if found.kind not in ("yes/no", "any") and not self.truthy:
                self.say(
                    f"'{word}' works on yes/no values, but `{self.text(operand)}` is {found}"
                    " (compare it with something first)"
                )
        return YES_NO

    def arithmetic(self, symbol: str, left: ast.expr, right: ast.expr) -> Type:
        sides = self.infer(left), self.infer(right)
        if all(side.kind in ("integer", "number", "any") for side in sides):
            kind = "integer" if all(side.kind == "integer" for side in sides) else "number"
            (a, b), (c, d) = ranges.interval(sides[0]), ranges.interval(sides[1])
            if symbol == "-":
                c, d = _minus(d), _minus(c)
            low = None if a is None or c is None else a + c
            high = None if b is None or d is None else b + d
            return Type(kind, bounds=(low, high))
        return self.say(
            f"'{symbol}' works on numbers, but `{self.text(left)}` is {sides[0]}"
            f" and `{self.text(right)}` is {sides[1]}"
        )

    def compare(self, op: ast.cmpop, left: ast.expr, right: ast.expr) -> Truth:
        before = len(self.problems)
        lt, rt = self.infer(left), self.infer(right)
        if "any" in (lt.kind, rt.kind):
            return UNKNOWN
        self.kinds(op, left, lt, right, rt)
        if len(self.problems) > before:
            return UNKNOWN
        if isinstance(op, ast.In | ast.NotIn):
            return ranges.member(lt, rt, self.name_of(left), isinstance(op, ast.NotIn))
        if self.name_of(left) is None and self.name_of(right) is not None:
            flipped = ranges.FLIPPED.get(type(op), type(op))()
            return ranges.compare(flipped, rt, lt, self.name_of(right))
        return ranges.compare(op, lt, rt, self.name_of(left))

    def name_of(self, node: ast.expr) -> str | None:
        """The name read, if `node` reads one name and nothing else."""
        return self.text(node) if isinstance(node, ast.Name | ast.Attribute) else None

    def truth(self, node: ast.expr) -> Truth:
        return self.truths.get(id(node), UNKNOWN)

    def judge(self, node: ast.expr, truth: Truth, parts: list[ast.expr]) -> None:
        """Record what `node` can be; say so if it is always or never true (once: not again
        for a condition made of a part already said)."""
        self.truths[id(node)] = truth
        if not truth.constant or any(self.truth(part).constant for part in parts):
            return
        read = [name for name in _names_in(node, self.text) if name in self.seen]
        bounded = [name for name in read if ranges.described(self.seen[name]) != "a value"]
        since = "; ".join(f"`{name}` is {ranges.described(self.seen[name])}" for name in bounded)
        since = f": {since}" if since else ""
        if not truth.can_true:
            self.constant.append(f"`{self.text(node)}` can never be true{since}")
            return
        optional = [name for name in read if self.seen[name].optional]
        hint = ""
        if optional:
            hint = (
                f" (whenever `{optional[0]}` has a value; to ask whether it has one, "
                f"write `{optional[0]} != none`)"
            )
        self.constant.append(f"`{self.text(node)}` is always true{since}{hint}")

    def kinds(self, op: ast.cmpop, left: ast.expr, lt: Type, right: ast.expr, rt: Type) -> None:
        both = f"`{self.text(left)}` is {lt} and `{self.text(right)}` is {rt}"
        if isinstance(op, ast.In | ast.NotIn):
            word = "in" if isinstance(op, ast.In) else "not in"
            self.membership(word, left, lt, right, rt, both)
        elif isinstance(op, _ORDER):
            symbol = _SYMBOL[type(op)]
            if not (_ordered(lt, rt) or _ordered(rt, lt)):
                why = "; options have no order" if "choice" in (lt.kind, rt.kind) else ""
                self.say(f"'{symbol}' compares numbers, dates or times, but {both}{why}")
        else:
            self.equal(_SYMBOL[type(op)], left, lt, right, rt, both)

    def equal(
        self, symbol: str, left: ast.expr, lt: Type, right: ast.expr, rt: Type, both: str
    ) -> None:
        for (node, one), other in (((left, lt), rt), ((right, rt), lt)):
            if other.kind == "none" and not one.optional and one.kind != "none":
                self.say(f"`{self.text(node)}` is {one} and is never none")
                return
            if one.kind == "choice" and isinstance(other.literal, str) and other.kind == "text":
                if other.literal not in one.options:
                    self.say(f"{other.literal!r} is not an option of `{self.text(node)}`: {both}")
                return
            if one.kind == "choice" and other.kind == "integer" and other.literal is not None:
                number = other.literal
                meant = one.options[number - 1] if 0 < number <= len(one.options) else None
                hint = f": write the option itself, {meant!r}" if meant else ""
                self.say(
                    f"`{self.text(node)}` holds the option's text, not its number{hint} ({both})"
                )
                return
        if lt.kind == rt.kind == "choice" and not set(lt.options) & set(rt.options):
            self.say(f"'{symbol}' compares choices that share no option: {both}")
            return
        if not _comparable(lt, rt):
            hint = ""
            if "yes/no" in (lt.kind, rt.kind) and "text" in (lt.kind, rt.kind):
                hint = " (write true or false, without quotes)"
            self.say(f"'{symbol}' compares values of one type, but {both}{hint}")

    def membership(
        self, word: str, left: ast.expr, lt: Type, right: ast.expr, rt: Type, both: str
    ) -> None:
        if rt.kind == "list":
            item = rt.item or ANY
            if lt.kind == "choice" and isinstance(rt.literal, tuple):
                wrong = [v for v in rt.literal if isinstance(v, str) and v not in lt.options]
                if wrong:
                    shown = ", ".join(repr(v) for v in wrong)
                    self.say(f"{shown} not an option of `{self.text(left)}`: {both}")
                    return
            if item.kind != "any" and not _comparable(lt, item):
                self.say(f"'{word}' looks for a value in a list of its type, but {both}")
        elif rt.kind in ("text", "choice"):
            if lt.kind not in ("text", "choice"):
                self.say(f"'{word}' looks for text in text here, but {both}")
        else:
            self.say(f"'{word}' needs a list or text on its right, but {both}")

    def reference(self, node: ast.expr) -> Type:
        keys = _keys(node)
        first_index = next((i for i, k in enumerate(keys) if isinstance(k, int)), len(keys))
        dotted = [str(k) for k in keys[:first_index]]
        for end in range(len(dotted), 1, -1):
            found = self.types.get(".".join(dotted[:end]))
            if found is not None:
                break
        else:
            return ANY  # an unknown name: reported with "did you mean" by the name check
        name = ".".join(dotted[:end])
        for key in keys[end:]:
            if isinstance(key, int) and found.kind == "list":
                found = (found.item or ANY).maybe()  # out of range at run time: a failure
                name += f"[{key}]"
            elif isinstance(key, int):
                return self.say(f"`{name}` is {found}, not a list: it has no item [{key}]")
            else:
                return self.say(f"`{name}` is {found}: it has no `.{key}`")
        return found


def _names_in(node: ast.expr, text: Callable[[ast.expr], str]) -> list[str]:
    """The text of every name-like part of `node`, outermost first, each once."""
    found: list[str] = []
    for part in ast.walk(node):
        if isinstance(part, ast.Name | ast.Attribute | ast.Subscript) and text(part) not in found:
            found.append(text(part))
    return found


def _keys(node: ast.expr) -> list[str | int]:
    match node:
        case ast.Name(id=name):
            return [name]
        case ast.Attribute(value=value, attr=attr):
            return [*_keys(value), attr]
        case ast.Subscript(value=value, slice=index):
            return [*_keys(value), ast.literal_eval(index)]
    return []


def _negated(value: object) -> object:
    return -value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _minus(value: float | None) -> float | None:
    return None if value is None else -value


def _comparable(a: Type, b: Type) -> bool:
    if a.kind == b.kind or (a.numeric() and b.numeric()) or "none" in (a.kind, b.kind):
        return True
    if {a.kind, b.kind} == {"choice", "text"}:
        return True
    for one, other in ((a, b), (b, a)):
        if one.kind in _FORMATS and other.kind == "text" and isinstance(other.literal, str):
            return bool(_FORMATS[one.kind].match(other.literal))
    return False


def _ordered(a: Type, b: Type) -> bool:
    if a.numeric() and b.numeric():
        return True
    if a.kind in _FORMATS and (b.kind == a.kind or b.kind == "text"):
        return b.kind == a.kind or bool(_FORMATS[a.kind].match(str(b.literal or "")))
    return False
