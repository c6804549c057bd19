"""The crisis screen's phrase index finds, from every word of every message, the match the
alternation of every phrase finds: same place, same length, same phrase."""

import random
import re
from pathlib import Path

import pytest
import yaml

from bot.conversation.phrase_index import PhraseIndex, Starts
from bot.conversation.safety import DEFAULT_PHRASES, CrisisScreen, _anchored, fold
from bot.conversation.screen_context import clauses, mask_media_quotes

CORPUS = Path(__file__).resolve().parents[1] / "safety_corpus"
CATALOGUE = yaml.safe_load(DEFAULT_PHRASES.read_text(encoding="utf-8"))
SCREENS = {
    "default": CrisisScreen.from_default(),
    "extended": CrisisScreen.from_default(
        ["purple* elephant", "{intent} paint|draw the fence", "## beans", "# tins ... soup"],
        ["kil time"],
    ),
}


def _messages() -> list[str]:
    """Every corpus line, every catalogue phrase and slot entry written out as a message, and
    random mixtures of their words."""
    lines = [
        line.split("\t")[0].strip()
        for path in sorted(CORPUS.glob("*.txt"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    entries = [*CATALOGUE["rules"], *CATALOGUE.get("exclusions", [])]
    phrases = [phrase for entry in entries for phrase in entry["phrases"]]
    phrases += [entry for slot in CATALOGUE.get("slots", {}).values() for entry in slot]
    written = [re.sub(r"[|*?{}]|\.\.\.|#+", " ", phrase) for phrase in phrases]
    written += [re.sub(r"\|\S*|\*|\?|\.\.\.", "", phrase).replace("##", "40") for phrase in phrases]
    vocabulary = " ".join(lines + written).split()
    rng = random.Random(15)
    mixed = [" ".join(rng.choices(vocabulary, k=rng.randint(2, 14))) for _ in range(300)]
    return lines + written + mixed


MESSAGES = _messages()


def _clauses(screen: CrisisScreen, message: str) -> list[str]:
    return [screen._words(part) for part in clauses(mask_media_quotes(message, fold, "~"))]


def _positions(words: str) -> set[int]:
    """Where `check` searches from: the start, and just after where a match began."""
    starts = {0, *(found.start() for found in re.finditer(r"(?<!\S)\S", words))}
    return starts | {start + 1 for start in starts}


def _found(match: re.Match[str] | None) -> tuple[int, int, str | None] | None:
    return None if match is None else (match.start(), match.end(), match.lastgroup)


@pytest.mark.parametrize("name", SCREENS)
def test_the_index_finds_what_every_phrase_finds_from_every_position(name):
    screen = SCREENS[name]
    every = _anchored(list(screen._index._branches))  # one alternation of every phrase
    compared = matched = 0
    for message in MESSAGES:
        for words in _clauses(screen, message):
            for position in sorted(_positions(words)):
                expected = _found(every.search(words, position))
                assert _found(screen._index.search(words, position)) == expected, (words, position)
                compared += 1
                matched += expected is not None
    assert compared > 20_000 and matched > 2_000, (compared, matched)


def test_an_index_that_knows_no_first_words_finds_nothing():
    screen = SCREENS["default"]
    branches = screen._index._branches
    blind = PhraseIndex(branches, [Starts()] * len(branches))
    words = _clauses(screen, "I want to kill myself")[0]
    assert screen._index.search(words) is not None
    assert blind.search(words) is None


def test_the_index_matches_a_stem_a_word_and_a_number():
    index = PhraseIndex(
        ["(?P<p0>harm\\w*(?!\\S))", "(?P<p1>(?:self)(?: harm)(?!\\S))", "(?P<p2>[1-9]\\d+(?!\\S))"],
        [Starts(stems=frozenset({"harm"})), Starts(words=frozenset({"self"})), Starts(number=True)],
    )
    assert _found(index.search("i harmed it")) == (2, 8, "p0")
    assert _found(index.search("no self harm")) == (3, 12, "p1")
    assert _found(index.search("took 30")) == (5, 7, "p2")
    assert index.search("took 3 unharmed selfish") is None
