"""The secret seed of a study and the deterministic random streams drawn from it.

The seed is HMAC-SHA256(TANDEM_MASTER_KEY, "study-seed:" + slug) unless the statistician
provides one; staff who see the code, the study file and every event still cannot predict the
next allocation without it, and an auditor who holds it regenerates every one. Each draw is
HMAC-SHA256(seed, "<label>:<counter>") read as a 64-bit integer, so any block or draw can be
regenerated on its own (labels: docs/studies.md).
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field

MIN_PROVIDED_SEED = 16
_WORD = 2**64


def study_seed(slug: str, master_key: str | None = None, provided: str | None = None) -> bytes:
    """The study's seed: the statistician's own (text of 16 characters or more, used as its
    UTF-8 bytes) or one derived from the master key. ValueError if neither is there."""
    if provided is not None:
        if len(provided) < MIN_PROVIDED_SEED:
            raise ValueError(f"a provided study seed needs {MIN_PROVIDED_SEED}+ characters")
        return provided.encode("utf-8")
    if not master_key:
        raise ValueError(
            "allocation needs a secret: set TANDEM_MASTER_KEY or provide the study's seed"
        )
    message = ("study-seed:" + slug).encode("utf-8")
    return hmac.new(master_key.encode("utf-8"), message, hashlib.sha256).digest()


def seed_fingerprint(seed: bytes) -> str:
    """A public fingerprint of a seed (which seed a check ran with), revealing nothing of it."""
    return hashlib.sha256(b"tandem study seed fingerprint\0" + seed).hexdigest()[:16]


@dataclass
class Stream:
    """Uniform draws for one label (a block, an allocation): draw i is HMAC(seed, label:i)."""

    seed: bytes = field(repr=False)
    label: str
    count: int = 0

    def word(self) -> int:
        """The next 64-bit integer of the stream."""
        message = f"{self.label}:{self.count}".encode()
        self.count += 1
        return int.from_bytes(hmac.new(self.seed, message, hashlib.sha256).digest()[:8], "big")

    def below(self, n: int) -> int:
        """A whole number in [0, n), each equally likely (rejection: no modulo bias)."""
        if n < 1:
            raise ValueError("below(n) needs n >= 1")
        limit = _WORD - _WORD % n
        while True:
            value = self.word()
            if value < limit:
                return value % n

    def uniform(self) -> float:
        """A number in [0, 1) with 53 random bits."""
        return (self.word() >> 11) / 2**53
