"""A long-running process's startup heap, frozen out of CPython's cyclic collector once it is
built (`gc.freeze`), so that no collection walks it again.

Startup leaves about 170,000 objects the collector tracks (modules, classes, SQLAlchemy's
metadata, pydantic's schemas, Jinja's templates), all alive until the process ends. A full
collection walks every one, holding the GIL, so no request is answered meanwhile; frozen, it
walks only what was made since, and the webhooks' ack tail shrinks (docs/performance.md,
Webhook). The frozen objects are never collected: what startup
built lives as long as the process, and what little of it would not is a one-time cost.
Called last before the process starts its threads, by `tandem serve` (both processes),
`tandem worker` and each gunicorn worker (`bot.web.gunicorn_hooks`).
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger(__name__)


def freeze_startup_heap() -> int:
    """Collect what startup left unreachable, then freeze the rest; returns how many objects
    were frozen."""
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.info("froze %d startup objects out of the cyclic collector", frozen)
    return frozen
