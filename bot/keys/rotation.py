"""Master key rotation: every data key re-wrapped, every phone hash re-keyed (participants' and
unknown senders'), every staff TOTP secret re-sealed, in one transaction. The data keys
themselves (and so every sealed event) do not change."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import insert, inspect, select, update

from bot.core.addresses import parse_address
from bot.core.keys import SealedElsewhere, StaffSecrets
from bot.store import key_check, staff_totp
from bot.store.event_store import EventStore, Transaction
from bot.store.events import sender_stream
from bot.store.personal import ERASED
from bot.store.schema import data_keys, participant_phones, participants, sender_phones
from bot.store.sealing import SealedWithoutKey, Sealer


@dataclass
class Rotated:
    rewrapped: int
    phones: int
    key_id: str
    staff_secrets: int = 0  # TOTP secrets re-sealed
    unopened: list[str] = field(default_factory=list)  # emails whose secret opens under neither


def rotate(store: EventStore, new_master_key: str) -> Rotated:
    """Re-wrap the data keys wrapped by the store's master key under `new_master_key`."""
    old, new = store.sealer, Sealer(new_master_key)
    if not old.enabled:
        raise SealedWithoutKey("rotation needs the current master key (TANDEM_MASTER_KEY)")
    assert new.key_id is not None
    rewrapped = phones = 0
    with store.transaction() as tx:
        # First, while the data keys are still wrapped by the old master key (it opens them).
        phones += _rekey_senders(tx, new)
        resealed, unopened = _reseal_staff_secrets(tx, old, new)
        rows = tx.conn.execute(select(data_keys).where(data_keys.c.wrapped.isnot(None))).all()
        for row in rows:
            if row.master_key_id == new.key_id:
                continue  # done by an earlier, interrupted rotation
            data_key = old.unwrap(row.participant_id, row)
            tx.conn.execute(
                update(data_keys)
                .where(data_keys.c.participant_id == row.participant_id)
                .values(wrapped=new.wrap(row.participant_id, data_key), master_key_id=new.key_id)
            )
            rewrapped += 1
        query = select(participant_phones.c.participant_id, participants.c.phone).join(
            participants, participants.c.participant_id == participant_phones.c.participant_id
        )
        for pid, phone in tx.conn.execute(query).all():
            tx.conn.execute(
                update(participant_phones)
                .where(participant_phones.c.participant_id == pid)
                .values(phone_hmac=new.phones.digest(phone))
            )
            phones += 1
        key_check.record(tx.conn, new, store.clock.now())
    return Rotated(rewrapped, phones, new.key_id, resealed, unopened)


def _reseal_staff_secrets(tx: Transaction, old: Sealer, new: Sealer) -> tuple[int, list[str]]:
    """Seal each staff TOTP secret under the new master key, so that retiring the old one
    locks nobody out: how many, and the accounts whose secret opens under neither key (sealed
    under a key retired before, unrotated: `tandem users reset-2fa`). One that
    opens under the new key already (a rotation run again) is left as it is."""
    assert old.staff_secrets is not None and new.staff_secrets is not None
    done, unopened = 0, []
    for email, sealed in staff_totp.sealed_in(tx):
        if _opened(new.staff_secrets, email, sealed) is not None:
            continue
        secret = _opened(old.staff_secrets, email, sealed)
        if secret is None:
            unopened.append(email)
            continue
        staff_totp.reseal_in(tx, email, new.staff_secrets.seal(email, secret))
        done += 1
    return done, unopened


def _opened(secrets: StaffSecrets, email: str, sealed: str) -> str | None:
    try:
        return secrets.unseal(email, sealed)
    except SealedElsewhere:
        return None


def _rekey_senders(tx: Transaction, new: Sealer) -> int:
    """Re-key each unknown sender's phone hash: the number is read from their first message,
    opened with the current master key (the hash alone cannot be re-keyed)."""
    done = 0
    for (sender_id,) in tx.conn.execute(select(sender_phones.c.sender_id)).all():
        first = next(iter(tx.load(sender_stream(sender_id))), None)
        address = getattr(first.data, "from_address", None) if first is not None else None
        if not address or address == ERASED:
            continue
        tx.conn.execute(
            update(sender_phones)
            .where(sender_phones.c.sender_id == sender_id)
            .values(phone_hmac=new.phones.digest(parse_address(address).e164))
        )
        done += 1
    return done


def index_missing_phones(store: EventStore) -> int:
    """Add the phone hash of every participant who has none (enrolled before hashes were
    kept); returns how many. Cheap when there are none: one query at start. Nothing to do on a
    database not migrated yet (`tandem chat` migrates its own after start)."""
    if not inspect(store.engine).has_table(participant_phones.name):
        return 0
    query = (
        select(participants.c.participant_id, participants.c.phone)
        .outerjoin(
            participant_phones,
            participant_phones.c.participant_id == participants.c.participant_id,
        )
        .where(participant_phones.c.participant_id.is_(None), participants.c.status != "erased")
    )
    with store.transaction() as tx:
        missing = tx.conn.execute(query).all()
        for pid, phone in missing:
            digest = store.sealer.phones.digest(phone)
            tx.conn.execute(
                insert(participant_phones).values(participant_id=pid, phone_hmac=digest)
            )
    return len(missing)
