"""The tool interface: a pydantic argument model (its docstring is what the model reads), a run
function that returns events and a message for the model, and the context handed to it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel

from bot.store.events import Event, EventData


class Completer(Protocol):
    """A plain text completion, for tools that ask the LLM something (generate_habit_prompt)."""

    def __call__(self, system: str, user: str, purpose: str) -> str: ...


@dataclass
class ToolContext:
    """What a tool may know. Identity comes from here, never from the tool's arguments.

    `participant` is a working copy of the participants row: the tool loop folds each tool's
    events into it, so a later tool in the same turn sees an earlier tool's changes.
    """

    participant: dict[str, Any]
    now: datetime
    history: Sequence[Event] = ()
    pending_timers: Sequence[Mapping[str, Any]] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    complete: Completer | None = None


@dataclass
class ToolOutcome:
    """What a tool did: `message` goes back to the model; `events` are appended with the turn."""

    ok: bool
    message: str
    events: list[EventData] = field(default_factory=list)
    # Events the tool loop must not show the model but the turn must record (LLM sub-calls).
    side_events: list[EventData] = field(default_factory=list)


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the engine sees it: name, argument model, and run."""

    name: str
    arguments: type[BaseModel]
    run: Callable[[Any, ToolContext], ToolOutcome]


def resolve(names: Iterable[str], known: Mapping[str, ToolSpec]) -> list[ToolSpec]:
    """The specs of `names`, in order; ValueError names any unknown tool and the known ones."""
    names = list(names)
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(
            f"unknown tool(s) {', '.join(map(repr, unknown))}; known tools: {', '.join(known)}"
        )
    return [known[name] for name in names]
