"""Crypto-shredding: the personal fields of a participant's events are sealed with that
participant's data key (AES-256-GCM from `cryptography`), and an erased key leaves `[erased]`.

The store seals at append and opens at read, so every layer above sees plain payloads. A
sealed payload keeps its plain fields and holds the rest in one `_sealed` entry:
`{"f": [field names], "c": base64(nonce ‖ ciphertext)}`, the ciphertext bound to the event's
id (GCM associated data), so it cannot be moved to another event. Data keys live in the
`data_keys` table, outside the append-only `events`, each wrapped (AES-GCM again, bound to the
participant id) by a key derived from TANDEM_MASTER_KEY. Erasing a participant destroys their
wrapped key: the events stay, and their personal fields read as `[erased]` for ever. An unknown
sender's stream (`sender:<id>`) is sealed the same way under a key of its own
(`bot.store.events.key_owner`), destroyed by `tandem erase --phone` or by retention.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from sqlalchemy import Connection, insert, select, text, update

from bot.core import keys
from bot.store.database import json_loads
from bot.store.events import REGISTRY, EventData, key_owner
from bot.store.personal import ERASED, erased_value, personal_fields
from bot.store.schema import data_keys

SEALED = "_sealed"
# Another process may erase a participant: a key read from the table is trusted this long
# (docs/operations.md: an erasure reaches other running processes within this time).
KEY_CACHE_SECONDS = 5.0
# The most participants whose keys `Sealer.preload` reads in one query (SQLite before 3.32
# takes at most 999 parameters).
PRELOAD_BATCH = 500
_ERASED = object()


class SealedWithoutKey(Exception):
    """A sealed event was read, or a data key used, without the master key that opens it."""


@dataclass(slots=True)
class Opened:
    """A payload as the layers above see it, and what its sealing kept aside."""

    data: dict[str, Any]
    escaped: dict[str, str]
    erased: list[str]


def _decrypted(key: Any, event_id: str, sealed: str) -> dict[str, Any]:
    """The sealed fields (and what was kept aside) of one event's ciphertext, by its data key."""
    raw = binascii.a2b_base64(sealed)  # what base64.b64decode runs, without its checks
    try:
        blob = key.decrypt(raw[:12], raw[12:], event_id.encode())
    except InvalidTag:
        raise SealedWithoutKey(f"event {event_id}: sealed data fails its check") from None
    try:
        return orjson.loads(blob)  # UTF-8, as nearly every blob is
    except orjson.JSONDecodeError:
        # A lone surrogate, which the sealing keeps with surrogatepass (not UTF-8): the
        # engine's reader of stored JSON, as for any stored text.
        return json_loads(blob.decode("utf-8", "surrogatepass"))


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _head(path: str) -> str:
    """The top-level field of a dotted path from `storable_json` (`media[0].url` -> media)."""
    return path.split(".", 1)[0].split("[", 1)[0]


class Sealer:
    """Seals and opens payloads with per-participant data keys; `master_key` None means the
    store writes plain payloads (development and tests without TANDEM_MASTER_KEY)."""

    def __init__(self, master_key: str | None) -> None:
        self.enabled = master_key is not None
        self.key_id = keys.key_id(master_key) if master_key else None
        self.check_value = keys.check_value(master_key) if master_key else None
        self._wrap = AESGCM(keys.derive(master_key, "wrap")) if master_key else None
        self.phones = keys.PhoneHasher.for_master_key(master_key)
        # The staff's TOTP secrets (staff_totp), re-sealed with the data keys by a rotation.
        self.staff_secrets = keys.StaffSecrets.for_master_key(master_key) if master_key else None
        self._cache: dict[str, tuple[Any, float]] = {}
        self._lock = threading.Lock()

    # Sealing ------------------------------------------------------------------------------

    def seal(
        self,
        conn: Connection,
        stream_id: str,
        event_id: str,
        model: type[EventData],
        data: dict[str, Any],
        escaped: Mapping[str, str],
        now: datetime,
        fresh: dict[str, Any],
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """The payload to store, and the escaped originals that may go in the plain meta.
        `fresh` holds the data keys made in this transaction (`remember` them after commit)."""
        pid = key_owner(stream_id)
        if not self.enabled or pid is None:
            return data, dict(escaped)
        names = sorted(n for n in personal_fields(model) if data.get(n) is not None)
        if not names:
            return data, dict(escaped)
        secret = {n: data[n] for n in names}
        kept_aside = {p: v for p, v in escaped.items() if _head(p) in secret}
        if kept_aside:
            secret["_escaped"] = kept_aside
        plain = {k: v for k, v in data.items() if k not in secret}
        meta_escaped = {p: v for p, v in escaped.items() if p not in kept_aside}
        key = fresh.get(pid) or self._data_key(conn, pid, create=now, fresh=fresh)
        if key is _ERASED:  # the participant was erased: what arrives now is not kept at all
            plain[SEALED] = {"f": names, "c": None}
            return plain, meta_escaped
        nonce = os.urandom(12)
        blob = json.dumps(secret, separators=(",", ":"), ensure_ascii=False)
        sealed = key.encrypt(nonce, blob.encode("utf-8", "surrogatepass"), event_id.encode())
        plain[SEALED] = {"f": names, "c": _b64(nonce + sealed)}
        return plain, meta_escaped

    def open(
        self,
        conn: Connection | None,
        stream_id: str,
        event_id: str,
        event_type: str,
        data: Mapping[str, Any],
    ) -> Opened:
        """The plain payload of a stored one (its personal fields `[erased]` if the key is)."""
        if SEALED not in data:
            return Opened(dict(data), {}, [])
        plain = dict(data)
        sealed = plain.pop(SEALED)
        pid = key_owner(stream_id)
        if not self.enabled:
            raise SealedWithoutKey(
                f"event {event_id} holds sealed personal data: set TANDEM_MASTER_KEY to read it"
            )
        key = _ERASED if sealed["c"] is None or pid is None else self._data_key(conn, pid)
        if key is _ERASED:
            model = REGISTRY.get(event_type)
            for name in sealed["f"]:
                plain[name] = erased_value(model, name) if model else ERASED
            return Opened(plain, {}, list(sealed["f"]))
        secret = _decrypted(key, event_id, sealed["c"])
        escaped = secret.pop("_escaped", {})
        plain.update(secret)
        return Opened(plain, escaped, [])

    def opening_key(self, conn: Connection | None, stream_id: str) -> Any:
        """The data key that opens the sealed payloads of `stream_id` now, for `open_with`; None
        where `open` itself must be called (no master key, not a participant's stream, the key
        erased or gone)."""
        pid = key_owner(stream_id)
        if not self.enabled or pid is None:
            return None
        key = self._data_key(conn, pid)
        return None if key is _ERASED else key

    @staticmethod
    def open_with(key: Any, event_id: str, data: Mapping[str, Any]) -> dict[str, Any] | None:
        """`open(...).data` of a sealed payload, by `key` (`opening_key`'s), where the sealing
        kept nothing aside: None where `open` must be called (its fields erased, or originals
        kept aside). For reads of many rows, which look a stream's key up once rather than for
        each row (an export's or a replay's)."""
        sealed = data[SEALED]
        if sealed["c"] is None:
            return None
        secret = _decrypted(key, event_id, sealed["c"])
        if "_escaped" in secret:
            return None
        plain = dict(data)
        del plain[SEALED]
        plain.update(secret)
        return plain

    def opens(self, conn: Connection | None, pid: str) -> bool:
        """Whether the participant's sealed fields open (their data key is not erased), as
        `open` would find it now."""
        return self.enabled and self._data_key(conn, pid) is not _ERASED

    # Data keys ----------------------------------------------------------------------------

    def _data_key(
        self,
        conn: Connection | None,
        pid: str,
        create: datetime | None = None,
        fresh: dict[str, Any] | None = None,
    ) -> Any:
        """The participant's data key (an AESGCM), `_ERASED`, or a new one (put in `fresh`)
        when `create` (the time) is given and there is none."""
        now = time.monotonic()
        cached = self._trusted(pid, now)  # one dict read: atomic, and no lock on every open
        if cached is not None:
            return cached
        row = self._read_key(conn, pid)
        if row is None:
            if create is None:
                # A sealed event whose key row is gone entirely reads as erased.
                return _ERASED
            fresh_key = AESGCM.generate_key(bit_length=256)
            conn.execute(  # type: ignore[union-attr]  # seal, which creates keys, always passes a conn
                insert(data_keys).values(
                    participant_id=pid,
                    wrapped=self.wrap(pid, fresh_key),
                    master_key_id=self.key_id,
                    created_at=create,
                    erased_at=None,
                )
            )
            made = AESGCM(fresh_key)
            if fresh is not None:
                fresh[pid] = made
            return made
        key = self._key_of(pid, row)
        with self._lock:
            self._cache[pid] = (key, now)
        return key

    def _trusted(self, pid: str, now: float) -> Any:
        """The cached key of `pid` (or `_ERASED`) if read less than KEY_CACHE_SECONDS ago, else
        None. It reads the cache once (`dict.get`, atomic): no lock is needed for it, and
        writers replace an entry whole under `self._lock`."""
        cached = self._cache.get(pid)
        return cached[0] if cached is not None and now - cached[1] < KEY_CACHE_SECONDS else None

    def _key_of(self, pid: str, row: Any) -> Any:
        """The data key a `data_keys` row holds: an AESGCM, or `_ERASED`."""
        return _ERASED if row.wrapped is None else AESGCM(self.unwrap(pid, row))

    def preload(self, conn: Connection, pids: Iterable[str]) -> None:
        """Read the data keys of these participants that are not cached, in one query for
        each `PRELOAD_BATCH`, and cache them as `_data_key` would (the same time to trust them):
        for reads of many participants' events (an export, a replay), where a query of its own
        for each participant's key cost more than opening all of their events. A key that is
        missing or fails to unwrap is left for `_data_key`, which says so at the event."""
        if not self.enabled:
            return
        now = time.monotonic()
        with self._lock:
            wanted = sorted(pid for pid in set(pids) if self._trusted(pid, now) is None)
        for start in range(0, len(wanted), PRELOAD_BATCH):
            chunk = wanted[start : start + PRELOAD_BATCH]
            query = select(data_keys).where(data_keys.c.participant_id.in_(chunk))
            found: dict[str, Any] = {}
            for row in conn.execute(query):
                pid = row.participant_id
                try:
                    found[pid] = self._key_of(pid, row)
                except SealedWithoutKey:
                    continue
            with self._lock:
                for pid, key in found.items():
                    self._cache[pid] = (key, now)

    def _read_key(self, conn: Connection | None, pid: str) -> Any:
        query = select(data_keys).where(data_keys.c.participant_id == pid)
        if conn is not None:
            return conn.execute(query).first()
        raise SealedWithoutKey("no connection to read a data key with")

    def wrap(self, pid: str, data_key: bytes) -> str:
        assert self._wrap is not None
        nonce = os.urandom(12)
        return _b64(nonce + self._wrap.encrypt(nonce, data_key, pid.encode()))

    def unwrap(self, pid: str, row: Any) -> bytes:
        assert self._wrap is not None
        raw = base64.b64decode(row.wrapped)
        try:
            return self._wrap.decrypt(raw[:12], raw[12:], pid.encode())
        except InvalidTag:
            raise SealedWithoutKey(
                f"the data key of participant {pid} was wrapped by master key "
                f"{row.master_key_id}, not by the configured one ({self.key_id})"
            ) from None

    def destroy(self, conn: Connection, pid: str, now: datetime) -> bool:
        """Destroy the participant's data key (True if there was one to destroy), leaving a
        row with no key (so that nothing arriving later is sealed under a new one). On
        PostgreSQL through `tandem_erase_data_key` (migration 0021), the one path by which the
        app role, which may not UPDATE `data_keys`, destroys a key: it refuses unless the
        participant's `participant.erased` is recorded in this transaction."""
        if conn.dialect.name == "postgresql":
            done = conn.execute(
                text("SELECT tandem_erase_data_key(:pid, :at)"), {"pid": pid, "at": now}
            ).scalar_one()
            self.forget(pid)
            return bool(done)
        done = conn.execute(
            update(data_keys)
            .where(data_keys.c.participant_id == pid, data_keys.c.wrapped.isnot(None))
            .values(wrapped=None, erased_at=now)
        ).rowcount
        if not done:
            exists = conn.execute(
                select(data_keys.c.participant_id).where(data_keys.c.participant_id == pid)
            ).first()
            if exists is None:  # never had one (erased before any sealed event): mark it
                conn.execute(
                    insert(data_keys).values(
                        participant_id=pid,
                        wrapped=None,
                        master_key_id=self.key_id,
                        created_at=now,
                        erased_at=now,
                    )
                )
        self.forget(pid)
        return bool(done)

    def remember(self, made: Mapping[str, Any]) -> None:
        """Cache the data keys a committed transaction made."""
        now = time.monotonic()
        with self._lock:
            for pid, key in made.items():
                self._cache[pid] = (key, now)

    def forget(self, pid: str) -> None:
        with self._lock:
            self._cache.pop(pid, None)
