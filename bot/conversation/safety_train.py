"""Train the learned crisis line (`make safety-model`): seeded, so a rebuild gives the same bytes.

Reads only the training corpus (tests/safety_corpus/training/*.tsv); the held-out corpora are
never opened here. The category head learns seven classes: the five crisis categories, `none`
(hard negatives: texts that share words or topics with a crisis) and `everyday` (the
`*_none_everyday.tsv` files: ordinary texts to a coach), so that the line gives a crisis score,
1 - P(none) - P(everyday), and a review score, 1 - P(everyday) (bot.conversation.learned).
Thresholds are chosen on out-of-fold scores from a seeded cross-validation over the training
corpus, stratified by category x language and grouped so that lines written together (a
scenario and its translations or re-voicings, a block of a file) fall in one fold (`groups`):
each line is scored by a model that saw neither it nor its siblings.
- alert: the lowest crisis score whose out-of-fold false-alarm rate on the hard negatives (the
  controls that are not everyday texts: the ones a crisis screen mistakes) is at most
  ALERT_FALSE_ALARMS;
- review: the lowest review score whose out-of-fold review-band rate on the everyday lines
  (those below the alert threshold) is at most REVIEW_RATE.
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

from bot.conversation.learned import EMBEDDERS, EVERYDAY, MODEL_DIR, NONE, Embedder, Matrix
from bot.conversation.safety_eval import Labelled, read_corpus

TRAINING = Path(__file__).resolve().parents[2] / "tests" / "safety_corpus" / "training"
SEED = 64
FOLDS = 5
C = 4.0
ALERT_FALSE_ALARMS = 0.03
REVIEW_RATE = 0.02
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
PARAGRAPH_FILES = "_batch3_"  # the third batch: scenarios separated by a `#` comment line


def groups(examples: Sequence[Example]) -> list[str]:
    """Each line's cross-validation group. The second batch (`*_scenes*.tsv`, `*_replies*.tsv`)
    was written as the same scenarios in four languages, in the same order: a scenario's
    translations share a group (kind of file, category, position among that category's lines,
    in fours), so no fold is tested on the translation of a line it trained on. The first
    batch was written in runs of similar lines: blocks of ten consecutive lines of a file. The
    third batch (`*_batch3_*.tsv`) was written one scenario at a time, each under its own comment
    line, some scenarios re-voiced in several languages in the same order: a scenario's lines (a
    run of consecutive line numbers) share a group with the same-numbered scenario of that kind
    of file in the other languages."""
    seen: dict[tuple[str, str], int] = {}
    paragraph: dict[str, tuple[int, int]] = {}  # file -> (last line number, paragraph index)
    names = []
    for example in examples:
        if PARAGRAPH_FILES in example.source:
            last, index = paragraph.get(example.source, (-1, 0))
            index += example.item.line != last + 1
            paragraph[example.source] = (example.item.line, index)
            shared = PARAGRAPH_FILES + example.source.rsplit(PARAGRAPH_FILES, 1)[1]
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


def fit_head(rows: Matrix, labels: Sequence[str], c: float = C) -> tuple[Any, ...]:
    """A multinomial logistic regression: (classes, coef, intercept) as float32 arrays."""
    from sklearn.linear_model import LogisticRegression  # noqa: PLC0415 - training only

    model = LogisticRegression(C=c, max_iter=2000, class_weight="balanced")
    model.fit(rows, list(labels))
    return (
        np.asarray(model.classes_, dtype=str),
        model.coef_.astype(np.float32),
        model.intercept_.astype(np.float32),
    )


def two_scores(
    probabilities: NDArray[np.float64], classes: Sequence[str]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(crisis score, review score) per row, as bot.conversation.learned computes them."""
    calm = probabilities[:, list(classes).index(NONE)].copy()
    if EVERYDAY not in classes:
        return 1.0 - calm, 1.0 - calm
    everyday = probabilities[:, list(classes).index(EVERYDAY)]
    return 1.0 - calm - everyday, 1.0 - everyday


def out_of_fold(
    rows: Matrix,
    examples: Sequence[Example],
    seed: int = SEED,
    c: float = C,
    labels: Sequence[str] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each line's (crisis, review) scores from a model fitted on the other folds; `labels`
    (default: each example's target) lets bench/safety_options.py compare other class sets."""
    from sklearn.model_selection import StratifiedGroupKFold  # noqa: PLC0415 - training only

    labels = [e.target for e in examples] if labels is None else labels
    strata = [f"{e.item.category}/{e.item.language}" for e in examples]
    crisis, review = np.zeros(len(examples)), np.zeros(len(examples))
    folds = StratifiedGroupKFold(n_splits=FOLDS, shuffle=True, random_state=seed)
    for train, test in folds.split(rows, strata, groups(examples)):
        classes, coef, intercept = fit_head(rows[train], [labels[i] for i in train], c)
        logits = rows[test].astype(np.float64) @ coef.T.astype(np.float64) + intercept
        logits -= logits.max(axis=1, keepdims=True)
        probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        crisis[test], review[test] = two_scores(probabilities, [str(k) for k in classes])
    return crisis, review


def _just_above(descending: NDArray[np.float64], allowed: int) -> float:
    """The lowest threshold (rounded up to 4 decimals, never down) that at most `allowed` of
    these scores reach: just above the (allowed+1)-th highest."""
    if allowed >= len(descending):
        return 0.0
    return math.ceil(float(np.nextafter(descending[allowed], 2.0)) * 10_000) / 10_000


def choose_thresholds(
    scores: NDArray[np.float64],
    examples: Sequence[Example],
    review_scores: NDArray[np.float64] | None = None,
) -> tuple[float, float]:
    """(alert, review) from out-of-fold scores, as the module docstring says; without review
    scores the crisis score stands for them."""
    review_scores = scores if review_scores is None else review_scores
    everyday = np.array([e.everyday for e in examples])
    hard = np.array([e.item.category == NONE for e in examples]) & ~everyday
    alert = _just_above(np.sort(scores[hard])[::-1], int(np.floor(ALERT_FALSE_ALARMS * hard.sum())))
    calm = np.sort(review_scores[everyday & (scores < alert)])[::-1]
    review = _just_above(calm, int(np.floor(REVIEW_RATE * everyday.sum())))
    return min(alert, 1.0), min(review, 1.0)


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
    rows = embedder.embed([e.item.text for e in examples])
    scores, review_scores = out_of_fold(rows, examples, seed)
    alert, review = choose_thresholds(scores, examples, review_scores)
    arrays: dict[str, NDArray[Any]] = {}
    for name, labels in (
        ("category", [e.target for e in examples]),
        ("language", [e.item.language for e in examples]),
    ):
        classes, coef, intercept = fit_head(rows, labels)
        arrays |= {f"{name}_classes": classes, f"{name}_coef": coef, f"{name}_intercept": intercept}
    out.mkdir(parents=True, exist_ok=True)
    weights_hash = write_weights(out / "weights.npz", arrays)
    crisis = np.array([e.item.category != NONE for e in examples])
    everyday = np.array([e.everyday for e in examples])
    flagged = (scores >= alert) | (review_scores >= review)
    card = {
        "version": f"{embedder_key}-lr-{weights_hash[:12]}",
        "embedder": embedder_key,
        "embedder_name": embedder.name,
        "classifier": (
            f"sklearn LogisticRegression(C={C}, class_weight=balanced), multinomial over "
            f"five crisis categories, {NONE} (hard negatives) and {EVERYDAY}"
        ),
        "seed": seed,
        "folds": f"{FOLDS}, stratified by category x language, grouped (safety_train.groups)",
        "training_corpus_sha256": corpus_hash,
        "training_lines": len(examples),
        "weights_sha256": weights_hash,
        "thresholds": {"alert": alert, "review": review},
        "targets": {
            "hard_negative_alerts": ALERT_FALSE_ALARMS,
            "everyday_review_band": REVIEW_RATE,
        },
        "out_of_fold": {
            "alert_recall": round(float((scores[crisis] >= alert).mean()), 4),
            "alert_or_review_recall": round(float(flagged[crisis].mean()), 4),
            "hard_negative_alerts": round(float((scores[~crisis & ~everyday] >= alert).mean()), 4),
            "everyday_alerts": round(float((scores[everyday] >= alert).mean()), 4),
            "everyday_review_band": round(float((flagged & (scores < alert))[everyday].mean()), 4),
        },
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
