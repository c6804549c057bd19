"""Character n-gram features: folded text, scikit-learn's `char_wb` tf-idf, stored and scored
in numpy alone."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from bot.conversation.char_ngrams import CharNgrams, folded, grams
from bot.conversation.safety_train import ngram_rows

TEXTS = [
    "Já NÃO  aguento mais",
    "ja nao aguento, sério",
    "chui fatigué mdr",
    "je suis fatigue",
    "kms rn lol",
    "took all my pills",
    "",
]


def test_text_is_folded_to_lower_case_without_accents_or_extra_spaces() -> None:
    assert folded("  Já NÃO\taguento  ") == "ja nao aguento"


def test_a_short_word_gives_itself_padded_once() -> None:
    assert grams("q") == {" q": 1, "q ": 1, " q ": 1}
    assert grams("") == {}


def test_features_equal_scikit_learns_char_wb_tfidf() -> None:
    ours = CharNgrams.fit(TEXTS)
    theirs = TfidfVectorizer(
        analyzer="char_wb",
        ngram_range=(2, 5),
        preprocessor=folded,
        lowercase=False,
        sublinear_tf=True,
        min_df=2,
    ).fit(TEXTS)

    assert list(ours.vocabulary) == list(theirs.get_feature_names_out())
    expected = theirs.transform(TEXTS).toarray()
    assert ngram_rows(ours, TEXTS).toarray() == pytest.approx(expected)


def test_logits_are_the_linear_head_over_the_features_and_survive_storage() -> None:
    ours = CharNgrams.fit(TEXTS)
    rng = np.random.default_rng(1)
    coef = rng.normal(size=(3, len(ours.vocabulary)))
    intercept = rng.normal(size=3)
    stored = CharNgrams.from_arrays(ours.arrays("ngram"), "ngram")

    dense = ngram_rows(ours, TEXTS).toarray()
    assert stored.logits(TEXTS, coef, intercept) == pytest.approx(dense @ coef.T + intercept)
    assert stored.logits(["zzzz"], coef, intercept)[0] == pytest.approx(intercept)
