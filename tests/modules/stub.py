"""A module context with a stub `converse` that records what the module asked for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot.conversation.context import prompt_variables
from bot.conversation.module import ModuleContext, Trigger
from bot.conversation.tool_loop import LoopResult
from bot.store.events import Event

NOW = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)


@dataclass
class Recorder:
    """Stands in for the tool loop: records each call and answers `text`."""

    text: str = "ok"
    calls: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, messages, tools, purpose, *, model=None) -> LoopResult:  # noqa: ANN001
        self.calls.append({"messages": messages, "tools": list(tools), "purpose": purpose})
        return LoopResult(text=self.text)

    @property
    def system(self) -> str:
        return self.calls[-1]["messages"][0]["content"]


def context(
    participant: dict[str, Any],
    recorder: Recorder,
    *,
    trigger: Trigger = "inbound",
    history: Sequence[Event] = (),
    transcript: list[dict[str, Any]] | None = None,
) -> ModuleContext:
    row = {"participant_id": "p1", "timezone": "America/Toronto", "profile": {}, **participant}
    return ModuleContext(
        participant=row,
        now=NOW,
        trigger=trigger,
        transcript=transcript if transcript is not None else [{"role": "user", "content": "hi"}],
        history=list(history),
        variables=prompt_variables(row, NOW, history, trigger),
        converse=recorder,
    )
