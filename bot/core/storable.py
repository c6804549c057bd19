"""Text that every database can store: PostgreSQL refuses NUL (U+0000) in text and JSONB, and
no UTF-8 column holds a lone surrogate. Such characters become U+FFFD in what is stored, and the
original stays recoverable (`original`)."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(text: str) -> tuple[str, str | None]:
    """`text` with unstorable characters replaced, and the original as base64 of its UTF-8
    (surrogates kept) when anything was replaced, else None."""
    if not _UNSTORABLE.search(text):
        return text, None
    kept = base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")
    return _UNSTORABLE.sub(REPLACEMENT, text), kept


def original(kept: str) -> str:
    """The text that `storable` replaced characters in, from what it kept."""
    return base64.b64decode(kept).decode("utf-8", "surrogatepass")


def unstorable_paths(value: Any, path: str = "") -> Iterator[str]:
    """The dotted paths of strings (and keys) in a JSON value that hold unstorable characters."""
    if isinstance(value, str):
        if _UNSTORABLE.search(value):
            yield path or "body"
    elif isinstance(value, Mapping):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and _UNSTORABLE.search(key):
                yield here
            yield from unstorable_paths(item, here)
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from unstorable_paths(item, f"{path}[{n}]")


def storable_json(value: Any, path: str = "") -> tuple[Any, dict[str, str]]:
    """A JSON value with every string made storable, and the originals kept by dotted path
    (`body`, `changes.name`, `media[0].url`) of those that changed; the same value when none
    did. The common case is seen at once, without a walk: orjson encodes the whole value (it
    refuses a lone surrogate, and writes NUL as `\\u0000`)."""
    if _plainly_storable(value):
        return value, {}
    return walked(value, path)


def walked(value: Any, path: str = "") -> tuple[Any, dict[str, str]]:
    """`storable_json` by a walk of every string (what the orjson check spares)."""
    if isinstance(value, str):
        clean, was = storable(value)
        return clean, ({path: was} if was is not None else {})
    if isinstance(value, Mapping):
        kept: dict[str, str] = {}
        out: dict[str, Any] = {}
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            out[key], more = walked(item, here)
            kept.update(more)
        return (out if kept else value), kept
    if isinstance(value, list):
        kept = {}
        items = []
        for n, item in enumerate(value):
            clean, more = walked(item, f"{path}[{n}]")
            items.append(clean)
            kept.update(more)
        return (items if kept else value), kept
    return value, {}


def _plainly_storable(value: Any) -> bool:
    """Whether no string or key in a JSON value holds an unstorable character, as orjson sees
    it, at a tenth of the walk's cost. False also when orjson cannot
    tell (a key that is not a string, a value it does not encode; a text holding a backslash and
    `u0000`): the walk decides."""
    try:
        encoded = orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate, or what orjson cannot encode
        return False
    return b"\\u0000" not in encoded
