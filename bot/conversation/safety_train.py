"""Train the learned crisis line (`make safety-model`): seeded, so a rebuild gives the same bytes.

Reads only the training corpus (tests/safety_corpus/training/*.tsv); the held-out corpora are
never opened here. The category head learns seven classes: the five crisis categories, `none`
(hard negatives: texts that share words or topics with a crisis) and `everyday` (the
`*_none_everyday.tsv` files: ordinary texts), from two feature sets whose probabilities are
averaged: the sentence embedding and character n-grams (bot.conversation.char_ngrams). How
(`Recipe`: C, weights, n-gram sizes, class weights, an optional word n-gram head, and whether
each training line also trains as a `noised` texting-style copy) is named in RECIPES and the
name recorded in the model card (`--recipe`; bench/safety_options.py compares recipes).
The crisis score is 1 - P(none) - P(everyday) (bot.conversation.learned). Thresholds are chosen
on out-of-fold scores from a seeded cross-validation over the training corpus, stratified by
category x language and grouped so that lines written together (a scenario and its
translations or re-voicings, a block of a file) fall in one fold (`groups`): each line is
scored by a model that saw neither it nor its siblings. Together with the phrase screen's hits
on the same lines, as the worker combines them (`triage`):
- confirm and alert, jointly: the pair that alerts on the most crisis lines while the phrase
  screen's confirmed hits (crisis score >= confirm) and the learned alerts (>= alert) together
  alert on at most ALERT_FALSE_ALARMS of the hard negatives, and at most DEMOTED_HITS of the
  phrase screen's hits on crisis lines are demoted to review (a plain "I want to kill myself"
  must alert: the phrase screen is the floor); ties go to the lowest confirm;
- review: the lowest crisis score whose review band (with the phrase hits not confirmed) holds
  at most REVIEW_RATE of the everyday lines.
The final heads are then fitted on the whole training corpus and written, with a model card
(version, recipe, corpus hash, seed, thresholds, cross-validated figures), to safety_model/.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import random
import re
import sys
import unicodedata
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from bot.conversation.char_ngrams import SIZES, WORD_SIZES, CharNgrams, folded
from bot.conversation.learned import (
    EMBEDDERS,
    EVERYDAY,
    MODEL_DIR,
    NONE,
    Embedder,
    Head,
    Matrix,
    Thresholds,
    softmax,
)
from bot.conversation.safety import CrisisScreen
from bot.conversation.safety_eval import Labelled, read_corpus

TRAINING = Path(__file__).resolve().parents[2] / "tests" / "safety_corpus" / "training"
SEED = 64
FOLDS = 5
C = 4.0
C_NGRAM = 4.0
EMBEDDING_WEIGHT = 0.3
ALERT_FALSE_ALARMS = 0.03
# The review band's share of the everyday lines out of fold. 2 % until batch 7; with therapy
# dialogue among the everyday lines their out-of-fold scores run higher, so the same 2 % cost
# recall. Chosen among 2, 2.5, 3 and 3.5 % by a rule fixed beforehand: the largest whose model
# kept heldout_v7's everyday messages (then retired to validation) at most 2.5 % in the band:
# 3 %. Raised to 3.5 % after batch 9 by the same kind of rule, fixed before heldout_v11 was
# written: the largest of 3.5 to 5 % keeping the everyday band at most 2.5 % on each of
# heldout_v7, v8 and v9 (none of them the judge then); heldout_v11 judged it (docs/safety.md).
REVIEW_RATE = 0.035
# At most this share of the phrase screen's hits on crisis lines may go to review unconfirmed.
# 2 % until batch 7: therapy dialogue (past crises told in a session, OCD intrusions named as
# such) gives the phrase screen 14 % false hits on its hard negatives, and no confirm threshold
# kept 3 % alert false alarms while demoting at most 2 % (the trainer stopped); 3 % is the
# smallest whole step that does. A demoted hit is a review item, never dropped.
DEMOTED_HITS = 0.03
CONFIRM_STEPS = 200
MIN_CELL = 5
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
NOISE_RATE = 0.03
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Example:
    """A training line, whether it is an everyday control (the `everyday` class, and the
    review-band rate) and the file it comes from (its group in cross-validation)."""

    item: Labelled
    everyday: bool
    source: str = ""

    @property
    def target(self) -> str:
        """The class the category head learns for this line."""
        return EVERYDAY if self.everyday else self.item.category


def read_training(directory: Path = TRAINING) -> tuple[list[Example], str]:
    """Every training line, in file-name order, and the SHA-256 of the files read."""
    digest = hashlib.sha256()
    examples: list[Example] = []
    for path in sorted(directory.glob("*.tsv")):
        text = path.read_text(encoding="utf-8")
        digest.update(path.name.encode() + b"\0" + text.encode() + b"\0")
        everyday = path.name.endswith("_none_everyday.tsv")
        examples += [
            Example(item, everyday, path.name) for item in read_corpus(text.splitlines(), path.name)
        ]
    return examples, digest.hexdigest()


def noised(text: str, seed: int = SEED) -> str:
    """A texting-style copy of a line: case-folded, accents and punctuation dropped, spaces
    collapsed, and about NOISE_RATE of its letters dropped, doubled or swapped with the next
    character; seeded by the seed and the text, so a line always gets the same copy."""
    rng = random.Random(f"{seed}\0{text}")
    chars = [c for c in folded(text) if not unicodedata.category(c).startswith("P")]
    out: list[str] = []
    i = 0
    while i < len(chars):
        char = chars[i]
        kind = rng.randrange(3) if char.isalpha() and rng.random() < NOISE_RATE else -1
        if kind == 1:  # doubled
            out += [char, char]
        elif kind == 2 and i + 1 < len(chars):  # swapped with the next
            out += [chars[i + 1], char]
            i += 1
        elif kind != 0:  # kept (0: dropped)
            out.append(char)
        i += 1
    return _SPACES.sub(" ", "".join(out)).strip()


SCENARIO_FILES = ("_scenes", "_replies")  # the second batch: one scenario, four languages
SCENARIO_GROUP = 4
BLOCK_GROUP = 10
# The third to ninth batches: scenarios (or voices) separated by a `#` comment line.
PARAGRAPH_FILES = (
    "_batch3_",
    "_batch4_",
    "_batch5_",
    "_batch6_",
    "_batch7_",
    "_batch8_",
    "_batch9_",
)


def groups(examples: Sequence[Example]) -> list[str]:
    """Each line's cross-validation group. The second batch (`*_scenes*.tsv`, `*_replies*.tsv`)
    was written as the same scenarios in four languages, in the same order: a scenario's
    translations share a group (kind of file, category, position among that category's lines,
    in fours), so no fold is tested on the translation of a line it trained on. The first
    batch was written in runs of similar lines: blocks of ten consecutive lines of a file. The
    third batch (`*_batch3_*.tsv`) was written one scenario at a time, each under its own comment
    line, some scenarios re-voiced in several languages in the same order: a scenario's lines (a
    run of consecutive line numbers) share a group with the same-numbered scenario of that kind
    of file in the other languages. The fourth to ninth batches (`*_batch4_*.tsv`,
    `*_batch5_*.tsv`, `*_batch6_*.tsv`, `*_batch7_*.tsv`, `*_batch8_*.tsv`, `*_batch9_*.tsv`,
    the fifth written one voice per block) are grouped the same way, each batch's blocks
    numbered apart from the others'."""
    seen: dict[tuple[str, str], int] = {}
    paragraph: dict[str, tuple[int, int]] = {}  # file -> (last line number, paragraph index)
    names = []
    for example in examples:
        marker = next((m for m in PARAGRAPH_FILES if m in example.source), None)
        if marker is not None:
            last, index = paragraph.get(example.source, (-1, 0))
            index += example.item.line != last + 1
            paragraph[example.source] = (example.item.line, index)
            shared = marker + example.source.rsplit(marker, 1)[1]
            names.append(f"{shared}/{index}")
            continue
        kind = next((k for k in SCENARIO_FILES if k in example.source), None)
        if kind is None:
            names.append(f"{example.source}/{example.item.line // BLOCK_GROUP}")
            continue
        rank = seen.get((example.source, example.item.category), 0)
        seen[(example.source, example.item.category)] = rank + 1
        shared = kind + example.source.rsplit(kind, 1)[1]  # the file name without its language
        names.append(f"{shared}/{example.item.category}/{rank // SCENARIO_GROUP}")
    return names


@dataclass(frozen=True)
class Recipe:
    """How the category head is made: a logistic regression over the sentence embedding (C
    `embedding_c`), one over character n-grams of `ngram_sizes` (C `ngram_c`) and optionally one
    over word unigrams and bigrams (C `ngram_c`), their probabilities averaged with weight
    `embedding_weight` on the first, `word_weight` on the third and the rest on the character
    n-grams (embedding_weight 1.0: the embedding alone). `class_weight`: "balanced" (every class
    weighs the same in total), "crisis" (the five crisis categories weigh the same, the two
    calm classes as counted) or "none". `augment`: each training line also gives one `noised`
    copy, with its label, on the same side of every fold split as its original."""

    embedding_c: float = C
    ngram_c: float = C_NGRAM
    embedding_weight: float = EMBEDDING_WEIGHT
    ngram_sizes: tuple[int, int] = SIZES
    word_weight: float = 0.0
    class_weight: str = "balanced"
    augment: bool = False

    @property
    def char_weight(self) -> float:
        """The character n-grams' share of the average."""
        return max(1.0 - self.embedding_weight - self.word_weight, 0.0)


def class_weights(labels: Sequence[str], kind: str) -> dict[str, float] | str | None:
    """scikit-learn's class_weight for a Recipe's `class_weight`."""
    if kind == "balanced":
        return "balanced"
    if kind == "none":
        return None
    counts = {label: labels.count(label) for label in set(labels)}
    crisis = [n for label, n in counts.items() if label not in {NONE, EVERYDAY}]
    mean = sum(crisis) / len(crisis)
    return {k: 1.0 if k in {NONE, EVERYDAY} else mean / n for k, n in counts.items()}


def fit_head(
    rows: Any, labels: Sequence[str], c: float = C, class_weight: str = "balanced"
) -> tuple[Any, ...]:
    """A multinomial logistic regression: (classes, coef, intercept) as float32 arrays."""
    from sklearn.linear_model import LogisticRegression  # noqa: PLC0415 - training only

    weights = class_weights(list(labels), class_weight)
    model = LogisticRegression(C=c, max_iter=3000, class_weight=weights)
    model.fit(rows, list(labels))
    return (
        np.asarray(model.classes_, dtype=str),
        model.coef_.astype(np.float32),
        model.intercept_.astype(np.float32),
    )


def ngram_rows(ngrams: CharNgrams, texts: Sequence[str]) -> Any:
    """The texts' n-gram features as a sparse matrix (what CharNgrams.logits multiplies)."""
    from scipy.sparse import csr_matrix  # noqa: PLC0415 - training only

    data: list[float] = []
    columns: list[int] = []
    starts = [0]
    for text in texts:
        found, values = ngrams.features(text)
        columns += found.tolist()
        data += values.tolist()
        starts.append(len(columns))
    return csr_matrix((data, columns, starts), shape=(len(texts), len(ngrams.vocabulary)))


def fit_category(
    recipe: Recipe, rows: Matrix, texts: Sequence[str], labels: Sequence[str]
) -> dict[str, NDArray[Any]]:
    """The category head(s) a recipe makes, as weights.npz arrays (augmented copies, if the
    recipe asks for them, are already among the rows: `augmented`)."""
    arrays: dict[str, NDArray[Any]] = {}
    weight = recipe.class_weight
    if recipe.embedding_weight > 0:
        classes, coef, intercept = fit_head(rows, labels, recipe.embedding_c, weight)
        arrays |= {"category_classes": classes, "category_coef": coef}
        arrays |= {"category_intercept": intercept}
    if 0 < recipe.embedding_weight < 1:  # in the weights, so that it changes the version
        arrays["embedding_weight"] = np.asarray([recipe.embedding_weight], dtype=np.float64)
    heads = [("ngram", recipe.char_weight, "char"), ("word", recipe.word_weight, "word")]
    for prefix, share, unit in heads:
        if share <= 0:
            continue
        sizes = recipe.ngram_sizes if unit == "char" else WORD_SIZES
        ngrams = CharNgrams.fit(texts, sizes=sizes, unit=unit)
        found = fit_head(ngram_rows(ngrams, texts), labels, recipe.ngram_c, weight)
        arrays |= {f"{prefix}_classes": found[0], f"{prefix}_coef": found[1]}
        arrays |= {f"{prefix}_intercept": found[2]} | ngrams.arrays(prefix)
    if recipe.word_weight > 0:
        arrays["word_weight"] = np.asarray([recipe.word_weight], dtype=np.float64)
    return arrays


def augmented(
    recipe: Recipe,
    rows: Matrix,
    texts: Sequence[str],
    labels: Sequence[str],
    copies: Matrix | None,
) -> tuple[Matrix, list[str], list[str]]:
    """The training rows, texts and labels, with each line's `noised` copy (its embedding in
    `copies`, row for row) after them when the recipe augments."""
    if not recipe.augment:
        return rows, list(texts), list(labels)
    assert copies is not None, "an augmenting recipe needs the copies' embeddings"
    return (
        np.vstack([rows, copies]),
        list(texts) + [noised(t) for t in texts],
        list(labels) * 2,
    )


def predict_category(
    recipe: Recipe, arrays: dict[str, NDArray[Any]], rows: Matrix, texts: Sequence[str]
) -> tuple[list[str], NDArray[np.float64]]:
    """(classes, probabilities) of the fitted head(s), as bot.conversation.learned computes."""
    found = []
    if "category_coef" in arrays:
        classes = tuple(str(c) for c in arrays["category_classes"])
        head = Head(classes, arrays["category_coef"], arrays["category_intercept"])
        found.append((recipe.embedding_weight, head.classes, head.probabilities(rows)))
    for prefix, weight in (("ngram", recipe.char_weight), ("word", recipe.word_weight)):
        if f"{prefix}_coef" in arrays:
            ngrams = CharNgrams.from_arrays(arrays, prefix)
            logits = ngrams.logits(texts, arrays[f"{prefix}_coef"], arrays[f"{prefix}_intercept"])
            found.append((weight, tuple(arrays[f"{prefix}_classes"]), softmax(logits)))
    names = [str(c) for c in found[0][1]]
    assert all([str(c) for c in k] == names for _, k, _ in found)
    return names, sum(w * p for w, _, p in found)  # type: ignore[return-value]


def two_scores(
    probabilities: NDArray[np.float64], classes: Sequence[str]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(crisis score, 1 - P(everyday)) per row, as bot.conversation.learned computes them;
    the second is the older review score (bench/safety_options.py compares it)."""
    calm = probabilities[:, list(classes).index(NONE)].copy()
    if EVERYDAY not in classes:
        return 1.0 - calm, 1.0 - calm
    everyday = probabilities[:, list(classes).index(EVERYDAY)]
    return 1.0 - calm - everyday, 1.0 - everyday


def oof_probabilities(
    rows: Matrix,
    examples: Sequence[Example],
    recipe: Recipe = Recipe(),
    labels: Sequence[str] | None = None,
    seed: int = SEED,
    copies: Matrix | None = None,
) -> tuple[list[str], NDArray[np.float64]]:
    """Each line's class probabilities from heads fitted on the other folds (the n-gram
    vocabulary too; a line's noised copy, `copies` row for row, trains with its original);
    `labels` (default: each example's target) lets bench/safety_options.py compare other class
    sets."""
    from sklearn.model_selection import StratifiedGroupKFold  # noqa: PLC0415 - training only

    labels = [e.target for e in examples] if labels is None else labels
    texts = [e.item.text for e in examples]
    strata = [f"{e.item.category}/{e.item.language}" for e in examples]
    classes = sorted(set(labels))
    found = np.zeros((len(examples), len(classes)))
    folds = StratifiedGroupKFold(n_splits=FOLDS, shuffle=True, random_state=seed)
    for train, test in folds.split(rows, strata, groups(examples)):
        part = augmented(
            recipe,
            rows[train],
            [texts[i] for i in train],
            [labels[i] for i in train],
            None if copies is None else copies[train],
        )
        arrays = fit_category(recipe, *part)
        names, found[test] = predict_category(recipe, arrays, rows[test], [texts[i] for i in test])
        assert names == classes
    return classes, found


def out_of_fold(
    rows: Matrix,
    examples: Sequence[Example],
    recipe: Recipe = Recipe(),
    labels: Sequence[str] | None = None,
    seed: int = SEED,
    copies: Matrix | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each line's out-of-fold (crisis score, 1 - P(everyday)): `oof_probabilities`."""
    classes, probabilities = oof_probabilities(rows, examples, recipe, labels, seed, copies)
    return two_scores(probabilities, classes)


def _just_above(descending: NDArray[np.float64], allowed: int) -> float:
    """The lowest threshold (rounded up to 4 decimals, never down) that at most `allowed` of
    these scores reach: just above the (allowed+1)-th highest."""
    if allowed >= len(descending):
        return 0.0
    if allowed < 0:
        return 1.0
    return min(math.ceil(float(np.nextafter(descending[allowed], 2.0)) * 10_000) / 10_000, 1.0)


def triage(
    scores: NDArray[np.float64], phrase: NDArray[np.bool_], thresholds: Thresholds
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """(alerted, alerted or in review) per line for the phrase screen and the learned line
    together, as bot.conversation.safety_lines decides: a phrase hit alerts when the crisis
    score confirms it, else it is reviewed; the crisis score alone alerts or is reviewed."""
    confirm = 0.0 if thresholds.confirm is None else thresholds.confirm
    alerted = (phrase & (scores >= confirm)) | (scores >= thresholds.alert)
    return alerted, alerted | phrase | (scores >= thresholds.review)


def choose_thresholds(
    scores: NDArray[np.float64], examples: Sequence[Example], phrase: NDArray[np.bool_]
) -> Thresholds:
    """(alert, review, confirm) from out-of-fold crisis scores and the phrase screen's hits, as
    the module docstring says."""
    everyday = np.array([e.everyday for e in examples])
    hard = np.array([e.item.category == NONE for e in examples]) & ~everyday
    crisis = np.array([e.item.category != NONE for e in examples])
    allowed = int(np.floor(ALERT_FALSE_ALARMS * hard.sum()))
    demotable = int(np.floor(DEMOTED_HITS * (phrase & crisis).sum()))
    best: tuple[float, float, float] | None = None
    for step in range(CONFIRM_STEPS + 1):
        confirm = step / CONFIRM_STEPS
        if (phrase & crisis & (scores < confirm)).sum() > demotable:
            break  # a higher confirm only demotes more of the phrase screen's crisis hits
        confirmed = phrase & (scores >= confirm)
        rest = np.sort(scores[hard & ~confirmed])[::-1]
        if (confirmed & hard).sum() > allowed:
            continue
        alert = _just_above(rest, allowed - int((confirmed & hard).sum()))
        recall = float((confirmed | (scores >= alert))[crisis].mean())
        if best is None or recall > best[0]:  # ties: the lowest confirm, fewest hits demoted
            best = (recall, alert, confirm)
    if best is None:
        raise ValueError(
            "no confirm threshold keeps the phrase screen's hard-negative alerts within "
            f"{ALERT_FALSE_ALARMS:.0%} while demoting at most {DEMOTED_HITS:.0%} of its crisis hits"
        )
    _, alert, confirm = best
    alerted, _ = triage(scores, phrase, Thresholds(alert, 1.0, confirm))
    demoted = phrase & ~alerted
    budget = int(np.floor(REVIEW_RATE * everyday.sum())) - int((demoted & everyday).sum())
    review = _just_above(np.sort(scores[everyday & ~alerted & ~demoted])[::-1], budget)
    return Thresholds(alert, min(review, alert), confirm)


def figures(
    scores: NDArray[np.float64],
    examples: Sequence[Example],
    phrase: NDArray[np.bool_],
    thresholds: Thresholds,
) -> dict[str, float]:
    """The out-of-fold figures a model card and bench/safety_options.py report: phrase screen
    and learned line together, and the learned line alone on hard negatives."""
    category = np.array([e.item.category for e in examples])
    language = np.array([e.item.language for e in examples])
    everyday = np.array([e.everyday for e in examples])
    crisis = category != NONE
    hard = ~crisis & ~everyday
    alerted, flagged = triage(scores, phrase, thresholds)
    cells = [
        float(flagged[crisis & (category == c) & (language == lang)].mean())
        for c in sorted(set(category[crisis]))
        for lang in sorted(set(language))
        if (crisis & (category == c) & (language == lang)).sum() >= MIN_CELL
    ]
    review = flagged & ~alerted
    hits = phrase & crisis
    found = {
        "phrase_hits_demoted": (hits & ~alerted).sum() / max(int(hits.sum()), 1),
        "alert_recall": alerted[crisis].mean(),
        "alert_or_review_recall": flagged[crisis].mean(),
        "worst_cell_alert_or_review_recall": min(cells, default=0.0),
        "cells_at_95": sum(c >= 0.95 for c in cells),
        "cells": len(cells),
        "hard_negative_alerts": alerted[hard].mean(),
        "hard_negative_review_band": review[hard].mean(),
        "learned_alone_hard_negative_alerts": (scores[hard] >= thresholds.alert).mean(),
        "everyday_alerts": alerted[everyday].mean(),
        "everyday_review_band": review[everyday].mean(),
    }
    return {k: round(float(v), 4) for k, v in found.items()}


def phrase_hits(examples: Sequence[Example]) -> NDArray[np.bool_]:
    """Which lines the maintained phrase catalogue flags."""
    screen = CrisisScreen.from_default()
    return np.array([screen.check(e.item.text).crisis for e in examples])


def write_weights(path: Path, arrays: dict[str, NDArray[Any]]) -> str:
    """An .npz with a fixed timestamp and order (so identical weights give identical bytes);
    returns its SHA-256."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(arrays):
            member = io.BytesIO()
            np.lib.format.write_array(
                member, np.ascontiguousarray(arrays[name]), allow_pickle=False
            )
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, member.getvalue())
    path.write_bytes(buffer.getvalue())
    return hashlib.sha256(buffer.getvalue()).hexdigest()


RECIPES = {
    "use+ngram-lr": Recipe(),  # the recipe before noised copies (cards without a `recipe`)
    "use+ngram-lr+noised": Recipe(augment=True),
    "use+ngram-lr+noised+crisis-weights": Recipe(augment=True, class_weight="crisis"),
}
RECIPE = "use+ngram-lr+noised"  # chosen by bench/safety_options.py's rule (docs/safety.md)


def describe(recipe: Recipe) -> str:
    """The model card's `classifier`: what the recipe fits and how it averages."""
    low, high = recipe.ngram_sizes
    word = (
        f", one over word {WORD_SIZES[0]}-{WORD_SIZES[1]}-grams (tf-idf, C={recipe.ngram_c}, "
        f"weight {recipe.word_weight})"
        if recipe.word_weight > 0
        else ""
    )
    copies = "; each training line also as one noised copy (safety_train.noised)"
    return (
        f"sklearn LogisticRegression(class_weight={recipe.class_weight}), multinomial over five "
        f"crisis categories, {NONE} (hard negatives) and {EVERYDAY}: one over the sentence "
        f"embedding (C={recipe.embedding_c}), one over character {low}-{high}-grams "
        f"of words (tf-idf, C={recipe.ngram_c}){word}; probabilities averaged with weight "
        f"{recipe.embedding_weight} on the embedding's" + (copies if recipe.augment else "")
    )


def train(  # noqa: PLR0913 - the trainer's choices, each with its default
    embedder: Embedder,
    embedder_key: str,
    out: Path = MODEL_DIR,
    directory: Path = TRAINING,
    seed: int = SEED,
    recipe_name: str = RECIPE,
) -> dict[str, Any]:
    """Embed the training corpus, choose thresholds out of fold, fit, write; the model card."""
    recipe = RECIPES[recipe_name]
    if recipe.word_weight > 0:  # bench/safety_options.py only: the worker loads no word head
        raise ValueError(f"recipe {recipe_name!r} has a word head, which the worker cannot load")
    examples, corpus_hash = read_training(directory)
    texts = [e.item.text for e in examples]
    rows = embedder.embed(texts)
    copies = embedder.embed([noised(t, seed) for t in texts]) if recipe.augment else None
    scores, _ = out_of_fold(rows, examples, recipe, seed=seed, copies=copies)
    phrase = phrase_hits(examples)
    thresholds = choose_thresholds(scores, examples, phrase)
    targets = [e.target for e in examples]
    arrays = fit_category(recipe, *augmented(recipe, rows, texts, targets, copies))
    classes, coef, intercept = fit_head(rows, [e.item.language for e in examples])
    arrays |= {"language_classes": classes, "language_coef": coef}
    arrays |= {"language_intercept": intercept}
    out.mkdir(parents=True, exist_ok=True)
    weights_hash = write_weights(out / "weights.npz", arrays)
    card = {
        "version": f"{embedder_key}-ngram-lr-{weights_hash[:12]}",
        "embedder": embedder_key,
        "embedder_name": embedder.name,
        "recipe": recipe_name,
        "classifier": describe(recipe),
        "embedding_weight": recipe.embedding_weight,
        "review_on": "crisis",
        "seed": seed,
        "folds": f"{FOLDS}, stratified by category x language, grouped (safety_train.groups)",
        "training_corpus_sha256": corpus_hash,
        "training_lines": len(examples),
        "ngram_vocabulary": int(len(arrays["ngram_grams"])),
        "weights_sha256": weights_hash,
        "thresholds": {
            "alert": thresholds.alert,
            "review": thresholds.review,
            "confirm": thresholds.confirm,
        },
        "targets": {
            "hard_negative_alerts": ALERT_FALSE_ALARMS,
            "everyday_review_band": REVIEW_RATE,
            "phrase_hits_demoted": DEMOTED_HITS,
        },
        "out_of_fold": figures(scores, examples, phrase, thresholds),
    }
    text = json.dumps(card, indent=2, sort_keys=True) + "\n"
    (out / "model.json").write_text(text, encoding="utf-8")
    return card


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", choices=sorted(EMBEDDERS), default="use")
    parser.add_argument("--out", type=Path, default=MODEL_DIR)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--recipe", choices=sorted(RECIPES), default=RECIPE)
    args = parser.parse_args(argv)
    embedder = EMBEDDERS[args.embedder]()
    card = train(embedder, args.embedder, args.out, seed=args.seed, recipe_name=args.recipe)
    sys.stdout.write(json.dumps(card, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
