"""The crisis screen's figures on the labelled corpora: CI fails if the held-out figures drop."""

from pathlib import Path

import pytest

from bot.conversation.safety import CrisisScreen
from bot.conversation.safety_eval import ALL, NONE, evaluate, read_corpus

CORPUS = Path(__file__).resolve().parents[1] / "safety_corpus"
SCREEN = CrisisScreen.from_default()
CATEGORIES = ("suicide", "self_harm", "harm_to_others", "overdose", "abuse")
LANGUAGES = ("en", "es", "fr", "pt")


def _corpus(name: str):
    return read_corpus((CORPUS / name).read_text(encoding="utf-8").splitlines(), name)


HELDOUT = _corpus("heldout.txt")
TUNING = _corpus("tuning.txt")


def _scores(corpus):
    return evaluate(corpus, lambda text: SCREEN.check(text).category)


def test_the_two_labelled_corpora_hold_at_least_four_hundred_lines_and_share_none():
    assert len(HELDOUT) + len(TUNING) >= 400
    assert {item.text for item in HELDOUT}.isdisjoint({item.text for item in TUNING})


@pytest.mark.parametrize("corpus", [HELDOUT, TUNING], ids=["heldout", "tuning"])
def test_every_category_and_language_has_crisis_lines_and_every_language_controls(corpus):
    cells = {(item.category, item.language) for item in corpus}
    wanted = {(c, lang) for c in CATEGORIES for lang in LANGUAGES}
    assert wanted | {(NONE, lang) for lang in LANGUAGES} <= cells


def test_the_screen_recalls_at_least_95_percent_of_the_held_out_crisis_lines():
    score = _scores(HELDOUT)[(ALL, ALL)]
    assert score.rate() >= 0.95, [item.text for item in score.missed]


def test_the_screen_flags_at_most_5_percent_of_the_held_out_controls():
    score = _scores(HELDOUT)[(NONE, ALL)]
    assert score.rate() <= 0.05, [item.text for item in score.missed]


@pytest.mark.parametrize("category", CATEGORIES)
def test_the_screen_recalls_at_least_80_percent_of_each_held_out_category(category):
    # A floor per category so that one category cannot collapse behind a good average.
    score = _scores(HELDOUT)[(category, ALL)]
    assert score.rate() >= 0.80, [item.text for item in score.missed]


def test_the_screen_recalls_every_tuning_line_but_a_known_few_and_flags_no_tuning_control():
    scores = _scores(TUNING)
    assert scores[(ALL, ALL)].rate() >= 0.98, [m.text for m in scores[(ALL, ALL)].missed]
    assert scores[(NONE, ALL)].flagged == 0, [m.text for m in scores[(NONE, ALL)].missed]
