"""A worker process for the crash test (run with `python -m`): slow, or fast until work is done."""

from __future__ import annotations

import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

from bot.conversation.turns import Turn
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.runtime.worker import Worker
from bot.store.events import EventData
from tests.conftest import TEST_MASTER_KEY
from tests.e2e.echo import echo


def main(url: str, mode: str, lease_seconds: float, marker: str) -> int:
    services = build_services(
        load_settings({"DATABASE_URL": url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}, env_file=None)
    )

    def slow(turn: Turn) -> list[EventData]:
        Path(marker).write_text(turn.item["work_id"])
        threading.Event().wait(120)  # killed long before this returns
        return echo(turn)

    handler = slow if mode == "slow" else echo
    worker = Worker(services, handler, f"{mode}-worker", lease=timedelta(seconds=lease_seconds))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if worker.run_once() and mode == "fast":
            return 0
        time.sleep(0.1)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]))
