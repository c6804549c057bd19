"""The crisis screen's phrases indexed by the words they can start with.

The screen's phrases compile to one alternation of some 400 branches, which the regex engine
tries one by one at every word of a message: a tenth of a turn's CPU (issue 15).
A phrase can only match where the message's word is one its
first word matches: that word itself, a word its stem (`harm*`) begins, or a number. The index
keeps those per branch; at each word it tries only the branches that could start there, in
their catalogue order, as one small alternation compiled on first use. `search` finds the match
`re.search` finds with every branch (tests/conversation/test_phrase_index.py holds it to that),
at a fraction of the cost (docs/performance.md, Turn).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Starts:
    """The words a phrase can start with: these words, words beginning with these stems, and
    (`number`) a word that begins with a digit."""

    words: frozenset[str] = frozenset()
    stems: frozenset[str] = frozenset()
    number: bool = False

    def __or__(self, other: Starts) -> Starts:
        return Starts(
            self.words | other.words, self.stems | other.stems, self.number or other.number
        )


class PhraseIndex:
    """Branches `(?P<pN>...)` in catalogue order, each with the words it can start with."""

    def __init__(self, branches: Sequence[str], starts: Sequence[Starts]) -> None:
        self._branches = tuple(branches)
        self._by_word: dict[str, list[int]] = {}
        self._by_stem: dict[str, list[int]] = {}
        self._numbers: list[int] = []
        for n, start in enumerate(starts):
            for word in start.words:
                self._by_word.setdefault(word, []).append(n)
            for stem in start.stems:
                self._by_stem.setdefault(stem, []).append(n)
            if start.number:
                self._numbers.append(n)
        self._stem_lengths = sorted({len(stem) for stem in self._by_stem})
        # The alternation of each set of branches met so far (one per set of first words: a
        # bounded number). Filled by any thread: a race compiles the same pattern twice.
        self._patterns: dict[tuple[int, ...], re.Pattern[str]] = {}

    def search(self, words: str, position: int = 0) -> re.Match[str] | None:
        """The leftmost match of a phrase at a word starting at or after `position` in `words`
        (folded words separated by spaces), by the first of its branches that matches there."""
        for word in _WORD.finditer(words):
            if word.start() < position:
                continue
            branches = self._candidates(word.group())
            if branches:
                found = self._pattern(branches).match(words, word.start())
                if found is not None:
                    return found
        return None

    def _candidates(self, word: str) -> tuple[int, ...]:
        found = list(self._by_word.get(word, ()))
        for length in self._stem_lengths:
            if length > len(word):
                break
            found += self._by_stem.get(word[:length], ())
        if word[0].isdigit():
            found += self._numbers
        return tuple(sorted(set(found)))

    def _pattern(self, branches: tuple[int, ...]) -> re.Pattern[str]:
        pattern = self._patterns.get(branches)
        if pattern is None:
            alternation = "|".join(self._branches[n] for n in branches)
            pattern = re.compile(r"(?<!\S)(?:" + alternation + ")")
            self._patterns[branches] = pattern
        return pattern
