"""What a yes/no expression can be, from the declared ranges of the values it reads (pure):
interval reasoning over the typed expression, so that a threshold past a score's maximum
(`total >= 30` when the total is at most 27) or one every value passes (`item9 >= 0` when the
item is 0 to 3) is refused before it silently never (or always) fires.

A comparison of one value with fixed values is known exactly: the values of its domain that
make it true (a choice's options, yes/no, a small integer range). `and`, `or` and `not` combine
those sets for one value, and combine "can be true" / "can be false" otherwise, which never
claims too much: a reported condition really is constant for every value the types allow."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.interventions.language.types import Type

MAX_VALUES = 1000  # an integer range this small is reasoned about value by value
_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
FLIPPED = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}


@dataclass(frozen=True)
class Truth:
    """What a yes/no expression can be: `can_true`, `can_false`; for an expression about one
    value only, `name`, that value's `domain` and the values making it true (`true_for`)."""

    can_true: bool = True
    can_false: bool = True
    name: str | None = None
    domain: frozenset[object] = frozenset()
    true_for: frozenset[object] = frozenset()

    @property
    def constant(self) -> bool:
        return not (self.can_true and self.can_false)


UNKNOWN = Truth()


def domain(found: Type) -> frozenset[object] | None:
    """Every value a type allows (none aside), if there are few enough to list."""
    if found.kind == "choice":
        return frozenset(found.options)
    if found.kind == "yes/no" and found.literal is None:
        return frozenset((True, False))
    low, high = found.bounds
    if found.kind == "integer" and low is not None and high is not None and found.literal is None:
        if high - low <= MAX_VALUES:
            return frozenset(range(int(low), int(high) + 1))
    return None


def of_values(name: str, values: frozenset[object], true_for: frozenset[object]) -> Truth:
    return Truth(bool(true_for), true_for != values, name, values, true_for)


def compare(op: ast.cmpop, left: Type, right: Type, left_name: str | None) -> Truth:
    """What `left op right` can be, `left_name` being the one value read on the left (None:
    the left side is an expression or a literal)."""
    if type(op) not in _OPS or "none" in (left.kind, right.kind):
        return UNKNOWN
    test = _OPS[type(op)]
    values = domain(left) if left_name else None
    if values is not None and right.literal is not None and not isinstance(right.literal, tuple):
        try:
            true_for = frozenset(v for v in values if test(v, right.literal))
        except TypeError:
            return UNKNOWN
        return of_values(left_name or "", values, true_for)
    if not (left.numeric() and right.numeric()):
        return UNKNOWN
    return _intervals(type(op), interval(left), interval(right))


def member(left: Type, right: Type, left_name: str | None, negated: bool) -> Truth:
    """What `left in [..]` (or `not in`) can be, for a list of fixed values."""
    values = domain(left) if left_name else None
    if values is None or not isinstance(right.literal, tuple):
        return UNKNOWN
    listed = frozenset(right.literal)
    true_for = frozenset(v for v in values if (v in listed) != negated)
    return of_values(left_name or "", values, true_for)


def interval(found: Type) -> tuple[float | None, float | None]:
    """The smallest and largest value of a number (None: unbounded)."""
    if isinstance(found.literal, int | float) and not isinstance(found.literal, bool):
        return found.literal, found.literal
    return found.bounds


def _intervals(op: type, left: tuple, right: tuple) -> Truth:
    (a, b), (c, d) = left, right
    if op in (ast.Gt, ast.GtE):
        op, (a, b), (c, d) = FLIPPED[op], (c, d), (a, b)
    if op in (ast.Lt, ast.LtE):  # x in [a, b] against y in [c, d]
        strict = op is ast.Lt
        can_true = a is None or d is None or (a < d if strict else a <= d)
        can_false = b is None or c is None or (b >= c if strict else b > c)
        return Truth(can_true, can_false)
    overlap = a is None or b is None or c is None or d is None or (a <= d and c <= b)
    point = None not in (a, b, c, d) and a == b == c == d
    if op is ast.Eq:
        return Truth(overlap, not point)
    return Truth(not point, overlap)


def negate(truth: Truth) -> Truth:
    if truth.name is not None:
        return of_values(truth.name, truth.domain, truth.domain - truth.true_for)
    return Truth(truth.can_false, truth.can_true)


def combine(conjunction: bool, parts: list[Truth]) -> Truth:
    """`and` (conjunction) or `or` of parts; exact when every part is about the same value."""
    names = {part.name for part in parts}
    if len(names) == 1 and None not in names:
        first = parts[0]
        sets = [part.true_for for part in parts]
        true_for = frozenset.intersection(*sets) if conjunction else frozenset.union(*sets)
        return of_values(first.name or "", first.domain, true_for)
    if conjunction:
        return Truth(all(p.can_true for p in parts), any(p.can_false for p in parts))
    return Truth(any(p.can_true for p in parts), all(p.can_false for p in parts))


def described(found: Type) -> str:
    """ "0 to 27" or "one of 'a', 'b'": what a value may be, for a message."""
    if found.kind in ("choice", "yes/no"):
        return str(found).removesuffix(" (or none)")
    low, high = found.bounds
    if low is not None and high is not None:
        return f"{low:g} to {high:g}"
    if low is not None:
        return f"at least {low:g}"
    if high is not None:
        return f"at most {high:g}"
    return str(found)
