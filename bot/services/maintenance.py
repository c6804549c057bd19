"""`tandem maintenance`: the owner's periodic step that makes erasures final in the database
files. The app role destroys a data key at erasure (`tandem_erase_data_key`) but cannot
VACUUM: the key's old row version stays in `data_keys`' pages until this step rewrites the
table. Run by cron with the owner's DATABASE_URL (docs/operations.md); each run recorded as
`maintenance.completed` on the system stream. It first destroys the keys of the unknown senders
whose UNKNOWN_SENDER_RETENTION_DAYS ran out (as the scheduler leader does), so that the same
run makes their erasure final too."""

from __future__ import annotations

from bot.services import sender_erasure
from bot.services.refusal import Refused
from bot.store import maintenance
from bot.store.event_store import EventStore
from bot.store.event_types.maintenance import MaintenanceCompleted
from bot.store.events import SYSTEM_STREAM, NewEvent

# How long a run waits for transactions older than the latest erasure to end.
WAIT_SECONDS = 60.0


def run(
    store: EventStore,
    actor: str,
    wait: float = WAIT_SECONDS,
    retention_days: int | None = None,
) -> MaintenanceCompleted:
    """Destroy the keys of unknown senders older than `retention_days` (None: none), then
    rewrite `data_keys` and VACUUM every other table; refuses (`Refused`) when the role
    connected is not the owner (the app role), since then nothing could be made final."""
    if not maintenance.owns_keys(store.engine):
        try:
            maintenance.scrub(store.engine, require_owner=True)  # says who is connected
        except maintenance.NotOwner as exc:
            raise Refused(str(exc), None, "conflict") from None
    expired = []
    if retention_days is not None:
        now = store.clock.now()
        expired = sender_erasure.expire(store, now, retention_days, actor, scrub=False)
    try:
        done = maintenance.scrub(store.engine, require_owner=True, wait=wait)
    except maintenance.NotOwner as exc:
        raise Refused(str(exc), None, "conflict") from None
    with store.reading() as conn:
        erased = maintenance.erased_key_count(conn)
    record = MaintenanceCompleted(
        rewritten=done.rewritten,
        vacuumed=done.tables,
        skipped=done.skipped,
        erased_keys=erased,
        pending_erasures=done.pending,
        expired_senders=len(expired),
    )
    store.append(SYSTEM_STREAM, [NewEvent(record, meta={"actor": actor})])
    return record
