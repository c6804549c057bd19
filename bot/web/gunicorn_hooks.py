"""gunicorn's server hooks for the Procfile's web process:
`--config python:bot.web.gunicorn_hooks`."""

from __future__ import annotations

from typing import Any

from bot.runtime.heap import freeze_startup_heap


def post_worker_init(worker: Any) -> None:
    """Each worker, once it has loaded the app and before it serves: its startup heap frozen out
    of the cyclic collector (bot.runtime.heap), logged in gunicorn's log, which the app's own
    logging does not reach under gunicorn."""
    worker.log.info("froze %d startup objects out of the cyclic collector", freeze_startup_heap())
