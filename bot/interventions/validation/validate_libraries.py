"""What the validator checks about libraries and retrievals (reading the documents, in the
loader, already reported missing or empty folders and documents without an id or a title, or
with an id used before): embedding model aliases, the library each retrieval names, and the
metadata its filter names."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bot.interventions.language.intervention import Intervention
from bot.interventions.language.loader import CONFIG
from bot.interventions.language.problems import unknown

Found = tuple[str, tuple[Any, ...], str]  # source key, key path, message


def library_problems(intervention: Intervention) -> Iterator[Found]:
    if CONFIG not in intervention.unreadable:
        models = intervention.config.models
        for name, spec in intervention.config.libraries.items():
            if spec.model is not None and spec.model not in models:
                where = ("libraries", name, "model")
                yield (
                    "config",
                    where,
                    f"library {name!r}: {unknown('model alias', spec.model, models)}",
                )
    for found in intervention.retrievals():
        wanted = found.spec
        at = (*found.path, "retrieve") if found.action is not None else (*found.path, "library")
        library = intervention.libraries.get(wanted.library)
        if library is None:
            if CONFIG not in intervention.unreadable:
                yield found.key, at, unknown("library", wanted.library, intervention.libraries)
            continue
        keys = library.meta_keys()
        for key in wanted.filter:
            if key not in keys:
                where = (*found.path, "filter", key)
                message = unknown(f"metadata in library {wanted.library!r}:", key, keys)
                yield found.key, where, f"filter: {message}"
