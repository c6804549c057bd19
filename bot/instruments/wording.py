"""A pydantic validation error said in the author's words: where ("item 'i3': `answer.min`",
"band 'mild'", never `dict[str,str].1.[key]`), and what ("should be a whole number",
"unknown key `revers`; did you mean `reverse`?")."""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel

from bot.core.author_errors import KINDS
from bot.instruments.format import Instrument


def errors_in_authors_words(errors: list[Any], data: Any) -> list[tuple[tuple[Any, ...], str]]:
    """Each error said for the author, but a required key that a misspelt one was meant to
    be (`txt:` for `text:`) is said once: "unknown key `txt`; did you mean `text`?"."""
    meant: set[tuple[Any, ...]] = set()
    for error in errors:
        if error["type"] == "extra_forbidden":
            path = _path(error)
            near = difflib.get_close_matches(str(path[-1]), sorted(_fields_at(path[:-1])), n=1)
            meant |= {(*path[:-1], near[0])} if near else set()
    return [
        authors_words(error, data)
        for error in errors
        if not (error["type"] == "missing" and _path(error) in meant)
    ]


def _path(error: Any) -> tuple[Any, ...]:
    return tuple(part for part in error["loc"] if not _internal(part))


def authors_words(error: Any, data: Any) -> tuple[tuple[Any, ...], str]:
    """The key path (for the line) and the message of one pydantic error over `data`."""
    loc = tuple(error["loc"])
    path = _path(error)
    on_key = "[key]" in loc
    kind = error["type"]
    if kind == "extra_forbidden":
        known = sorted(_fields_at(path[:-1]))
        near = difflib.get_close_matches(str(path[-1]), known, n=1)
        hint = f"; did you mean `{near[0]}`?" if near else f" (known: {', '.join(known)})"
        return path, f"{_owner(path[:-1], data)}unknown key `{path[-1]}`{hint}"
    if kind == "missing":
        swallowed = _swallowed(_entry(data, *path[:-1]), str(path[-1]))
        return path, f"{_owner(path[:-1], data)}`{path[-1]}` is required{swallowed}"
    what = KINDS.get(kind) or _described(error)
    if len(path) == 3 and path[:2] == ("scoring", "subscales") and kind.endswith("_type"):
        what = "should be a list of item ids (or `items:` with `bands:`)"
    value = error.get("input")
    shown = f" (it is {value!r})" if _shown(value) and kind != "missing" else ""
    if on_key:
        return path, f"{_owner(path[:-1], data)}the key `{path[-1]}` {what}"
    return path, f"{_where(path, data)} {what}{shown}"


def _described(error: Any) -> str:
    kind, context = error["type"], error.get("ctx") or {}
    if kind == "literal_error":
        return f"should be one of {context.get('expected', '')}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        words = {
            "greater_than_equal": "at least",
            "greater_than": "above",
            "less_than_equal": "at most",
            "less_than": "below",
        }[kind]
        limit = next(iter(context.values()), "")
        return f"should be {words} {limit}"
    return str(error["msg"]).removeprefix("Value error, ")


def _shown(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) and len(str(value)) <= 40


def _internal(part: Any) -> bool:
    """pydantic's own steps in a path: `[key]`, `dict[str,str]`, `function-after[...]`."""
    return isinstance(part, str) and ("[" in part or part in ("int", "str", "float"))


def _owner(path: tuple[Any, ...], data: Any) -> str:
    """'item 'i3': ' for the thing a key belongs to ('' at the top)."""
    return f"{_where(path, data)}: " if path else ""


def _where(path: tuple[Any, ...], data: Any) -> str:
    """A key path as the author would point at it: item 'i3': `answer.codes.4`."""
    named, rest = "", list(path)
    if rest[:1] == ["items"] and len(rest) > 1 and isinstance(rest[1], int):
        named, rest = f"item {_item_name(data, rest[1])}", rest[2:]
    elif rest[:1] == ["bands"] and len(rest) > 1 and isinstance(rest[1], int):
        named, rest = f"band {_listed(data, 'bands', rest[1], 'name')}", rest[2:]
    elif rest[:2] == ["scoring", "subscales"] and len(rest) > 2:
        named, rest = f"subscale {rest[2]!r}", rest[3:]
        if rest[:1] == ["bands"] and len(rest) > 1 and isinstance(rest[1], int):
            subscale = _entry(data, "scoring", "subscales", path[2])
            named, rest = f"{named}, band {_listed(subscale, 'bands', rest[1], 'name')}", rest[2:]
    keys = ".".join(str(part) for part in rest)
    if named and keys:
        return f"{named}: `{keys}`"
    return named or f"`{keys}`"


def _entry(data: Any, *keys: Any) -> Any:
    """The value at a key path (list indices included), None if there is none."""
    for key in keys:
        if isinstance(data, list) and isinstance(key, int) and 0 <= key < len(data):
            data = data[key]
        else:
            data = data.get(key) if isinstance(data, dict) else None
    return data


def _swallowed(mapping: Any, key: str) -> str:
    """A hint when a missing key is written inside another's value (`{name: mild min: 5}`
    read as name "mild min 5": a comma was missing)."""
    for other, value in mapping.items() if isinstance(mapping, dict) else ():
        if isinstance(value, str) and key in value.split():
            return (
                f"; it seems to be inside the value of `{other}` ({value!r}): is a comma or "
                "a colon missing?"
            )
    return ""


def _item_name(data: Any, index: int) -> str:
    return _listed(data, "items", index, "id")


def _listed(data: Any, key: str, index: int, name: str) -> str:
    try:
        entry = data[key][index]
        return repr(str(entry[name]))
    except (KeyError, IndexError, TypeError):
        return f"{index + 1} (the {_ordinal(index + 1)} under `{key}`)"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _fields_at(path: tuple[Any, ...]) -> set[str]:
    """The keys the model at `path` knows (for "did you mean")."""
    model: Any = Instrument
    for part in path:
        if isinstance(part, int) or not (isinstance(model, type) and issubclass(model, BaseModel)):
            model = _inner(model)
            if isinstance(part, int) or not _is_model(model):
                continue
        field = model.model_fields.get(part)
        if field is None:  # a key of a mapping (a subscale's name)
            model = _inner(model)
            continue
        model = _inner(field.annotation)
    model = _inner(model)
    return set(model.model_fields) if _is_model(model) else set()


def _is_model(model: Any) -> bool:
    return isinstance(model, type) and issubclass(model, BaseModel)


def _inner(annotation: Any) -> Any:
    """The model inside Optional, list, dict values and Annotated (itself if none)."""
    if _is_model(annotation):
        return annotation
    for arg in typing.get_args(annotation):
        if isinstance(arg, types.GenericAlias) or typing.get_args(arg) or _is_model(arg):
            found = _inner(arg)
            if _is_model(found):
                return found
    return annotation
