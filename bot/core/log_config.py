"""The one logging configuration of every process (time, level, logger, message), for
`logging.basicConfig` (the CLI's processes) and gunicorn's `logconfig_dict` (the web under the
Procfile), so that the app's INFO lines reach the log under gunicorn too."""

from __future__ import annotations

from typing import Any

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def gunicorn_dict(level: str) -> dict[str, Any]:
    """gunicorn's `logconfig_dict`: the root logger (the app's) and gunicorn's own error log
    in LOG_FORMAT on stderr at `level` (LOG_LEVEL); gunicorn's access log stays off (a request
    line is not needed to trace refusals, which the app logs itself)."""
    level = level.strip().upper() or "INFO"
    if level not in LEVELS:
        raise ValueError(f"LOG_LEVEL must be one of {', '.join(LEVELS)}, not {level!r}")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"app": {"format": LOG_FORMAT}},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "app",
                "stream": "ext://sys.stderr",
            }
        },
        "root": {"level": level, "handlers": ["stderr"]},
        "loggers": {
            "gunicorn.error": {"level": "INFO", "handlers": [], "propagate": True},
            "gunicorn.access": {"level": "WARNING", "handlers": [], "propagate": False},
        },
    }
