"""The background runtime of a process: worker threads, dispatcher threads and the scheduler."""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.channel.messenger import Messenger
from bot.conversation.turns import Handler
from bot.runtime.worker import Worker, turns_at_firing
from bot.store.services import Services

if TYPE_CHECKING:
    from bot.studies.catalogue import StudyCatalogue

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RuntimeOptions:
    workers: int = 2
    dispatchers: int = 1
    scheduler: bool = True


def process_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class Runtime:
    """Starts and stops the threads that turn work items, outbox rows and timers into effects."""

    def __init__(
        self,
        services: Services,
        handler: Handler,
        messenger: Messenger,
        options: RuntimeOptions = RuntimeOptions(),
        studies: StudyCatalogue | None = None,
    ) -> None:
        self.services = services
        self.studies = studies  # whose declared broadcasts the leader makes (None: studies/)
        self.handler = handler
        self.messenger = messenger
        self.options = options
        self.stop_event = threading.Event()
        self.threads: list[threading.Thread] = []

    def start(self) -> None:
        from bot.channel.dispatcher import Dispatcher

        name = process_name()
        for n in range(self.options.workers):
            worker = Worker(self.services, self.handler, f"{name}/worker-{n}")
            self._spawn(f"worker-{n}", worker.run_forever)
        for n in range(self.options.dispatchers):
            dispatcher = Dispatcher(self.services, self.messenger, f"{name}/dispatch-{n}")
            self._spawn(f"dispatcher-{n}", dispatcher.run_forever)
        if self.options.scheduler:
            from bot.core.localtime import parse_quiet_hours
            from bot.interventions.interpreter.applied import quiet_hours_by_intervention
            from bot.runtime.broadcaster import Broadcaster
            from bot.runtime.routing import TURNS_AT_FIRING, study_stage2
            from bot.services.broadcast_sending import QuietRules
            from bot.timers import scheduler

            # Interventions with quiet hours of their own use them instead of QUIET_HOURS.
            quiet = quiet_hours_by_intervention()
            rules = QuietRules(parse_quiet_hours(self.services.settings.quiet_hours), quiet)
            broadcaster = Broadcaster(self.services, f"{name}/broadcaster", quiet=rules)
            self._spawn("broadcaster", broadcaster.run_forever)
            self._spawn(
                "scheduler",
                lambda stop: scheduler.run_forever(
                    self.services,
                    stop,
                    intervention_quiet_hours=quiet,
                    # Decision points: decided as they fire, a batch at a time (one that
                    # sets off a study's stage 2 is left to a worker, which runs it).
                    turns=turns_at_firing(
                        self.handler, TURNS_AT_FIRING, study_stage2(self.services.settings)
                    ),
                    # Declared broadcasts, readiness episodes, operator alerts and unknown
                    # senders' retention: one process (the leader) makes and checks them.
                    on_beat=self._beat,
                ),
            )
        log.info(
            "runtime started: %d workers, %d dispatchers, scheduler %s",
            self.options.workers,
            self.options.dispatchers,
            "campaigning" if self.options.scheduler else "off",
        )

    def _beat(self) -> None:
        """The scheduler leader's periodic work: the studies' declared broadcasts, readiness
        (and operator alerts), then the unknown senders whose UNKNOWN_SENDER_RETENTION_DAYS ran
        out (each erasure recorded). Each runs even if one before it failed."""
        from bot.runtime.routing import intervention_catalogue
        from bot.services import broadcast_schedules, readiness, sender_erasure
        from bot.studies.catalogue import STUDIES, StudyCatalogue

        if self.studies is None:
            self.studies = StudyCatalogue(STUDIES, intervention_catalogue())
        s, now = self.services, self.services.clock.now()
        try:
            broadcast_schedules.tick(
                s.store, self.studies.interventions, self.studies, now, s.settings.operators()
            )
        finally:
            try:
                readiness.check(s.store, s.settings, now)
            finally:
                sender_erasure.expire(
                    s.store, now, s.settings.unknown_sender_retention_days, "retention"
                )

    def _spawn(self, name: str, target: Callable[[threading.Event], None]) -> None:
        thread = threading.Thread(target=target, args=(self.stop_event,), name=name, daemon=True)
        thread.start()
        self.threads.append(thread)

    def stop(self, timeout: float = 10.0) -> None:
        """Ask every thread to finish its current item and wait for them."""
        self.stop_event.set()
        self.services.signals.work.notify()
        self.services.signals.outbox.notify()
        self.services.signals.timers.notify()
        for thread in self.threads:
            thread.join(timeout)
        log.info("runtime stopped")
