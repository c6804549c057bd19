"""The keys derived from TANDEM_MASTER_KEY: one per purpose, never the master key itself.

HKDF-SHA256 (from `cryptography`) with a distinct `info` string per purpose, so that a key
leaked from one use (a console cookie key, say) tells nothing about the others: `wrap` encrypts
the per-participant data keys, `phone` keys the HMAC of phone numbers used for lookups,
`session` signs the console's cookies, and `totp` seals the staff's TOTP secrets.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

MIN_MASTER_KEY_LENGTH = 32
_INFO = {
    "wrap": b"tandem data-key wrapping v1",
    "phone": b"tandem phone lookup hmac v1",
    "session": b"tandem console session v1",
    "totp": b"tandem staff totp secret v1",
}
# Without a master key (development, tests) phone numbers are still looked up by a hash, under
# this fixed, public key: the lookup path is the same, and it protects nothing.
UNKEYED_PHONE_KEY = b"tandem phone lookup without a master key"


def generate_master_key() -> str:
    """A new master key: 32 random bytes, urlsafe base64 (44 characters)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode("ascii")


def derive(master_key: str, purpose: str) -> bytes:
    """The 32-byte key for `purpose` ("wrap", "phone", "session" or "totp") under
    `master_key`."""
    if len(master_key) < MIN_MASTER_KEY_LENGTH:
        raise ValueError(f"TANDEM_MASTER_KEY must be at least {MIN_MASTER_KEY_LENGTH} characters")
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO[purpose])
    return hkdf.derive(master_key.encode("utf-8"))


def key_id(master_key: str) -> str:
    """A short, public fingerprint of the master key (which key wrapped a data key)."""
    return check_value(master_key)[:16]


def check_value(master_key: str) -> str:
    """The key check value stored in the database: a process whose master key gives another
    one refuses to start (bot.store.key_check); `key_id` is its first 16 characters."""
    return hashlib.sha256(derive(master_key, "wrap")).hexdigest()


@dataclass(frozen=True)
class PhoneHasher:
    """The keyed hash (HMAC-SHA256) under which phone numbers are looked up."""

    key: bytes = UNKEYED_PHONE_KEY

    @classmethod
    def for_master_key(cls, master_key: str | None) -> PhoneHasher:
        return cls(derive(master_key, "phone")) if master_key else cls()

    def digest(self, phone: str) -> str:
        return hmac.new(self.key, phone.encode("utf-8"), hashlib.sha256).hexdigest()


class SealedElsewhere(Exception):
    """A staff secret that does not open with this master key (sealed under another)."""


@dataclass(frozen=True)
class StaffSecrets:
    """Seals the staff's TOTP secrets: AES-GCM under the master key's `totp` key, the account's
    email as associated data (a row moved to another account does not open). `tandem keys
    rotate` opens each with the old key and seals it again with the new one."""

    key: bytes

    @classmethod
    def for_master_key(cls, master_key: str) -> StaffSecrets:
        return cls(derive(master_key, "totp"))

    def seal(self, email: str, secret: str) -> str:
        nonce = os.urandom(12)
        sealed = AESGCM(self.key).encrypt(nonce, secret.encode(), email.encode())
        return base64.urlsafe_b64encode(nonce + sealed).decode()

    def unseal(self, email: str, sealed: str) -> str:
        raw = base64.urlsafe_b64decode(sealed)
        try:
            return AESGCM(self.key).decrypt(raw[:12], raw[12:], email.encode()).decode()
        except InvalidTag:
            raise SealedElsewhere("the TOTP secret does not open with this master key") from None
