"""Score a crisis detector on a labelled corpus: recall and false alarms per category and language.

A corpus line is `text<TAB>category<TAB>language`; category `none` marks a control that must not
be flagged; blank lines and lines starting with `#` are skipped. Recall counts a crisis message
as caught when it is flagged under any category (what matters is that someone is alerted); the
share flagged under the labelled category is reported beside it. A category's false-alarm rate
is the share of the language's controls flagged under that category; the `none` rows give the
share of controls flagged under any.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

NONE = "none"
ALL = "all"


class CorpusError(ValueError):
    """A corpus line that is not `text<TAB>category<TAB>language`."""


@dataclass(frozen=True, slots=True)
class Labelled:
    """One corpus message and what it should be flagged as (`none` for a control)."""

    text: str
    category: str
    language: str
    line: int


@dataclass(slots=True)
class Score:
    """Counts for one (category, language) cell; controls are counted under category `none`."""

    total: int = 0
    flagged: int = 0
    same_category: int = 0
    false_alarms: int = 0
    missed: list[Labelled] = field(default_factory=list)

    def rate(self) -> float:
        return self.flagged / self.total if self.total else 0.0


def read_corpus(lines: Iterable[str], source: str = "corpus") -> list[Labelled]:
    """Parse a labelled corpus; a malformed line is an error naming its line number."""
    corpus = []
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 3 or not all(part.strip() for part in fields):
            raise CorpusError(f"{source}:{number}: expected text<TAB>category<TAB>language")
        text, category, language = (part.strip() for part in fields)
        corpus.append(Labelled(text, category, language, number))
    if not corpus:
        raise CorpusError(f"{source}: no labelled lines")
    return corpus


def evaluate(
    corpus: Iterable[Labelled], detect: Callable[[str], str | None]
) -> dict[tuple[str, str], Score]:
    """Run `detect` (text -> category flagged, or None) over the corpus; cells per category and
    language plus `all` rows and columns."""
    scores: dict[tuple[str, str], Score] = {}
    for item in corpus:
        found = detect(item.text)
        for key in _keys(item):
            score = scores.setdefault(key, Score())
            score.total += 1
            score.flagged += found is not None
            score.same_category += found == item.category
            if (found is None) != (item.category == NONE):
                score.missed.append(item)
        if item.category == NONE and found is not None:
            for language in (item.language, ALL):
                scores.setdefault((found, language), Score()).false_alarms += 1
    return scores


def _keys(item: Labelled) -> list[tuple[str, str]]:
    keys = [(item.category, item.language), (item.category, ALL)]
    if item.category != NONE:
        keys += [(ALL, item.language), (ALL, ALL)]
    return keys


def table(scores: dict[tuple[str, str], Score]) -> list[str]:
    """The figures as aligned text lines: recall rows per category, then false alarms."""
    head = f"{'category':<16}{'language':<10}{'n':>5}{'recall':>9}{'same cat.':>11}"
    rows = [head + f"{'false alarms':>14}"]
    for (category, language), score in sorted(scores.items(), key=_order):
        if category == NONE or not score.total:
            continue
        same = score.same_category / score.total
        control = scores.get((NONE, language), Score())
        flagged = control.flagged if category == ALL else score.false_alarms
        false = flagged / control.total if control.total else 0.0
        rows.append(
            f"{category:<16}{language:<10}{score.total:>5}{score.rate():>9.1%}{same:>11.1%}"
            f"{false:>14.1%}"
        )
    rows.append("")
    rows.append(f"{'controls':<16}{'language':<10}{'n':>5}{'false alarms':>14}")
    for (category, language), score in sorted(scores.items(), key=_order):
        if category == NONE:
            rows.append(f"{NONE:<16}{language:<10}{score.total:>5}{score.rate():>14.1%}")
    return rows


def _order(item: tuple[tuple[str, str], Score]) -> tuple[bool, str, bool, str]:
    (category, language), _ = item
    return (category == ALL, category, language == ALL, language)
