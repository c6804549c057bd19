"""Wiring the conversation: the LLM client, the crisis screen (with each intervention's own
settings), the modules and tools, the timer handlers and the flow.

`build_handler(services)` is what `tandem serve` and `tandem worker` hand their workers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bot.conversation import escalation, reviews, timer_turns
from bot.conversation.daily_cycle import prompt as daily_prompt
from bot.conversation.daily_cycle.replies import on_reply
from bot.conversation.flow import ConversationFlow
from bot.conversation.learned import LearnedLine
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
from bot.services import stage2
from bot.store.event_types.alerts import AlertRaised
from bot.store.reads.reviews import raised_of
from bot.store.services import Services
from bot.studies.catalogue import STUDIES, StudyCatalogue
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


def check_studies(studies: StudyCatalogue) -> None:
    """ConfigError listing every problem of every study under the studies root: a process
    that runs conversations does not start with one (its enrollments would be refused and
    its participants' stage 2 could not run)."""
    problems = studies.startup_problems(None)
    if problems:
        first = (
            f"studies that cannot be used (under {studies.root}); fix each problem below and "
            "check with `tandem study validate`"
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


_STAGE2: dict[tuple[str | None, Path], stage2.Stage2] = {}


def study_stage2(settings: Settings, root: Path = STUDIES) -> stage2.Stage2:
    """The studies' second stages as the worker runs them (bot.services.stage2), for the
    studies under `root` read against the interventions catalogue: one per process (the
    worker threads share what it read)."""
    key = (settings.master_key, root)
    if key not in _STAGE2:
        studies = StudyCatalogue(root, intervention_catalogue())
        _STAGE2[key] = stage2.Stage2(studies, settings.master_key)
    return _STAGE2[key]


def build_handler(
    services: Services,
    *,
    client: ChatClient | None = None,
    modules: Mapping[str, Module] | None = None,
    learned_line: Callable[[], LearnedLine] | None = None,
    load_learned: bool = False,
) -> Handler:
    """The handler that runs every participant's turns; built once per process. `client` and
    `modules` replace the configured LLM client and the module table (`tandem chat` does);
    `learned_line` loads another learned crisis line than the shipped model (a test's double).

    `load_learned`: a long-running worker loads the learned crisis line now rather than at its
    first message, so its memory is taken (and frozen with the start-up heap) before it takes
    work, and a model that cannot load stops it from starting (ConfigError) instead of leaving
    every turn to the phrase screen alone."""
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
    # A study's stage-2 timer changes nothing in the conversation: the worker's commit runs
    # stage 2 (bot.services.stage2) in the turn's transaction.
    timer_turns.register(stage2.KIND, lambda fired: [])
    timer_turns.register(
        reviews.KIND,
        reviews.review_escalation_handler(
            lambda alert_id: _review(services, alert_id), settings.review_escalate_minutes
        ),
        always=True,  # a review item escalates whatever became of the participant since
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
        learned_line=learned_line,
    )
    if load_learned and flow.learned is not None:
        try:
            loaded = flow.learned.line.get()
        except Exception as exc:  # any failure to load is the same refusal
            raise ConfigError(
                [
                    f"the learned crisis line (SAFETY_LEARNED) could not load: {exc!r}. "
                    "Reinstall Tandem (`make setup`) or set SAFETY_LEARNED=off to screen with "
                    "the phrase list (and the LLM classifier, if configured) alone"
                ]
            ) from exc
        log.info("learned crisis line loaded: model %s", loaded.version)
    log.info("conversation ready: modules %s, %r", ", ".join(modules), screen)
    return flow.handle


def _review(services: Services, alert_id: str) -> tuple[Mapping[str, Any], AlertRaised] | None:
    """A review item's alerts row and its opened `alert.raised` (None: no such review item)."""
    row = services.store.projection_row("alerts", alert_id) if alert_id else None
    if row is None or row["severity"] != "review":
        return None
    raised = raised_of(services.store, [row]).get(alert_id)
    return (row, raised) if raised is not None else None
