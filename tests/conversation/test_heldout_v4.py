"""heldout_v4.tsv is well formed: it parses, fills every cell, repeats no text, stays independent.

Only the corpus's shape is checked here. The screen's figures on v4 are measured once, by someone
else, with `tandem safety eval`; asserting them here would turn v4 into a tuning target.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bot.conversation import safety_train
from bot.conversation.safety_eval import NONE, read_corpus

CORPUS = Path(__file__).resolve().parents[1] / "safety_corpus"
V4 = CORPUS / "heldout_v4.tsv"
CATEGORIES = ("suicide", "self_harm", "harm_to_others", "overdose", "abuse")
LANGUAGES = ("en", "es", "fr", "pt")


def _lines() -> list[str]:
    return V4.read_text(encoding="utf-8").splitlines()


def _v4():
    return read_corpus(_lines(), V4.name)


def test_every_line_is_text_category_language_with_known_values() -> None:
    corpus = _v4()

    assert {item.category for item in corpus} == {*CATEGORIES, NONE}
    assert {item.language for item in corpus} == set(LANGUAGES)
    assert all(item.text == item.text.strip() for item in corpus)


def test_every_crisis_cell_holds_twelve_lines_and_the_controls_a_hundred_and_sixty() -> None:
    cells = Counter((item.category, item.language) for item in _v4())
    small = {(c, lang): cells[(c, lang)] for c in CATEGORIES for lang in LANGUAGES}

    assert min(small.values()) >= 12, small
    assert sum(small.values()) >= 240
    assert all(cells[(NONE, lang)] >= 40 for lang in LANGUAGES)
    assert sum(cells[(NONE, lang)] for lang in LANGUAGES) >= 160
    assert sum(cells.values()) >= 420


def test_no_text_appears_twice_even_under_another_label() -> None:
    texts = Counter(item.text.casefold() for item in _v4())

    assert [text for text, count in texts.items() if count > 1] == []


def test_the_file_is_utf8_with_lf_endings_and_no_stray_blank_lines() -> None:
    raw = V4.read_bytes()

    assert b"\r" not in raw and raw.endswith(b"\n")
    assert all(line.strip() for line in _lines())


def test_no_v4_crisis_line_is_in_the_training_corpus_or_in_heldout_v3() -> None:
    # Counts only, so that a failure does not print training or v3 text into a v4 author's view.
    crisis = {item.text.casefold() for item in _v4() if item.category != NONE}
    examples, _ = safety_train.read_training()
    training = {e.item.text.casefold() for e in examples}
    v3_lines = (CORPUS / "heldout_v3.tsv").read_text(encoding="utf-8").splitlines()
    v3 = {item.text.casefold() for item in read_corpus(v3_lines, "heldout_v3.tsv")}

    in_training, in_v3 = len(crisis & training), len(crisis & v3)

    assert (in_training, in_v3) == (0, 0)
