"""Compare candidate learned crisis lines on the training corpus only (docs/safety.md, "options").

Every option is judged the way `make safety-model` judges the shipped one
(bot.conversation.safety_train): seeded 5-fold cross-validation stratified by category x language
and grouped (a scenario's translations, a block of a file, stay in one fold), thresholds chosen
on the out-of-fold scores by the same rule (alert and the phrase screen's confirmation: at most
3 % of hard negatives alerted by both lines together; review: at most 2 % of everyday texts in
the band), and the figures are those of the phrase screen and the learned line together, as the
worker combines them. A second, harder check trains on the first and third batches of the
training corpus only ("first batch" below: every file but the second batch's) and scores the
second batch (`*_scenes*`, `*_replies*`: written later, scenario-first, by
another session), with thresholds chosen on the first batch's out-of-fold scores: how a line
carries over to text written differently from what it learned. No held-out file is read. The
CPU cost per message of the sentence embedder is measured on 300 training lines, one at a time,
in this thread's CPU time, and each option's n-gram heads per message, loaded once as the
worker loads them.

Options beyond the shipped recipe (safety_train.Recipe): one noised texting-style copy of each
training line (`safety_train.noised`; a copy trains only where its original does, so never
across a fold split), class weights equalising only the five crisis categories (or none), a word
unigram + bigram head as a third average, character n-grams of 1-5 or 3-6, and USE weights 0.2
or 0.4. Option names hold no comma (`--options` splits on commas).

Run by hand: `python bench/safety_options.py [--cache DIR] [--options NAME,NAME]` (names:
`--help`; the C=16 options are slow and left out unless named).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import percentile  # noqa: E402
from bot.conversation.char_ngrams import CharNgrams  # noqa: E402
from bot.conversation.learned import EMBEDDERS, NONE, Thresholds, softmax  # noqa: E402
from bot.conversation.safety_train import (  # noqa: E402
    ALERT_FALSE_ALARMS,
    REVIEW_RATE,
    SCENARIO_FILES,
    Example,
    Recipe,
    _just_above,
    augmented,
    choose_thresholds,
    figures,
    fit_category,
    noised,
    oof_probabilities,
    phrase_hits,
    predict_category,
    read_training,
    two_scores,
)

Scores = tuple[NDArray[np.float64], NDArray[np.float64]]


def embeddings(key: str, texts: Sequence[str], cache: Path | None) -> NDArray[np.float32]:
    """The texts' rows from embedder `key`, through an optional cache of earlier runs."""
    known: dict[str, NDArray[np.float32]] = {}
    path = None if cache is None else cache / f"{key}.npz"
    if path is not None and path.exists():
        with np.load(path) as stored:
            known = dict(zip(stored["texts"].tolist(), stored["rows"], strict=True))
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    if missing:
        embedder = EMBEDDERS[key]()
        for start in range(0, len(missing), 64):
            batch = missing[start : start + 64]
            known |= dict(zip(batch, embedder.embed(batch), strict=True))
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            rows = np.stack(list(known.values()))
            np.savez(path, texts=np.array(list(known), dtype=str), rows=rows)
    return np.stack([known[t] for t in texts]).astype(np.float32)


@dataclass(frozen=True)
class Option:
    """A candidate: how the category head is made, whether `everyday` is its own class, and
    which triage it is judged by (`crisis`: review band on the crisis score, phrase hits
    confirmed by it, as shipped; `everyday`: the earlier review score 1 - P(everyday), every
    phrase hit an alert)."""

    recipe: Recipe
    seven: bool = True
    triage: str = "crisis"


OPTIONS = {
    "use-6 (earlier)": Option(Recipe(embedding_weight=1.0), seven=False, triage="everyday"),
    "use-7 review 1-P(everyday)": Option(Recipe(embedding_weight=1.0), triage="everyday"),
    "use-7": Option(Recipe(embedding_weight=1.0)),
    "use-7 C=1": Option(Recipe(embedding_c=1.0, embedding_weight=1.0)),
    "use-7 C=16": Option(Recipe(embedding_c=16.0, embedding_weight=1.0)),
    "ngram-7": Option(Recipe(embedding_weight=0.0)),
    "ngram-7 C=16": Option(Recipe(ngram_c=16.0, embedding_weight=0.0)),
    "use+ngram-7 w=0.5": Option(Recipe(embedding_weight=0.5)),
    "use+ngram-7 w=0.3 (shipped)": Option(Recipe()),
    "shipped + noised copies": Option(Recipe(augment=True)),
    "shipped crisis categories equal": Option(Recipe(class_weight="crisis")),
    "shipped unweighted": Option(Recipe(class_weight="none")),
    "shipped + word head 0.35": Option(Recipe(word_weight=0.35)),
    "shipped + word head 0.2": Option(Recipe(word_weight=0.2)),
    "shipped char 1-5": Option(Recipe(ngram_sizes=(1, 5))),
    "shipped char 3-6": Option(Recipe(ngram_sizes=(3, 6))),
    "shipped w=0.2": Option(Recipe(embedding_weight=0.2)),
    "shipped w=0.4": Option(Recipe(embedding_weight=0.4)),
    "noised copies w=0.2": Option(Recipe(augment=True, embedding_weight=0.2)),
    "noised copies w=0.4": Option(Recipe(augment=True, embedding_weight=0.4)),
    "noised copies char 1-5": Option(Recipe(augment=True, ngram_sizes=(1, 5))),
    "noised copies char 3-6": Option(Recipe(augment=True, ngram_sizes=(3, 6))),
    "noised copies + word head 0.2": Option(Recipe(augment=True, word_weight=0.2)),
    "noised copies crisis categories equal": Option(Recipe(augment=True, class_weight="crisis")),
}
EARLIER = ("use-6", "use-7", "ngram-7", "use+ngram-7 w=0.5")
DEFAULT = ",".join(k for k in OPTIONS if "C=16" not in k)


def labels_for(option: Option, examples: Sequence[Example]) -> list[str]:
    """Seven classes (everyday apart from the hard negatives) or six (one `none`)."""
    return [e.target if option.seven else e.item.category for e in examples]


def thresholds_for(
    option: Option, scores: Scores, examples: Sequence[Example], phrase: NDArray[np.bool_]
) -> Thresholds:
    """The shipped rule (safety_train.choose_thresholds), or the earlier one: alert on the
    learned line's own hard-negative alerts, review on 1 - P(everyday)."""
    if option.triage == "crisis":
        return choose_thresholds(scores[0], examples, phrase)
    everyday = np.array([e.everyday for e in examples])
    hard = np.array([e.item.category == NONE for e in examples]) & ~everyday
    alert = _just_above(np.sort(scores[0][hard])[::-1], int(ALERT_FALSE_ALARMS * hard.sum()))
    calm = np.sort(scores[1][everyday & (scores[0] < alert)])[::-1]
    return Thresholds(alert, _just_above(calm, int(REVIEW_RATE * everyday.sum())), 0.0)


Probabilities = tuple[list[str], NDArray[np.float64]]


class Heads:
    """Each head's probabilities, computed once and shared by the options that average it: out
    of fold on the whole corpus, out of fold on the first batch, and the second batch scored by
    a head fitted on the first. `copies`: the embeddings of each line's noised copy, for the
    options that augment."""

    def __init__(
        self, rows: NDArray[np.float32], copies: NDArray[np.float32], examples: list[Example]
    ) -> None:
        self.rows, self.copies, self.examples = rows, copies, examples
        self.first = np.array([not any(k in e.source for k in SCENARIO_FILES) for e in examples])
        self.found: dict[tuple[Recipe, bool], tuple[Probabilities, ...]] = {}
        self.fitted: dict[Recipe, tuple[Recipe, dict[str, NDArray[np.float64]]]] = {}

    def of(self, part: Recipe, option: Option) -> tuple[Probabilities, ...]:
        key = (part, option.seven)
        if key not in self.found:
            labels = labels_for(option, self.examples)
            first = np.flatnonzero(self.first)
            old = [self.examples[i] for i in first]
            later = np.flatnonzero(~self.first)
            texts = [e.item.text for e in self.examples]
            old_labels = [labels[i] for i in first]
            train = augmented(
                part, self.rows[first], [texts[i] for i in first], old_labels, self.copies[first]
            )
            arrays = fit_category(part, *train)
            self.fitted[part] = (part, arrays)
            moved = predict_category(part, arrays, self.rows[later], [texts[i] for i in later])
            self.found[key] = (
                oof_probabilities(self.rows, self.examples, part, labels, copies=self.copies),
                oof_probabilities(
                    self.rows[first], old, part, old_labels, copies=self.copies[first]
                ),
                moved,
            )
        return self.found[key]

    def parts(self, recipe: Recipe) -> list[tuple[float, Recipe]]:
        """The recipe's heads, each as a one-head recipe, with its weight in the average."""
        one = dataclasses.replace(recipe, embedding_weight=0.0, word_weight=0.0)
        found = []
        if recipe.embedding_weight > 0:
            use = dataclasses.replace(one, ngram_c=0.0, ngram_sizes=(0, 0), embedding_weight=1.0)
            found.append((recipe.embedding_weight, use))
        if recipe.char_weight > 0:
            found.append((recipe.char_weight, dataclasses.replace(one, embedding_c=0.0)))
        if recipe.word_weight > 0:
            word = dataclasses.replace(one, embedding_c=0.0, ngram_sizes=(0, 0), word_weight=1.0)
            found.append((recipe.word_weight, word))
        return found

    def scores(self, option: Option) -> tuple[Scores, Scores, Scores]:
        """(whole corpus out of fold, first batch out of fold, second batch) scores."""
        parts = [(w, self.of(part, option)) for w, part in self.parts(option.recipe)]
        found = []
        for check in range(3):
            classes = parts[0][1][check][0]
            assert all(p[check][0] == classes for _, p in parts)
            mixed = sum(w * p[check][1] for w, p in parts)
            found.append(two_scores(np.asarray(mixed), classes))
        return found[0], found[1], found[2]

    def text_cost(self, option: Option, texts: Sequence[str]) -> float:
        """p95 CPU milliseconds per message of the option's n-gram heads (as fitted on the first
        batch), one message at a time; the sentence embedder is timed apart (`cost`)."""
        heads = []
        for _, part in self.parts(option.recipe):
            arrays = self.fitted[part][1]
            prefix = "word" if part.word_weight else "ngram"
            if f"{prefix}_coef" in arrays:  # loaded once, as the worker does
                ngrams = CharNgrams.from_arrays(arrays, prefix)
                heads.append((ngrams, arrays[f"{prefix}_coef"], arrays[f"{prefix}_intercept"]))
        times = []
        for text in texts:
            start = time.thread_time()
            for ngrams, coef, intercept in heads:
                softmax(ngrams.logits([text], coef, intercept))
            times.append((time.thread_time() - start) * 1000)
        return percentile(times, 95) if times else 0.0


def summary(
    option: Option,
    scores: Scores,
    examples: Sequence[Example],
    phrase: NDArray[np.bool_],
    thresholds: Thresholds,
) -> str:
    """One row: phrase screen + learned line, as the option's triage combines them."""
    if option.triage == "crisis":
        found = figures(scores[0], examples, phrase, thresholds)
    else:  # review on 1 - P(everyday): pass it as the "crisis" score of the review band
        alerted = phrase | (scores[0] >= thresholds.alert)
        review_score = np.where(alerted, 1.0, scores[1])
        found = figures(
            review_score, examples, np.zeros_like(phrase), Thresholds(1.0, thresholds.review, 0.0)
        )
        found |= _alerts(alerted, examples)
    return (
        f"{found['alert_recall']:>7.1%}{found['alert_or_review_recall']:>7.1%}"
        f"{found['worst_cell_alert_or_review_recall']:>7.1%}"
        f"{int(found['cells_at_95']):>4}/{int(found['cells']):<3}"
        f"{found['hard_negative_alerts']:>7.1%}{found['hard_negative_review_band']:>7.1%}"
        f"{found['everyday_review_band']:>7.1%}   {thresholds.alert:.4f} {thresholds.review:.4f}"
        f" {thresholds.confirm or 0:.3f}"
    )


def _alerts(alerted: NDArray[np.bool_], examples: Sequence[Example]) -> dict[str, float]:
    """Alert recall and hard-negative alerts for the earlier triage (every phrase hit alerts)."""
    everyday = np.array([e.everyday for e in examples])
    crisis = np.array([e.item.category != NONE for e in examples])
    hard = ~crisis & ~everyday
    return {
        "alert_recall": float(alerted[crisis].mean()),
        "hard_negative_alerts": float(alerted[hard].mean()),
    }


def cost(key: str, texts: Sequence[str]) -> str:
    embedder = EMBEDDERS[key]()
    embedder.embed(["warm up"])
    times = []
    for text in texts:
        start = time.thread_time()
        embedder.embed([text])
        times.append((time.thread_time() - start) * 1000)
    p50, p95 = percentile(times, 50), percentile(times, 95)
    return f"{key}: CPU per message p50 {p50:.1f} ms, p95 {p95:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, help="keep embeddings here between runs")
    parser.add_argument("--options", default=DEFAULT, help=f"comma-separated, of: {list(OPTIONS)}")
    args = parser.parse_args()
    examples, _ = read_training()
    texts = [e.item.text for e in examples]
    phrase = phrase_hits(examples)
    copies = embeddings("use", [noised(t) for t in texts], args.cache)
    heads = Heads(embeddings("use", texts, args.cache), copies, examples)
    print(f"training corpus: {len(examples)} lines; phrase screen + learned line together:")
    print("recall on crisis lines, alerts and review band on hard negatives, review band on")
    print("everyday texts; thresholds alert, review, confirm as each option's rule chose them")
    head = f"{'alert':>7}{'a+r':>7}{'worst':>7}{'>=95%':>8}{'hn al.':>7}{'hn rev':>7}{'ev rev':>7}"
    print(f"{'option / check':<44}{head}")
    old = [e for e, f in zip(examples, heads.first, strict=True) if f]
    later = [e for e, f in zip(examples, heads.first, strict=True) if not f]
    for name in args.options.split(","):
        option = OPTIONS[name]
        whole, first, second = heads.scores(option)
        limits = thresholds_for(option, whole, examples, phrase)
        print(f"{name + ', grouped CV':<44}{summary(option, whole, examples, phrase, limits)}")
        limits = thresholds_for(option, first, old, phrase[heads.first])
        row = summary(option, second, later, phrase[~heads.first], limits)
        print(f"{name + ', first batch -> second':<44}{row}", flush=True)
        spent = heads.text_cost(option, texts[::13][:300])
        print(f"{name + ', n-gram heads':<44}CPU per message p95 {spent:.1f} ms", flush=True)
    print(cost("use", texts[::13][:300]))


if __name__ == "__main__":
    main()
