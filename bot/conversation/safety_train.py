"""Train the learned crisis line (`make safety-model`): seeded, so a rebuild gives the same bytes.

Reads only the training corpus (tests/safety_corpus/training/*.tsv); the held-out corpora are
never opened here. The category head learns seven classes: the five crisis categories, `none`
(hard negatives: texts that share words or topics with a crisis) and `everyday` (the
`*_none_everyday.tsv` files: ordinary texts), from two feature sets whose probabilities are
averaged (`Recipe`): the sentence embedding and character n-grams (bot.conversation.char_ngrams).
The crisis score is 1 - P(none) - P(everyday) (bot.conversation.learned). Thresholds are chosen
on out-of-fold scores from a seeded cross-validation over the training corpus, stratified by
category x language and grouped so that lines written together (a scenario and its
translations or re-voicings, a block of a file) fall in one fold (`groups`): each line is
scored by a model that saw neither it nor its siblings. Together with the phrase screen's hits
on the same lines, as the worker combines them (`triage`):
- confirm and alert, jointly: the pair that alerts on the most crisis lines while the phrase
  screen's confirmed hits (crisis score >= confirm) and the learned alerts (>= alert) together
  alert on at most ALERT_FALSE_ALARMS of the hard negatives; ties go to the lowest confirm;
- review: the lowest crisis score whose review band (with the phrase hits not confirmed) holds
  at most REVIEW_RATE of the everyday lines.
The final heads are then fitted on the whole training corpus and written, with a model card
(version, corpus hash, seed, thresholds, cross-validated figures), to safety_model/.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from bot.conversation.char_ngrams import SIZES, CharNgrams
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
REVIEW_RATE = 0.02
CONFIRM_STEPS = 200
MIN_CELL = 5
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


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


SCENARIO_FILES = ("_scenes", "_replies")  # the second batch: one scenario, four languages
SCENARIO_GROUP = 4
BLOCK_GROUP = 10
# The third, fourth and fifth batches: scenarios (or voices) separated by a `#` comment line.
PARAGRAPH_FILES = ("_batch3_", "_batch4_", "_batch5_")


def groups(examples: Sequence[Example]) -> list[str]:
    """Each line's cross-validation group. The second batch (`*_scenes*.tsv`, `*_replies*.tsv`)
    was written as the same scenarios in four languages, in the same order: a scenario's
    translations share a group (kind of file, category, position among that category's lines,
    in fours), so no fold is tested on the translation of a line it trained on. The first
    batch was written in runs of similar lines: blocks of ten consecutive lines of a file. The
    third batch (`*_batch3_*.tsv`) was written one scenario at a time, each under its own comment
    line, some scenarios re-voiced in several languages in the same order: a scenario's lines (a
    run of consecutive line numbers) share a group with the same-numbered scenario of that kind
    of file in the other languages. The fourth and fifth batches (`*_batch4_*.tsv`,
    `*_batch5_*.tsv`, the fifth written one voice per block) are grouped the same way, each
    batch's blocks numbered apart from the others'."""
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
    `embedding_c`) and one over character n-grams (C `ngram_c`), their probabilities averaged
    with weight `embedding_weight` on the first (1.0: the embedding alone; 0.0: n-grams alone)."""

    embedding_c: float = C
    ngram_c: float = C_NGRAM
    embedding_weight: float = EMBEDDING_WEIGHT


def fit_head(rows: Any, labels: Sequence[str], c: float = C) -> tuple[Any, ...]:
    """A multinomial logistic regression: (classes, coef, intercept) as float32 arrays."""
    from sklearn.linear_model import LogisticRegression  # noqa: PLC0415 - training only

    model = LogisticRegression(C=c, max_iter=3000, class_weight="balanced")
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
    """The category head(s) a recipe makes, as weights.npz arrays."""
    arrays: dict[str, NDArray[Any]] = {}
    if recipe.embedding_weight > 0:
        classes, coef, intercept = fit_head(rows, labels, recipe.embedding_c)
        arrays |= {"category_classes": classes, "category_coef": coef}
        arrays |= {"category_intercept": intercept}
    if 0 < recipe.embedding_weight < 1:  # in the weights, so that it changes the version
        arrays["embedding_weight"] = np.asarray([recipe.embedding_weight], dtype=np.float64)
    if recipe.embedding_weight < 1:
        ngrams = CharNgrams.fit(texts)
        classes, coef, intercept = fit_head(ngram_rows(ngrams, texts), labels, recipe.ngram_c)
        arrays |= {"ngram_classes": classes, "ngram_coef": coef, "ngram_intercept": intercept}
        arrays |= ngrams.arrays("ngram")
    return arrays


def predict_category(
    recipe: Recipe, arrays: dict[str, NDArray[Any]], rows: Matrix, texts: Sequence[str]
) -> tuple[list[str], NDArray[np.float64]]:
    """(classes, probabilities) of the fitted head(s), as bot.conversation.learned computes."""
    found = []
    if "category_coef" in arrays:
        classes = tuple(str(c) for c in arrays["category_classes"])
        head = Head(classes, arrays["category_coef"], arrays["category_intercept"])
        found.append((recipe.embedding_weight, head.classes, head.probabilities(rows)))
    if "ngram_coef" in arrays:
        ngrams = CharNgrams.from_arrays(arrays, "ngram")
        logits = ngrams.logits(texts, arrays["ngram_coef"], arrays["ngram_intercept"])
        weight = 1.0 - recipe.embedding_weight
        found.append((weight, tuple(arrays["ngram_classes"]), softmax(logits)))
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


def out_of_fold(
    rows: Matrix,
    examples: Sequence[Example],
    recipe: Recipe = Recipe(),
    labels: Sequence[str] | None = None,
    seed: int = SEED,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each line's (crisis score, 1 - P(everyday)) from heads fitted on the other folds (the
    n-gram vocabulary too); `labels` (default: each example's target) lets
    bench/safety_options.py compare other class sets."""
    from sklearn.model_selection import StratifiedGroupKFold  # noqa: PLC0415 - training only

    labels = [e.target for e in examples] if labels is None else labels
    texts = [e.item.text for e in examples]
    strata = [f"{e.item.category}/{e.item.language}" for e in examples]
    crisis, review = np.zeros(len(examples)), np.zeros(len(examples))
    folds = StratifiedGroupKFold(n_splits=FOLDS, shuffle=True, random_state=seed)
    for train, test in folds.split(rows, strata, groups(examples)):
        arrays = fit_category(
            recipe, rows[train], [texts[i] for i in train], [labels[i] for i in train]
        )
        classes, probabilities = predict_category(
            recipe, arrays, rows[test], [texts[i] for i in test]
        )
        crisis[test], review[test] = two_scores(probabilities, classes)
    return crisis, review


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
    best: tuple[float, float, float] | None = None
    for step in range(CONFIRM_STEPS + 1):
        confirm = step / CONFIRM_STEPS
        confirmed = phrase & (scores >= confirm)
        rest = np.sort(scores[hard & ~confirmed])[::-1]
        if (confirmed & hard).sum() > allowed:
            continue
        alert = _just_above(rest, allowed - int((confirmed & hard).sum()))
        recall = float((confirmed | (scores >= alert))[crisis].mean())
        if best is None or recall > best[0]:  # ties: the lowest confirm, fewest hits demoted
            best = (recall, alert, confirm)
    assert best is not None  # confirm 1.0 leaves the budget to the learned line alone
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
    found = {
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


def train(
    embedder: Embedder,
    embedder_key: str,
    out: Path = MODEL_DIR,
    directory: Path = TRAINING,
    seed: int = SEED,
) -> dict[str, Any]:
    """Embed the training corpus, choose thresholds out of fold, fit, write; the model card."""
    examples, corpus_hash = read_training(directory)
    texts = [e.item.text for e in examples]
    rows = embedder.embed(texts)
    recipe = Recipe()
    scores, _ = out_of_fold(rows, examples, recipe, seed=seed)
    phrase = phrase_hits(examples)
    thresholds = choose_thresholds(scores, examples, phrase)
    arrays = fit_category(recipe, rows, texts, [e.target for e in examples])
    classes, coef, intercept = fit_head(rows, [e.item.language for e in examples])
    arrays |= {"language_classes": classes, "language_coef": coef}
    arrays |= {"language_intercept": intercept}
    out.mkdir(parents=True, exist_ok=True)
    weights_hash = write_weights(out / "weights.npz", arrays)
    card = {
        "version": f"{embedder_key}-ngram-lr-{weights_hash[:12]}",
        "embedder": embedder_key,
        "embedder_name": embedder.name,
        "classifier": (
            f"sklearn LogisticRegression(class_weight=balanced), multinomial over five crisis "
            f"categories, {NONE} (hard negatives) and {EVERYDAY}: one over the sentence "
            f"embedding (C={recipe.embedding_c}), one over character {SIZES[0]}-{SIZES[1]}-grams "
            f"of words (tf-idf, C={recipe.ngram_c}); probabilities averaged with weight "
            f"{recipe.embedding_weight} on the embedding's"
        ),
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
    args = parser.parse_args(argv)
    card = train(EMBEDDERS[args.embedder](), args.embedder, args.out, seed=args.seed)
    sys.stdout.write(json.dumps(card, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
