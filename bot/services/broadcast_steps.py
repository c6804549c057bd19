"""A broadcast that starts a step: the step checked against every recipient's intervention
(refused, naming it and the interventions that lack it, never skipped), and the dry run's
samples: what the step would send each of three participants, worked out by the same turn the
worker runs, with no LLM called and nothing recorded."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from bot.conversation.tool_loop import LoopResult
from bot.instruments.administration import attach
from bot.interventions.interpreter.completion import Asker
from bot.interventions.interpreter.turn import TurnInput, run_turn
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.loader import load_intervention
from bot.interventions.validation.catalogue import Catalogue
from bot.services.refusal import Refused
from bot.store.event_store import EventStore
from bot.store.events import participant_stream

STEP_LIMIT = 100
DRY_RUN = "a dry run calls no LLM"


def check_step(raw: Any) -> str:
    """The step's name as given; Refused if empty or too long."""
    step = str(raw or "").strip()
    if not step or len(step) > STEP_LIMIT:
        raise Refused(f"name a step of 1 to {STEP_LIMIT} characters", "step")
    return step


def interventions_with(
    catalogue: Catalogue, step: str, slugs: Iterable[str | None]
) -> dict[str, Intervention]:
    """The recipients' interventions, each of which must have `step`: Refused naming the step
    and every intervention without it (with its steps), or one that cannot run."""
    loaded: dict[str, Intervention] = {}
    lacking: list[str] = []
    for slug in sorted({s or "" for s in slugs}):
        refusal = catalogue.refusal(slug) if slug else "no intervention"
        if refusal:
            lacking.append(f"{slug or '(none)'}: {refusal}")
            continue
        found, _ = attach(load_intervention(catalogue.root / slug))
        if step not in found.steps:
            steps = ", ".join(found.steps) or "none (it runs a module)"
            lacking.append(f"{slug} (its steps: {steps})")
            continue
        loaded[slug] = found
    if lacking:
        raise Refused(f"no step {step!r} in {'; '.join(lacking)}", "step")
    return loaded


def samples(
    store: EventStore,
    interventions: Mapping[str, Intervention],
    step: str,
    rows: Sequence[Mapping[str, Any]],
    now: datetime,
    limit: int,
) -> list[dict[str, str]]:
    """What the step would send the first `limit` participants: its fixed text rendered for
    each, or why it cannot be shown (written by the LLM when sent, or failing to render)."""
    found: list[dict[str, str]] = []
    for row in rows[:limit]:
        pid = str(row["participant_id"])
        participant = store.projection_row("participants", pid)
        if participant is None:
            continue
        intervention = interventions[str(row["intervention"])]
        turn = TurnInput(
            intervention=intervention,
            participant=participant,
            history=store.load(participant_stream(pid)),
            now=now,
            trigger="broadcast",
            start=step,
        )
        result = run_turn(turn, Asker(_no_llm, _no_structured))
        text = (result.text or "").strip()
        if not text:
            if intervention.steps[step].say is None:
                text = f"(step {step!r} is written by the LLM when it is sent; {DRY_RUN})"
            else:
                text = f"(would be held: {result.error or 'the step says nothing'})"
        found.append({"participant_id": pid, "text": text})
    return found


def _no_llm(*_args: Any, **_kwargs: Any) -> LoopResult:
    return LoopResult(error=DRY_RUN)


def _no_structured(*_args: Any, **_kwargs: Any) -> tuple[None, list[Any]]:
    return None, []
