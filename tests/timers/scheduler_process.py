"""A scheduler process for the multi-process tests: `python -m tests.timers.scheduler_process`.

Campaigns for leadership with `bot.timers.scheduler.run_forever` on the given database and
writes one JSON line to stdout each time it becomes (or stops being) the leader. SIGTERM stops
it cleanly; the tests also SIGKILL it.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
import time
from datetime import timedelta

from bot.core.clock import SystemClock
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.timers.leadership import Leadership, leadership_for
from bot.timers.scheduler import run_forever
from tests.conftest import TEST_MASTER_KEY


class Reporting:
    """A leadership that says on stdout when this process gains or loses it."""

    def __init__(self, inner: Leadership, name: str) -> None:
        self.inner = inner
        self.name = name
        self.ttl = inner.ttl
        self.leading = False

    def _say(self, what: str) -> None:
        line = json.dumps({"event": what, "name": self.name, "at": time.time()})
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def acquire(self) -> bool:
        got = self.inner.acquire()
        if got and not self.leading:
            self._say("leader")
        self.leading = got
        return got

    def renew(self) -> bool:
        kept = self.inner.renew()
        if not kept and self.leading:
            self._say("lost")
        self.leading = kept
        return kept

    def release(self) -> None:
        self.inner.release()
        self.leading = False


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("database_url")
    parser.add_argument("--name", default="scheduler")
    parser.add_argument("--lease", default="2")
    parser.add_argument("--sweep", default="0.5")
    parser.add_argument("--grace", default="")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    settings = load_settings(
        {
            "DATABASE_URL": args.database_url,
            "SCHEDULER_LEASE_SECONDS": args.lease,
            "TIMER_SWEEP_SECONDS": args.sweep,
            "TIMER_GRACE": args.grace,
            "TANDEM_MASTER_KEY": TEST_MASTER_KEY,  # the parent's store seals
        },
        env_file=None,
    )
    services = build_services(settings, clock=SystemClock())
    ttl = timedelta(seconds=settings.scheduler_lease_seconds)
    leadership = Reporting(
        leadership_for(services.store.engine, services.clock, ttl, holder=args.name), args.name
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    run_forever(services, stop, leadership=leadership)
    services.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
