"""A database outage, logged once per process rather than once per thread per retry.

While the database is down every background loop (workers, dispatchers, the scheduler, the
broadcaster) fails at each try; logging each failure with its traceback buried the log (194
tracebacks in a 12 s PostgreSQL stop). A failure that means "the database cannot be reached"
(`is_outage`) is reported here instead: the first one logs that the outage started, later ones
log "still unavailable" at most once per `EVERY` seconds, and the first success of a try that
began after the outage was seen logs that the database is back and how long it was gone. (A try
that began before, a statement already on its way when the connection dropped, proves nothing
about the database now: counting it logged a false "back" and a second outage.) The lines name
the error's class only: a driver's message can quote a statement and its values.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

log = logging.getLogger(__name__)

# At most one "still unavailable" line in this many seconds, per process.
EVERY = 60.0


def is_outage(exc: BaseException) -> bool:
    """Whether `exc` says the database cannot be reached (refused or lost connection, the
    pool's wait for one ran out), rather than that a statement or the code failed."""
    if isinstance(exc, OperationalError | PoolTimeout):
        return True
    return isinstance(exc, DBAPIError) and bool(exc.connection_invalidated)


class Outage:
    """The process's view of whether the database is down; safe to call from any thread."""

    def __init__(
        self, monotonic: Callable[[], float] = time.monotonic, every: float = EVERY
    ) -> None:
        self.monotonic = monotonic
        self.every = every
        self._lock = threading.Lock()
        self._since: float | None = None  # when the current outage was first seen
        self._logged = 0.0  # when a line about it was last logged
        self._failures = 0

    @property
    def down(self) -> bool:
        return self._since is not None

    def failed(self, exc: BaseException, where: str) -> None:
        """A try in `where` (a loop's name) failed with an outage error."""
        with self._lock:
            now = self.monotonic()
            self._failures += 1
            if self._since is None:
                self._since = self._logged = now
                log.error(
                    "database unavailable (%s in %s); background work retries quietly",
                    type(exc).__name__,
                    where,
                )
            elif now - self._logged >= self.every:
                self._logged = now
                log.error(
                    "database still unavailable after %.0f s (%d failed tries; last %s)",
                    now - self._since,
                    self._failures,
                    type(exc).__name__,
                )

    def began(self) -> float:
        """The time a try begins, to hand to `succeeded` when it ends."""
        return self.monotonic()

    def succeeded(self, began: float) -> None:
        """A try that began at `began` reached the database: if it was down, and the try began
        after the outage was seen, say it is back."""
        if self._since is None:  # the common case: no lock
            return
        with self._lock:
            if self._since is None or began < self._since:
                return
            log.warning(
                "database available again after %.0f s (%d failed tries)",
                self.monotonic() - self._since,
                self._failures,
            )
            self._since, self._failures = None, 0


# The process's one outage (every loop in it reports here).
OUTAGE = Outage()


def failed(exc: BaseException, where: str) -> None:
    """An outage error in `where`, reported to the process's OUTAGE."""
    OUTAGE.failed(exc, where)


def began() -> float:
    """When a background loop's try begins (pass it to `succeeded`)."""
    return OUTAGE.began()


def succeeded(began: float) -> None:
    """A background loop's try, begun at `began`, reached the database."""
    OUTAGE.succeeded(began)


def loop_failed(logger: logging.Logger, exc: BaseException, where: str) -> None:
    """What a background loop's broad except does: an outage is reported to OUTAGE (one line a
    minute); any other failure is logged with its traceback on `logger`, as a bug."""
    if is_outage(exc):
        OUTAGE.failed(exc, where)
    else:
        logger.error("%s: loop error", where, exc_info=exc)
