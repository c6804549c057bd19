"""Which fields of an event payload are personal data, and what an erased one reads as.

Pure: it reads the `personal`/`plain` declarations on the event models (bot.store.events).
A text field is one whose type can hold a string (str, Any, a dict or list of them, a nested
model with one); ids (`*_id`, `*_sid`, `*_ids`) and Literal choices are not free text.
"""

from __future__ import annotations

import functools
import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from bot.store.events import EventData

ERASED = "[erased]"
_ID_SUFFIXES = ("_id", "_sid", "_ids")


def _can_hold_text(annotation: Any) -> bool:
    if annotation is str or annotation is Any:
        return True
    origin = get_origin(annotation)
    if origin is Literal:
        return False
    if origin in (Union, types.UnionType, list, dict, tuple, set, frozenset):
        return any(_can_hold_text(arg) for arg in get_args(annotation))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return any(_can_hold_text(f.annotation) for f in annotation.model_fields.values())
    return False


@functools.cache
def text_fields(model: type[EventData]) -> frozenset[str]:
    """The fields of `model` that can hold free text."""
    return frozenset(
        name
        for name, info in model.model_fields.items()
        if not name.endswith(_ID_SUFFIXES) and _can_hold_text(info.annotation)
    )


@functools.cache
def personal_fields(model: type[EventData]) -> frozenset[str]:
    """The fields sealed with the participant's data key: those declared personal, or every
    text field when the model declares nothing (an unclassified type is sealed, not exposed)."""
    if model.personal is None:
        return text_fields(model)
    return model.personal


def unclassified(model: type[EventData]) -> frozenset[str]:
    """Text fields of `model` declared neither personal nor plain (a test wants none)."""
    if model.personal is None:
        return text_fields(model)
    return text_fields(model) - model.personal - model.plain


def erased_value(model: type[EventData], name: str) -> Any:
    """What field `name` reads as once its key is destroyed: `[erased]` for text, an empty
    container for a list or a dict (so that reducers folding it still work)."""
    annotation = model.model_fields[name].annotation
    for candidate in (annotation, *get_args(annotation)):
        origin = get_origin(candidate) or candidate
        if origin is dict:
            return {}
        if origin is list:
            return []
    return ERASED
