"""Wiring the conversation: the LLM client, the crisis screen (with each intervention's own
settings), the modules and tools, the timer handlers and the flow.

`build_handler(services)` is what `tandem serve` and `tandem worker` hand their workers.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.conversation import escalation, timer_turns
from bot.conversation.daily_cycle import prompt as daily_prompt
from bot.conversation.daily_cycle.replies import on_reply
from bot.conversation.flow import ConversationFlow
from bot.conversation.llm import ChatClient
from bot.conversation.module import Module
from bot.conversation.safety import CrisisScreen
from bot.conversation.turns import Handler
from bot.core.config import ConfigError, Settings
from bot.core.localtime import parse_quiet_hours
from bot.instruments.administration import attach
from bot.interventions.interpreter import (
    decision_events,
    decision_schedule,
    decision_timers,
    send_timers,
)
from bot.interventions.interpreter.applied import INTERVENTIONS, AppliedByIntervention
from bot.interventions.validation.catalogue import Catalogue
from bot.runtime.tool_registry import HABIT_PROMPTS, TOOLS
from bot.store.services import Services
from bot.studies.catalogue import StudyCatalogue
from modules import MODULES

log = logging.getLogger(__name__)

# The timer kinds whose turns the scheduler decides as they fire (bot.timers.firing), a batch
# at a time, instead of a worker's turn each: decision points, which many participants can
# have due in the same minute, and whose turn reads nothing the batch cannot read for all.
TURNS_AT_FIRING = (decision_schedule.DECISION,)


def intervention_catalogue(root: Path = INTERVENTIONS) -> Catalogue:
    """The interventions under `root`, validated against the tool registry and the
    module-based conversation modules an intervention's `module:` may name."""
    return Catalogue(root, TOOLS, [name for name in MODULES if name != "step"], attach)


def check_interventions(settings: Settings, catalogue: Catalogue) -> None:
    """ConfigError listing every problem if any intervention under the root, or the
    configured `INTERVENTION`, cannot be used: a process does not start with one."""
    problems = catalogue.startup_problems(settings.intervention)
    if problems:
        first = (
            f"interventions that cannot be used (INTERVENTION={settings.intervention!r}); "
            "fix each problem below and check with `tandem interventions validate`"
        )
        raise ConfigError([first, *(str(problem) for problem in problems)])


def check_study(settings: Settings, studies: StudyCatalogue) -> None:
    """ConfigError if `STUDY` names a study that does not exist or validate, or cannot be
    allocated in (no TANDEM_MASTER_KEY): a process does not start with one."""
    if settings.study is None:
        return
    problems = [str(p) for p in studies.problems(settings.study)]
    if not problems and not settings.master_key:
        problems = ["allocation needs a secret: set TANDEM_MASTER_KEY"]
    if problems:
        first = f"STUDY={settings.study!r} cannot be enrolled in"
        raise ConfigError([first, *problems])


def build_handler(
    services: Services,
    *,
    client: ChatClient | None = None,
    modules: Mapping[str, Module] | None = None,
) -> Handler:
    """The handler that runs every participant's turns; built once per process. `client` and
    `modules` replace the configured LLM client and the module table (`tandem chat` does)."""
    settings = services.settings
    client = client or ChatClient.from_settings(settings)
    modules = MODULES if modules is None else modules
    screen = CrisisScreen.from_default()
    daily_prompt.register(
        client.complete,
        HABIT_PROMPTS,
        reminder_hours=settings.reminder_after_prompt_hours,
        auto_feedback_minutes=settings.auto_feedback_after_prompt_minutes,
    )
    # Interventions' own safety settings come from where the step module reads interventions.
    root = getattr(modules.get("step"), "root", INTERVENTIONS)
    interventions = AppliedByIntervention(settings, screen, root=root)
    timer_turns.register(
        escalation.KIND,
        escalation.escalation_handler(
            lambda participant: interventions.of(participant).supervisors,
            settings.escalation(),
            settings.alert_escalate_minutes,
            settings.public_base_url,
        ),
    )
    steps = modules.get("step")
    if steps is not None and hasattr(steps, "intervention"):  # the step module loads them
        seed = decision_timers.draw_seed(settings.master_key)
        quiet = parse_quiet_hours(settings.quiet_hours)

        def takeovers(pid: str) -> dict[str, Any] | None:
            return services.store.projection_row("takeovers", pid)

        decision_timers.register(
            lambda participant: steps.intervention(str(participant.get("intervention") or ""))[0],
            seed,
            quiet,
            takeovers,
        )
        decision_events.configure(decision_events.Deciding(seed, quiet, takeovers))
        send_timers.register(
            lambda participant: steps.intervention(str(participant.get("intervention") or ""))[0]
        )
    flow = ConversationFlow(
        client,
        screen,
        settings,
        modules,
        tools=TOOLS,
        reply_parser=on_reply,
        interventions=interventions,
    )
    log.info("conversation ready: modules %s, %r", ", ".join(modules), screen)
    return flow.handle
