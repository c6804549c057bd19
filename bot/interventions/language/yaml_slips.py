"""The slips YAML lets through silently, found in the parsed nodes and repaired there so that
no follow-on error hides them: a YAML 1.1 boolean where text is meant (`options: [yes, no]`
reaching participants as "1. True 2. False", an option key `yes:`), and a comma inside a
value in `{...}` (`{description: short, clear}` reads `clear` as a key with no value)."""

from __future__ import annotations

import re

import yaml

BOOL_TAG = "tag:yaml.org,2002:bool"
NULL_TAG = "tag:yaml.org,2002:null"
STR_TAG = "tag:yaml.org,2002:str"
_WORDS = ("yes", "no", "on", "off", "y", "n")  # true and false are meant as such in values
# Keys of the formats themselves that YAML 1.1 would read as booleans: text, as written.
_KEYS_MEANT = ("on",)


def repair(node: yaml.Node | None, first: int) -> list[tuple[int, str]]:
    """(file line, message) for each slip under `node`, repaired in place (the text is kept
    as written); `first` is the file line of the node's line 0."""
    slips: list[tuple[int, str]] = []
    _walk(node, first, slips)
    return slips


def _walk(node: yaml.Node | None, first: int, slips: list[tuple[int, str]]) -> None:
    if isinstance(node, yaml.SequenceNode):
        words = [i for i in node.value if _unquoted_bool(i) and i.value.lower() in _WORDS]
        for line in sorted({item.start_mark.line for item in words}):  # said once a line
            on_line = [item for item in words if item.start_mark.line == line]
            for item in on_line:
                item.tag = STR_TAG
            shown = ", ".join(f"`{item.value}`" for item in on_line)
            quoted = ", ".join(f"'{item.value}'" for item in on_line)
            them = "it" if len(on_line) == 1 else "them"
            slips.append(
                (
                    first + line,
                    f"{shown} unquoted {'is' if len(on_line) == 1 else 'are'} read as true or "
                    f"false (YAML 1.1); quote {them}: {quoted}",
                )
            )
        for item in node.value:
            _walk(item, first, slips)
    elif isinstance(node, yaml.MappingNode):
        if node.flow_style:
            _commas(node, first, slips)
        for key, value in node.value:
            if _unquoted_bool(key) and key.value in _KEYS_MEANT:
                key.tag = STR_TAG  # a key of the format itself, e.g. a decision's `when: on:`
            elif _unquoted_bool(key):
                _as_text(
                    key, first, slips, f"the key `{key.value}` unquoted is read as true or false"
                )
            _walk(value, first, slips)


def _as_text(node: yaml.ScalarNode, first: int, slips: list[tuple[int, str]], said: str) -> None:
    slips.append((first + node.start_mark.line, f"{said} (YAML 1.1); quote it: '{node.value}'"))
    node.tag = STR_TAG


def _commas(node: yaml.MappingNode, first: int, slips: list[tuple[int, str]]) -> None:
    """`{key: some text, more text}`: the words after the comma are read as a key with no
    value; they are put back into the value before them."""
    kept: list[tuple[yaml.Node, yaml.Node]] = []
    for key, value in node.value:
        previous = kept[-1] if kept else None
        if (
            previous is not None
            and _plain(key)
            and ":" not in key.value
            and value.tag == NULL_TAG
            and value.value == ""
            and _plain(previous[1])
            and previous[1].tag == STR_TAG
        ):
            before = previous[1].value
            whole = f"{before}, {key.value}"
            slips.append(
                (
                    first + key.start_mark.line,
                    f"in `{{...}}` a comma separates `key: value` pairs, so `{key.value}` was "
                    f"read as a key of its own; quote the text that holds a comma: "
                    f"`{previous[0].value}: '{whole}'`",
                )
            )
            previous[1].value = whole
            continue
        kept.append((key, value))
    node.value = kept


def _plain(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.style is None


def _unquoted_bool(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == BOOL_TAG and node.style is None


_WORD_BEFORE = re.compile(r"([\w-]+)\s*$")


def syntax_problem(exc: yaml.MarkedYAMLError, text: str) -> str:
    """YAML that cannot be read, said in the author's words where the mistake is a common one
    (a comma missing between `key: value` pairs in braces, or a ';' written for it)."""
    problem = exc.problem or str(exc)
    mark = exc.problem_mark
    if mark is None or "expected ',' or '}', but got ':'" not in problem:
        return f"invalid YAML: {problem}"
    lines = text.splitlines()
    before = lines[mark.line][: mark.column] if mark.line < len(lines) else ""
    word = _WORD_BEFORE.search(before)
    key = word[1] if word else "the key"
    written = before[before.rfind("{") + 1 :]
    if ";" in written:
        return f"in `{{...}}` pairs are separated by commas, not ';': write `, {key}:`"
    return f"a comma is missing before `{key}:` in `{{...}}` (write `key: value, {key}: ...`)"
