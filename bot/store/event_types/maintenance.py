"""Maintenance: the database files rewritten by the schema's owner (`tandem maintenance`)."""

from __future__ import annotations

from bot.store.events import EventData, event, fields


@event("maintenance.completed")
class MaintenanceCompleted(EventData):
    """`tandem maintenance` rewrote the tables (on the system stream; `meta.actor` says who):
    from then on no destroyed data key is left in `data_keys`' files."""

    personal = fields()
    plain = fields("rewritten", "vacuumed", "skipped")

    rewritten: list[str]  # tables written anew (VACUUM FULL): data_keys
    vacuumed: list[str]  # tables whose dead row versions were freed (VACUUM)
    skipped: list[str] = []
    erased_keys: int  # data keys destroyed so far (all erasures, whenever)
    # erasures a transaction older than them kept from the rewrite: the next run's
    pending_erasures: int = 0
    # unknown senders whose keys this run destroyed (UNKNOWN_SENDER_RETENTION_DAYS ran out)
    expired_senders: int = 0
