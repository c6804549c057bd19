"""A process that sends broadcasts (the broadcaster and one dispatcher, and with
BROADCAST_PROCESS_WORKERS=n that many workers, for broadcasts that start a step) until it is
killed: `python -m tests.services.broadcast_process`, configured by the environment."""

from __future__ import annotations

import os
import threading

from bot.channel.dispatcher import Dispatcher
from bot.channel.factory import build_messenger
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.runtime.broadcaster import Broadcaster
from bot.runtime.routing import build_handler
from bot.runtime.worker import Worker


def main() -> None:
    settings = load_settings()
    services = build_services(settings)
    stop = threading.Event()
    broadcaster = Broadcaster(services, "test/broadcaster")
    dispatcher = Dispatcher(services, build_messenger(settings), "test/dispatcher")
    threading.Thread(target=broadcaster.run_forever, args=(stop,), daemon=True).start()
    workers = int(os.environ.get("BROADCAST_PROCESS_WORKERS") or 0)
    if workers:
        handler = build_handler(services)
        for n in range(workers):
            worker = Worker(services, handler, f"test/worker-{n}")
            threading.Thread(target=worker.run_forever, args=(stop,), daemon=True).start()
    dispatcher.run_forever(stop, idle_wait=0.05)


if __name__ == "__main__":
    main()
