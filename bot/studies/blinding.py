"""Arm codes for blinded studies: a stable, opaque code per arm (`X` and six hex digits of an
HMAC of the arm's name under the study's secret seed), so that an admin or statistician can
tell the arms apart in pages and exports without learning which arm is which."""

from __future__ import annotations

import hashlib
import hmac


def arm_code(seed: bytes, arm: str) -> str:
    """The code that stands for `arm` wherever a blinded study's arm is shown."""
    digest = hmac.new(seed, f"arm-code:{arm}".encode(), hashlib.sha256).hexdigest()
    return "X" + digest[:6].upper()
