"""What around a crisis phrase changes its meaning: clauses, negation, quoted media (pure).

The crisis screen matches phrases; this module decides which matches speak for the writer:
- a message is screened clause by clause, so a negation in one clause ("no, I want to die")
  never reaches into the next;
- a phrase denied by a negation word just before it ("I'm not suicidal", "no quiero morir",
  "je ne veux pas me suicider") does not count, unless the message goes on with a contrast
  ("I'm not suicidal but...") - that hedge is how people often say it, so it stays flagged;
- words inside quotation marks introduced as a song, film, book or show title are not the
  writer's own ("listening to "Suicide Blonde"").
The word lists are per language and deliberately short: each entry widens what is NOT flagged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

# Punctuation that ends a clause only when followed by a space or the end ("kill...myself" is
# one clause, "No, I want to die" is two).
_CLAUSE_BREAK = re.compile(r"[.,;:!?¡¿…]+(?=\s|$)|\s[-–—]+\s|\n")
_QUOTED = re.compile(r"[\"“”«»„]([^\"“”«»„]{1,200})[\"“”«»„]")

NEGATORS = frozenset(
    {"not", "never", "no", "nunca", "jamas", "jamais", "pas", "nao", "nem", "ni", "ne", "tampoco"}
)
# Words that may stand between a negation and the phrase it denies ("I'm not really going to").
_SCOPE = frozenset(
    (
        "i am is are was were be been being really ever actually going to would will could do "
        "does did definitely certainly seriously even thinking about of planning want "
        "me te se lo la yo estoy estaba voy iba a en pensando pienso quiero queria creo que "
        "realmente je j suis vais veux pense de d vraiment eu estou vou quero penso"
    ).split()
)
_CONTRASTS = frozenset(
    {"but", "though", "although", "however", "pero", "aunque", "sino", "mais", "pourtant"}
    | {"cependant", "porem", "entretanto", "contudo"}
)
# A quotation introduced by one of these (in the same clause) is someone else's words.
MEDIA_CUES = frozenset(
    (
        "song songs lyric lyrics sang sing sings singing listening listened album track "
        "movie film book novel show series episode title titled called named poem play "
        "watching watched reading read karaoke band "
        "cancion canciones letra cantamos cante escuchando escuche pelicula libro serie "
        "titulo viendo disco "
        "chanson chansons paroles chante chantons ecoute jecoute ecoutais livre roman "
        "titre regarde "
        "musica cantei ouvindo ouvi filme livro novela assistindo"
    ).split()
)


def clauses(text: str) -> list[str]:
    """The message cut at sentence and clause punctuation (never inside a word)."""
    return [part for part in _CLAUSE_BREAK.split(text) if part.strip()]


def mask_media_quotes(text: str, fold: Callable[[str], list[str]], mask: str) -> str:
    """Blank out quoted spans introduced as a title, lyric or quotation from media."""

    def replace(match: re.Match[str]) -> str:
        before = fold(text[: match.start()])[-6:]
        return f" {mask} " if MEDIA_CUES.intersection(before) else match.group()

    return _QUOTED.sub(replace, text)


def negated(words_before: Sequence[str]) -> bool:
    """Whether a negation word governs the phrase that follows `words_before`."""
    after: str | None = None
    for word in reversed(words_before):
        if word in NEGATORS:
            # English never negates with "no" before a subject: "no i want to die" is an answer.
            return not (word == "no" and after == "i")
        if word not in _SCOPE:
            return False
        after = word
    return False


def contrasted(words_after: Sequence[str]) -> bool:
    """Whether the rest of the message turns against a denial ("...but I think about it")."""
    return not _CONTRASTS.isdisjoint(words_after)
