"""Train the learned crisis line (`make safety-model`): seeded, so a rebuild gives the same bytes.

Reads only the training corpus (tests/safety_corpus/training/*.tsv); the held-out corpora are
never opened here. Thresholds are chosen on out-of-fold scores from a seeded, stratified
cross-validation over the training corpus (each line scored by a model that never saw it):
- alert: the lowest score whose out-of-fold false-alarm rate on all `none` lines (everyday
  texts and hard negatives) is at most ALERT_FALSE_ALARMS;
- review: the lowest score below that whose out-of-fold review-band rate on the everyday
  `none` lines (`*_none_everyday.tsv`) is at most REVIEW_RATE.
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

from bot.conversation.learned import EMBEDDERS, MODEL_DIR, NONE, Embedder, Matrix
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
    """A training line and whether it is an everyday control (for the review-band rate)."""

    item: Labelled
    everyday: bool


def read_training(directory: Path = TRAINING) -> tuple[list[Example], str]:
    """Every training line, in file-name order, and the SHA-256 of the files read."""
    digest = hashlib.sha256()
    examples: list[Example] = []
    for path in sorted(directory.glob("*.tsv")):
        text = path.read_text(encoding="utf-8")
        digest.update(path.name.encode() + b"\0" + text.encode() + b"\0")
        everyday = path.name.endswith("_none_everyday.tsv")
        examples += [Example(item, everyday) for item in read_corpus(text.splitlines(), path.name)]
    return examples, digest.hexdigest()


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


def out_of_fold(
    rows: Matrix, examples: Sequence[Example], seed: int = SEED, c: float = C
) -> NDArray[np.float64]:
    """Each line's crisis score (1 - P(none)) from a model fitted on the other folds."""
    from sklearn.model_selection import StratifiedKFold  # noqa: PLC0415 - training only

    labels = [e.item.category for e in examples]
    strata = [f"{e.item.category}/{e.item.language}" for e in examples]
    scores = np.zeros(len(examples))
    folds = StratifiedKFold(n_splits=FOLDS, shuffle=True, random_state=seed)
    for train, test in folds.split(rows, strata):
        classes, coef, intercept = fit_head(rows[train], [labels[i] for i in train], c)
        logits = rows[test].astype(np.float64) @ coef.T.astype(np.float64) + intercept
        logits -= logits.max(axis=1, keepdims=True)
        probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        scores[test] = 1.0 - probabilities[:, list(classes).index(NONE)]
    return scores


def choose_thresholds(
    scores: NDArray[np.float64], examples: Sequence[Example]
) -> tuple[float, float]:
    """(alert, review) from out-of-fold scores, as the module docstring says."""
    none = np.array([e.item.category == NONE for e in examples])
    everyday = np.array([e.everyday for e in examples])
    controls = np.sort(scores[none])[::-1]
    allowed = int(np.floor(ALERT_FALSE_ALARMS * len(controls)))
    # Just above the (allowed+1)-th highest control score: at most `allowed` controls reach it.
    alert = float(np.nextafter(controls[allowed], 1.0)) if allowed < len(controls) else 0.0
    calm = np.sort(scores[everyday & (scores < alert)])[::-1]
    in_band = int(np.floor(REVIEW_RATE * everyday.sum()))
    review = float(np.nextafter(calm[in_band], 1.0)) if in_band < len(calm) else 0.0
    # Rounded up, never down: a rounded threshold may only let fewer controls through.
    alert = math.ceil(alert * 10_000) / 10_000
    return alert, min(math.ceil(review * 10_000) / 10_000, alert)


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
    scores = out_of_fold(rows, examples, seed)
    alert, review = choose_thresholds(scores, examples)
    arrays: dict[str, NDArray[Any]] = {}
    for name, labels in (
        ("category", [e.item.category for e in examples]),
        ("language", [e.item.language for e in examples]),
    ):
        classes, coef, intercept = fit_head(rows, labels)
        arrays |= {f"{name}_classes": classes, f"{name}_coef": coef, f"{name}_intercept": intercept}
    out.mkdir(parents=True, exist_ok=True)
    weights_hash = write_weights(out / "weights.npz", arrays)
    crisis = np.array([e.item.category != NONE for e in examples])
    card = {
        "version": f"{embedder_key}-lr-{weights_hash[:12]}",
        "embedder": embedder_key,
        "embedder_name": embedder.name,
        "classifier": f"sklearn LogisticRegression(C={C}, class_weight=balanced), multinomial",
        "seed": seed,
        "folds": FOLDS,
        "training_corpus_sha256": corpus_hash,
        "training_lines": len(examples),
        "weights_sha256": weights_hash,
        "thresholds": {"alert": alert, "review": review},
        "targets": {"alert_false_alarms": ALERT_FALSE_ALARMS, "review_rate": REVIEW_RATE},
        "out_of_fold": {
            "alert_recall": round(float((scores[crisis] >= alert).mean()), 4),
            "alert_or_review_recall": round(float((scores[crisis] >= review).mean()), 4),
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
