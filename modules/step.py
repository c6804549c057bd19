"""The step module: runs the participant's intervention (`interventions/<slug>/`, the slug in
their `intervention` column) one turn at a time, as bot.interventions.interpreter.turn decides it.

Its prompt (prompts/step.md) frames every completion of every step; the intervention's files
say the rest (docs/interventions.md). An intervention is loaded and validated once per
process; one that does not validate is not run (the turn fails and its fallback is sent).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.conversation.memory import remembered
from bot.conversation.module import ModuleContext, ModuleReply
from bot.conversation.prompts import Prompt, load_prompt
from bot.conversation.tone import tone_guide
from bot.instruments.administration import attach
from bot.interventions.interpreter.completion import Asker
from bot.interventions.interpreter.turn import StepResult, TurnInput, run_turn
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.loader import CONFIG, read_intervention
from bot.interventions.language.problems import errors
from bot.interventions.validation.validate import check
from bot.store.event_types.conversation import StateTransitioned
from bot.store.events import Event, EventData

log = logging.getLogger(__name__)

INTERVENTIONS = Path(__file__).resolve().parents[1] / "interventions"
PROMPT = Path(__file__).resolve().parents[1] / "prompts" / "step.md"
ENROLLED_STATE = "intake"  # where enrollment puts a participant unless told otherwise


@dataclass
class StepModule:
    """Serves conversation state "step" for the interventions under `root`."""

    name: str = "step"
    root: Path = INTERVENTIONS
    prompt: Prompt = field(default_factory=lambda: load_prompt(PROMPT))
    # The module-based modules an intervention's `module:` may name (modules/__init__.py hands
    # them in); None leaves that name unchecked.
    modules: Collection[str] | None = None
    _loaded: dict[str, tuple[Intervention | None, str]] = field(default_factory=dict)
    # An administration abandoned on silence by its timer runs a turn (trigger "abandoned"):
    # the step's `abandoned.*` transitions (bot.conversation.flow).
    continues_after_abandon: bool = True

    @property
    def tools(self) -> Sequence[str]:
        """Every tool a step of an intervention under `root` offers: the flow resolves them
        when it starts, so a misspelt tool stops the start, as in a module's prompt."""
        slugs = sorted(p.parent.name for p in self.root.glob(f"*/{CONFIG}"))
        loaded = [self.intervention(slug)[0] for slug in slugs]
        offered = [t for i in loaded if i for step in i.steps.values() for t in step.tools]
        return list(dict.fromkeys(offered))

    @property
    def fallback(self) -> str:
        return self.prompt.fallback

    def intervention(self, slug: str) -> tuple[Intervention | None, str]:
        """The intervention, or None and why it cannot run."""
        if slug not in self._loaded:
            why = "no such intervention"
            found, problems = read_intervention(self.root / slug) if slug else (None, [])
            if found is not None:
                found, more = attach(found)  # its `instruments:` (bot.instruments)
                problems = [*problems, *more]
            checked = check(found, modules=self.modules) if found else []
            problems = errors(sorted({*problems, *checked}))  # warnings do not stop it
            if problems:
                why = f"does not validate ({len(problems)} problems; first: {problems[0]})"
                log.error("intervention %r does not validate (%d problems)", slug, len(problems))
            self._loaded[slug] = (found, "") if found and not problems else (None, why)
        return self._loaded[slug]

    def opening(
        self, participant: Mapping[str, Any], history: Sequence[Event], trigger: str
    ) -> list[EventData]:
        """Move a participant who was just enrolled (nothing sent to them yet) from intake into
        their intervention, if it starts at a root step rather than in a module."""
        if participant.get("conversation_state") != ENROLLED_STATE:
            return []
        if participant.get("current_step") or remembered(participant, history).contacted:
            return []
        slug = str(participant.get("intervention") or "")
        intervention, _ = self.intervention(slug)
        if intervention is None or not intervention.root or intervention.config.module:
            return []
        reason = f"intervention {slug!r} starts at step {intervention.root!r}"
        return [
            StateTransitioned(
                from_state=ENROLLED_STATE, to_state=self.name, reason=reason, source="intervention"
            )
        ]

    def run(self, ctx: ModuleContext) -> ModuleReply:
        slug = str(ctx.participant.get("intervention") or "")
        intervention, why = self.intervention(slug)
        if intervention is None:
            return ModuleReply(StepResult(error=f"intervention {slug!r}: {why}"), self.fallback)
        frame = self.prompt.render(ctx.variables)
        guide = tone_guide(ctx.participant.get("profile") or {})
        turn = TurnInput(
            intervention=intervention,
            participant=ctx.participant,
            history=ctx.history,
            now=ctx.now,
            trigger=ctx.trigger,
            inbound=ctx.inbound,
            frame=f"{frame}\n\n{guide}" if guide else frame,
            notes=ctx.notes,
            pending=ctx.pending,
            start=ctx.start,
        )
        result = run_turn(turn, Asker(ctx.converse, ctx.structured, embed=ctx.embed))
        return ModuleReply(result, intervention.config.fallback)
