"""gunicorn's settings and server hooks for the Procfile's web process:
`--config python:bot.web.gunicorn_hooks`.

`logconfig_dict` gives the app's loggers a handler: without it gunicorn configures only its own,
and the app's INFO lines (refused tokens, sign-ins) were dropped."""

from __future__ import annotations

import os
from typing import Any

from bot.core.log_config import gunicorn_dict
from bot.runtime.heap import freeze_startup_heap

# The app's logging configuration (bot.core.log_config) at LOG_LEVEL, for gunicorn to apply.
logconfig_dict = gunicorn_dict(os.environ.get("LOG_LEVEL", "INFO"))


def post_worker_init(worker: Any) -> None:
    """Each worker, once it has loaded the app and before it serves: its startup heap frozen out
    of the cyclic collector (bot.runtime.heap, which logs it once through the app's logging
    that `logconfig_dict` gives the worker; logging it here too printed each line twice)."""
    freeze_startup_heap()
