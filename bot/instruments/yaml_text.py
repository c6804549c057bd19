"""Reading an instrument's YAML: the data, the line of every key and list item, and the slips
YAML lets through silently, each said once in the author's words and repaired so that no
follow-on error hides it: YAML 1.1 booleans where text is meant (`yes:` as an option), a
`{key:value}` written without the space, a key written twice, and a comma missing in braces.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

BOOL_TAG = "tag:yaml.org,2002:bool"
NULL_TAG = "tag:yaml.org,2002:null"
BOOLEAN_KEYS = frozenset({"reverse", "scored"})  # the keys whose values are true or false
# Keys with a fixed set of words: `skip: no` is kept as the text "no" and refused with the
# words allowed, rather than told to be quoted and then refused again.
WORD_KEYS = frozenset({"type", "method", "mode", "skip", "separators"})
_GLUED = re.compile(r"^([A-Za-z_][\w-]*):(\S.*)$")
_WORD_BEFORE = re.compile(r"([\w-]+)\s*$")

Lines = dict[tuple[str, ...], int]


class YamlSyntaxError(ValueError):
    """YAML that cannot be read at all; `line` is 1-based."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


def read_yaml(text: str) -> tuple[Any, Lines, list[tuple[int, str]]]:
    """The data, the line of each key path (parts as text), and the slips (line, message)
    already repaired in the data. YamlSyntaxError if the text is not YAML."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        raise _syntax(exc, text) from None
    reader = _Builder()
    data = reader.build(node, ()) if node is not None else None
    return data, reader.lines, reader.slips


def line_of(lines: Lines, path: tuple[Any, ...]) -> int | None:
    """The line of the longest prefix of `path` that is written (None: nothing is)."""
    parts = tuple(str(part) for part in path)
    for end in range(len(parts), 0, -1):
        if parts[:end] in lines:
            return lines[parts[:end]]
    return min(lines.values(), default=None)


class _Builder:
    def __init__(self) -> None:
        self.lines: Lines = {}
        self.slips: list[tuple[int, str]] = []
        self.constructor = SafeConstructor()

    def build(self, node: yaml.Node, path: tuple[str, ...], key: str | None = None) -> Any:
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            result = []
            for index, item in enumerate(node.value):
                self.lines[(*path, str(index))] = item.start_mark.line + 1
                result.append(self.build(item, (*path, str(index))))
            return result
        if _unquoted_bool(node) and key in WORD_KEYS:
            return node.value
        if _unquoted_bool(node) and key not in BOOLEAN_KEYS and _yaml11(node):
            self.slip(
                node,
                f"`{node.value}` unquoted is read as true or false (YAML 1.1); "
                f"quote it: '{node.value}'",
            )
            return node.value
        return self.constructor.construct_object(node, deep=True)

    def mapping(self, node: yaml.MappingNode, path: tuple[str, ...]) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            glued = (
                _GLUED.match(key_node.value)
                if _glued_candidate(node, key_node, value_node)
                else None
            )
            if glued:
                key: Any = glued[1]
                value = yaml.safe_load(glued[2])
                self.slip(
                    key_node,
                    f"write a space after the colon: `{glued[1]}: {glued[2]}` "
                    f"(without it, `{key_node.value}` is one key with no value)",
                )
            elif _unquoted_bool(key_node):
                key = key_node.value
                self.slip(
                    key_node,
                    f"the key `{key}` unquoted is read as true or false (YAML "
                    f"1.1); quote it: '{key}'",
                )
                value = None
            else:
                key = self.constructor.construct_object(key_node, deep=True)
                value = None
            here = (*path, str(key))
            if key in result:
                first = self.lines.get(here)
                self.slip(
                    key_node,
                    f"`{key}` is written twice (first on line {first}); the "
                    "second would silently replace the first",
                )
                continue
            self.lines[here] = line
            if not glued:
                value = self.build(value_node, here, str(key))
            result[key] = value
        return result

    def slip(self, node: yaml.Node, message: str) -> None:
        self.slips.append((node.start_mark.line + 1, message))


def _unquoted_bool(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == BOOL_TAG and node.style is None


def _yaml11(node: yaml.Node) -> bool:
    """yes, no, on, off: booleans only in YAML 1.1 (true and false are meant as such)."""
    return str(node.value).lower() in ("yes", "no", "on", "off")


def _glued_candidate(node: yaml.MappingNode, key: yaml.Node, value: yaml.Node) -> bool:
    """`{min:5}`: in braces, a plain key holding a colon, with no value."""
    return (
        bool(node.flow_style)
        and isinstance(key, yaml.ScalarNode)
        and key.style is None
        and isinstance(value, yaml.ScalarNode)
        and value.tag == NULL_TAG
        and value.value == ""
    )


def _syntax(exc: yaml.MarkedYAMLError, text: str) -> YamlSyntaxError:
    """One clear message for YAML that cannot be read, in the author's words where the
    mistake is a common one (a comma missing between `key: value` pairs in braces)."""
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark else 1
    problem = exc.problem or ""
    if mark is not None and "expected ',' or '}'" in problem:
        lines = text.splitlines()
        before = lines[mark.line][: mark.column] if mark.line < len(lines) else ""
        word = _WORD_BEFORE.search(before)
        key = word[1] if word else "the key"
        written = before[before.rfind("{") + 1 :] if "{" in before else before
        if ";" in written:
            return YamlSyntaxError(
                line, f"in `{{...}}` pairs are separated by commas, not ';': write `, {key}:`"
            )
        return YamlSyntaxError(
            line,
            f"a comma is missing before `{key}:` in `{{...}}` (write `key: value, {key}: ...`)",
        )
    context = f" ({exc.context})" if exc.context else ""
    return YamlSyntaxError(line, f"invalid YAML: {problem or exc}{context}")
