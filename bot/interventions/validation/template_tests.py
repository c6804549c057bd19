"""The tests of templates (`{% if %}`, `{% elif %}`, `x if test else y`) checked like
conditions: a choice compared with a value that is not one of its options (or with its option
number), values of different types, and thresholds the declared ranges never (or always)
pass. Rendering with sample values cannot find these: a test that is never true just renders
the other branch."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from typing import cast

import jinja2
from jinja2 import nodes

from bot.interventions.language.typecheck import truthy_condition_problems
from bot.interventions.language.types import Type

UNCHECKED = "_unchecked_"  # a part a condition cannot say (a filter, a call): any value
_OPS = {
    "eq": ast.Eq,
    "ne": ast.NotEq,
    "lt": ast.Lt,
    "lteq": ast.LtE,
    "gt": ast.Gt,
    "gteq": ast.GtE,
    "in": ast.In,
    "notin": ast.NotIn,
}


def template_test_problems(
    env: jinja2.Environment, source: str, types: Mapping[str, Type]
) -> Iterator[tuple[int, str]]:
    """(line in `source`, message) for each test with a problem; a template that does not
    parse is said elsewhere."""
    try:
        tree = env.parse(source)
    except jinja2.TemplateSyntaxError:
        return
    for node in tree.find_all((nodes.If, nodes.CondExpr)):
        test = cast(nodes.If | nodes.CondExpr, node).test
        written = ast.unparse(_python(test))
        for problem in truthy_condition_problems(written, types):
            yield test.lineno, f"template: condition `{written}`: {problem}"


def _python(node: nodes.Node) -> ast.expr:
    """A Jinja expression as the Python expression the type checker reads."""
    match node:
        case nodes.Name(name=name):
            return ast.Name(name)
        case nodes.Getattr(node=inner, attr=attr):
            return ast.Attribute(_python(inner), attr)
        case nodes.Getitem(node=inner, arg=nodes.Const(value=str(key) | int(key))):
            return ast.Subscript(_python(inner), ast.Constant(key))
        case nodes.Const(value=value) if isinstance(value, str | int | float | bool | None):
            return ast.Constant(value)
        case nodes.List(items=items) | nodes.Tuple(items=items):
            return ast.List([_python(item) for item in items])
        case nodes.And(left=left, right=right):
            return ast.BoolOp(ast.And(), [_python(left), _python(right)])
        case nodes.Or(left=left, right=right):
            return ast.BoolOp(ast.Or(), [_python(left), _python(right)])
        case nodes.Not(node=inner):
            return ast.UnaryOp(ast.Not(), _python(inner))
        case nodes.Neg(node=inner):
            return ast.UnaryOp(ast.USub(), _python(inner))
        case nodes.Add(left=left, right=right):
            return ast.BinOp(_python(left), ast.Add(), _python(right))
        case nodes.Sub(left=left, right=right):
            return ast.BinOp(_python(left), ast.Sub(), _python(right))
        case nodes.Compare(expr=left, ops=operands) if all(o.op in _OPS for o in operands):
            return ast.Compare(
                _python(left),
                [_OPS[operand.op]() for operand in operands],
                [_python(operand.expr) for operand in operands],
            )
    return ast.Name(UNCHECKED)
