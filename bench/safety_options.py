"""Compare candidate learned crisis lines on the training corpus only (docs/safety.md, "options").

Every option is judged the way `make safety-model` judges the shipped one
(bot.conversation.safety_train): seeded 5-fold cross-validation stratified by category x language
and grouped (a scenario's translations, a block of a file, stay in one fold), thresholds chosen
on the out-of-fold scores by the same rule (alert: at most 3 % of hard negatives; review: at
most 2 % of everyday texts in the band). A second, harder check trains on the first batch of the
training corpus only and scores the second batch (`*_scenes*`, `*_replies*`: written later,
scenario-first, by another session), with thresholds chosen on the first batch's out-of-fold
scores: how a line carries over to text written differently from what it learned. No held-out
file is read. The CPU cost per message of each embedder is measured on 300 training lines, one
at a time, in this thread's CPU time.

Run by hand (the e5 options need the `safety-options` extra):
`python bench/safety_options.py [--cache DIR] [--options use-6,use-7,e5-7,use+e5-7]`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import percentile  # noqa: E402
from bot.conversation.learned import EMBEDDERS, NONE  # noqa: E402
from bot.conversation.safety_train import (  # noqa: E402
    SCENARIO_FILES,
    Example,
    choose_thresholds,
    out_of_fold,
    read_training,
    two_scores,
)

LANGUAGES = ("en", "es", "fr", "pt")
OPTIONS = ("use-6", "use-7", "e5-7", "use+e5-7")
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


def labels_for(option: str, examples: Sequence[Example]) -> list[str]:
    """Seven classes (everyday apart from the hard negatives) or six (one `none`)."""
    if option.endswith("-7"):
        return [e.target for e in examples]
    return [e.item.category for e in examples]


def transfer(
    rows: NDArray[np.float32], examples: list[Example], option: str
) -> tuple[Scores, NDArray[np.intp], tuple[float, float]]:
    """Train on the first batch, score the second, thresholds from the first batch's folds."""
    from sklearn.linear_model import LogisticRegression  # noqa: PLC0415 - training only

    first = np.array([not any(k in e.source for k in SCENARIO_FILES) for e in examples])
    old = [e for e, f in zip(examples, first, strict=True) if f]
    labels = labels_for(option, old)
    crisis, review = out_of_fold(rows[first], old, labels=labels)
    thresholds = choose_thresholds(crisis, old, review)
    model = LogisticRegression(C=4.0, max_iter=2000, class_weight="balanced")
    model.fit(rows[first], labels)
    scored = two_scores(model.predict_proba(rows[~first]), [str(c) for c in model.classes_])
    return scored, np.flatnonzero(~first), thresholds


def summary(scores: Scores, examples: Sequence[Example], thresholds: tuple[float, float]) -> str:
    crisis_score, review_score = scores
    alert, review = thresholds
    category = np.array([e.item.category for e in examples])
    language = np.array([e.item.language for e in examples])
    everyday = np.array([e.everyday for e in examples])
    crisis = category != NONE
    hard = ~crisis & ~everyday
    alerted = crisis_score >= alert
    flagged = alerted | (review_score >= review)
    cells = [
        flagged[crisis & (category == c) & (language == lang)].mean()
        for c in sorted(set(category[crisis]))
        for lang in LANGUAGES
        if (crisis & (category == c) & (language == lang)).sum() >= 5
    ]
    return (
        f"{alerted[crisis].mean():>7.1%}{flagged[crisis].mean():>7.1%}{min(cells):>7.1%}"
        f"{sum(c >= 0.95 for c in cells):>4}/{len(cells):<3}{alerted[hard].mean():>7.1%}"
        f"{(flagged & ~alerted)[hard].mean():>7.1%}{(flagged & ~alerted)[everyday].mean():>7.1%}"
    )


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
    parser.add_argument("--options", default=",".join(OPTIONS))
    args = parser.parse_args()
    examples, _ = read_training()
    texts = [e.item.text for e in examples]
    print(f"training corpus: {len(examples)} lines; recall on crisis lines, alerts on hard")
    print("negatives, review band on hard negatives and on everyday texts")
    head = f"{'alert':>7}{'a+r':>7}{'worst':>7}{'>=95%':>8}{'hn al.':>7}{'hn rev':>7}{'ev rev':>7}"
    print(f"{'option / check':<34}{head}")
    keys: set[str] = set()
    for option in args.options.split(","):
        embedder_keys = option.rsplit("-", 1)[0].split("+")
        keys |= set(embedder_keys)
        rows = np.hstack([embeddings(k, texts, args.cache) for k in embedder_keys])
        scores = out_of_fold(rows, examples, labels=labels_for(option, examples))
        thresholds = choose_thresholds(scores[0], examples, scores[1])
        print(f"{option + ' grouped CV':<34}{summary(scores, examples, thresholds)}")
        moved, second, limits = transfer(rows, examples, option)
        later = [examples[i] for i in second]
        print(f"{option + ' first batch -> second':<34}{summary(moved, later, limits)}")
    sample = texts[::13][:300]
    for key in sorted(keys):
        print(cost(key, sample))


if __name__ == "__main__":
    main()
