"""SMS encoding, segment counting, and splitting bodies that exceed Twilio's 1600-character cap."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

Encoding = Literal["GSM-7", "UCS-2"]

# GSM 03.38 default alphabet (one septet each). ESC (0x1B) is left out: it only introduces the
# extension table and is never a character a participant types.
GSM7_BASIC = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
# GSM 03.38 extension table: each costs two septets (ESC + the character).
GSM7_EXTENSION = frozenset("\f^{}\\[~]|€")
_GSM7 = GSM7_BASIC | GSM7_EXTENSION

SINGLE_LIMIT = {"GSM-7": 160, "UCS-2": 70}
PART_LIMIT = {"GSM-7": 153, "UCS-2": 67}  # a concatenated part loses 6 bytes to its header
MAX_BODY = 1600

_PARAGRAPH = re.compile(r"\n[^\S\n]*\n")  # cut at the match start
_SENTENCE = re.compile(r"[.!?…][\"'”’)\]]*\s|\n")  # cut at the whitespace that ends the match
_SPACE = re.compile(r"\s")  # cut at the match start


def encoding(text: str) -> Encoding:
    """The encoding a carrier uses: GSM-7 if every character is in GSM 03.38, else UCS-2."""
    return "GSM-7" if _GSM7.issuperset(text) else "UCS-2"


def count_segments(text: str) -> int:
    """How many SMS segments `text` is billed as; an empty body is 0 segments."""
    if not text:
        return 0
    enc = encoding(text)
    # A character costs at most 2 (an escape pair, a surrogate pair): a short text fits one
    # segment without adding its costs up (most texts; an export counts every message).
    if 2 * len(text) <= SINGLE_LIMIT[enc]:
        return 1
    costs = [_gsm_septets(c) if enc == "GSM-7" else _utf16_units(c) for c in text]
    if sum(costs) <= SINGLE_LIMIT[enc]:
        return 1
    return _pack(costs, PART_LIMIT[enc])


def split_body(text: str, limit: int = MAX_BODY) -> list[str]:
    """Split a body into parts of at most `limit` UTF-16 units, cutting at the gentlest boundary.

    Prefers a paragraph break in the back half of the window, then the last sentence end or line
    break, then the last space; a single word longer than `limit` is cut hard. Whitespace at each
    cut is dropped; nothing else is lost or reordered. UTF-16 units are never fewer than code
    points, so each part fits the cap however Twilio counts characters.
    """
    if limit < 2:
        raise ValueError("limit must be at least 2, to fit a character outside the BMP")
    if not text:
        return []
    if _size(text) <= limit:
        return [text]
    parts: list[str] = []
    rest = text.strip()
    while rest:
        if _size(rest) <= limit:
            parts.append(rest)
            break
        cut = _cut_point(rest, limit)
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    return parts


def _cut_point(rest: str, limit: int) -> int:
    """Where to cut `rest` (which starts with non-whitespace) so the head fits `limit`."""
    fits = _fitting_length(rest, limit)
    window = rest[: fits + 1]  # a cut may fall on the whitespace just past the window
    paragraph = _last_cut(m.start() for m in _PARAGRAPH.finditer(window))
    if paragraph > fits // 2:
        return paragraph
    for cut in (
        _last_cut(m.end() - 1 for m in _SENTENCE.finditer(window)),
        _last_cut(m.start() for m in _SPACE.finditer(window)),
    ):
        if cut > 0:
            return cut
    return fits


def _last_cut(positions: Iterable[int]) -> int:
    return max(positions, default=0)


def _fitting_length(text: str, limit: int) -> int:
    """The number of leading code points of `text` whose UTF-16 size is at most `limit`."""
    used = 0
    for index, char in enumerate(text):
        used += _utf16_units(char)
        if used > limit:
            return index
    return len(text)


def _pack(costs: list[int], capacity: int) -> int:
    """Parts needed when no character (escape pair, surrogate pair) straddles two parts."""
    parts, used = 1, 0
    for cost in costs:
        if used + cost > capacity:
            parts, used = parts + 1, 0
        used += cost
    return parts


def _size(text: str) -> int:
    return sum(_utf16_units(char) for char in text)


def _gsm_septets(char: str) -> int:
    return 2 if char in GSM7_EXTENSION else 1


def _utf16_units(char: str) -> int:
    return 2 if ord(char) > 0xFFFF else 1
