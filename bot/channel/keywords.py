"""Opt-out, opt-in and help keywords, matched the way Twilio matches them: the whole message.

A body is a keyword only when, trimmed and case-folded, it is exactly one word of a family;
trailing punctuation ("stop!", " STOP. ") and a leading Spanish "¡"/"¿" are tolerated, while a
keyword inside a sentence ("please don't stop texting me", "STOP PLEASE") is not a keyword.

START includes YES, so a participant answering "yes" to a question classifies as START. Twilio
only lifts a block that exists, and the caller must do the same: apply START to opted-out
participants only, and treat "yes" from anyone else as an ordinary reply.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class Keyword(StrEnum):
    """The three keyword families, valued as Twilio's `OptOutType` webhook parameter."""

    STOP = "STOP"
    START = "START"
    HELP = "HELP"


def _words(words: Iterable[str]) -> frozenset[str]:
    if isinstance(words, str):
        raise TypeError("pass a collection of keywords, not a single string")
    normalized = frozenset(word.strip().casefold() for word in words)
    bad = sorted(word for word in normalized if not word or len(word.split()) != 1)
    if bad:
        raise ValueError(f"a keyword must be a single word, got {bad!r}")
    return normalized


@dataclass(frozen=True)
class Keywords:
    """The words of each family; Twilio's defaults unless configuration extends them."""

    stop: frozenset[str] = frozenset(
        {"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"}
    )
    start: frozenset[str] = frozenset({"START", "YES", "UNSTOP"})
    help: frozenset[str] = frozenset({"HELP", "INFO"})

    def __post_init__(self) -> None:
        for family in ("stop", "start", "help"):
            object.__setattr__(self, family, _words(getattr(self, family)))
        clashes = (self.stop & self.start) | (self.stop & self.help) | (self.start & self.help)
        if clashes:
            raise ValueError(f"a keyword belongs to more than one family: {sorted(clashes)!r}")

    def extended(
        self, *, stop: Iterable[str] = (), start: Iterable[str] = (), help: Iterable[str] = ()
    ) -> Keywords:
        """These families plus more words, e.g. `extended(stop=("PARAR", "BAJA", "ALTO"))`."""
        return Keywords(
            stop=self.stop | _words(stop),
            start=self.start | _words(start),
            help=self.help | _words(help),
        )

    def family(self, word: str) -> Keyword | None:
        """The family a single already-trimmed word belongs to, if any."""
        folded = word.casefold()
        for keyword, words in (
            (Keyword.STOP, self.stop),
            (Keyword.START, self.start),
            (Keyword.HELP, self.help),
        ):
            if folded in words:
                return keyword
        return None


DEFAULT_KEYWORDS = Keywords()


def classify(body: str, keywords: Keywords = DEFAULT_KEYWORDS) -> Keyword | None:
    """The keyword family the whole message is, or None for an ordinary message."""
    word = _strip_trailing_punctuation(body.strip()).lstrip("¡¿").strip()
    if not word or len(word.split()) != 1:
        return None
    return keywords.family(word)


def from_opt_out_type(value: str | None) -> Keyword | None:
    """Read Twilio's `OptOutType` webhook parameter (STOP, START or HELP); else None."""
    try:
        return Keyword((value or "").strip().upper())
    except ValueError:
        return None


def _strip_trailing_punctuation(text: str) -> str:
    end = len(text)
    while end and (text[end - 1].isspace() or unicodedata.category(text[end - 1])[0] == "P"):
        end -= 1
    return text[:end]
