"""The learned line's training recipes: noised copies, class weights, word n-grams."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bot.conversation import safety_train
from bot.conversation.char_ngrams import WORD_SIZES, CharNgrams, grams


def test_a_noised_copy_is_folded_without_punctuation_and_the_same_every_time() -> None:
    text = "Já NÃO aguento mais, sério!!  Tchau."
    copy = safety_train.noised(text)

    assert copy == safety_train.noised(text)
    assert copy == copy.casefold() and not set(copy) & set("ÃÁ,!.") and "  " not in copy
    assert abs(len(copy) - len("ja nao aguento mais serio tchau")) <= 3


def test_about_three_letters_in_a_hundred_are_dropped_doubled_or_swapped() -> None:
    text = "the quick brown fox jumps over the lazy dog " * 40
    copy = safety_train.noised(text, seed=1)

    changed = sum(a != b for a, b in zip(copy, text.strip(), strict=False))
    assert copy != text.strip() and changed > 0
    assert abs(len(copy) - len(text.strip())) < 0.06 * len(text)


def test_an_augmenting_recipe_trains_on_each_line_then_its_copy_with_the_same_label() -> None:
    rows = np.eye(2, dtype=np.float32)
    copies = 2 * np.eye(2, dtype=np.float32)
    recipe = safety_train.Recipe(augment=True)

    found, texts, labels = safety_train.augmented(
        recipe, rows, ["Oi!", "Tchau"], ["a", "b"], copies
    )

    assert found.tolist() == [[1, 0], [0, 1], [2, 0], [0, 2]]
    assert texts == ["Oi!", "Tchau", safety_train.noised("Oi!"), safety_train.noised("Tchau")]
    assert labels == ["a", "b", "a", "b"]
    assert safety_train.augmented(safety_train.Recipe(), rows, texts[:2], labels[:2], None)[2] == [
        "a",
        "b",
    ]


def test_crisis_weights_equalise_the_crisis_categories_and_leave_the_calm_classes() -> None:
    labels = ["suicide"] * 30 + ["abuse"] * 10 + ["none"] * 50 + ["everyday"] * 5

    weights = safety_train.class_weights(labels, "crisis")

    assert isinstance(weights, dict)
    assert weights["suicide"] * 30 == pytest.approx(weights["abuse"] * 10)
    assert weights["none"] == weights["everyday"] == 1.0
    assert safety_train.class_weights(labels, "none") is None


def test_word_grams_are_the_folded_words_and_their_pairs() -> None:
    assert grams("Já não, AGUENTO", WORD_SIZES, "word") == {
        "ja": 1,
        "nao": 1,
        "aguento": 1,
        "ja nao": 1,
        "nao aguento": 1,
    }


def test_a_word_vocabulary_keeps_its_unit_through_storage() -> None:
    texts = ["nao aguento mais", "ja nao aguento", "nao aguento"]
    words = CharNgrams.fit(texts, sizes=WORD_SIZES, unit="word")

    stored = CharNgrams.from_arrays(words.arrays("word"), "word")

    assert (stored.unit, stored.sizes, stored.vocabulary) == ("word", WORD_SIZES, words.vocabulary)
    assert "nao aguento" in stored.vocabulary
    assert "word_unit" not in CharNgrams.fit(texts).arrays("word")


class _Lengths:
    """A stand-in embedder: each text's length and its count of vowels."""

    name = "test-lengths"

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array([[len(t), sum(c in "aeiou" for c in t)] for t in texts], dtype=np.float32)


def test_the_model_card_names_the_recipe_it_was_trained_with(tmp_path: Path) -> None:
    (tmp_path / "training").mkdir()
    for name, line in {
        "en_suicide.tsv": "i want to end it all {}\tsuicide\ten",
        "en_none_everyday.tsv": "walked the dog today {}\tnone\ten",
        "en_none_hardneg.tsv": "this exam is killing me {}\tnone\ten",
        "es_none_hardneg.tsv": "me muero de risa {}\tnone\tes",
    }.items():
        rows = [line.format(i) for i in range(15)]
        (tmp_path / "training" / name).write_text("\n".join(rows) + "\n", encoding="utf-8")

    cards = {
        recipe: safety_train.train(
            _Lengths(), "t", tmp_path / recipe, tmp_path / "training", 1, recipe
        )
        for recipe in ("use+ngram-lr", safety_train.RECIPE)
    }

    assert {recipe: card["recipe"] for recipe, card in cards.items()} == {r: r for r in cards}
    assert "noised copy" in cards[safety_train.RECIPE]["classifier"]
    assert "noised" not in cards["use+ngram-lr"]["classifier"]
