"""Character n-gram features for the learned crisis line, in plain Python and numpy.

Typos, missing accents, slang and abbreviations ("kms", "chui", "q", "tkt") share most of their
character n-grams with the words they stand for, where a sentence model may not. A text is
case-folded, its accents stripped and its whitespace collapsed; each word, padded with a space
on either side, gives its n-grams of 2 to 5 characters (as scikit-learn's `char_wb` analyzer);
the counts are damped (1 + log), weighted by inverse document frequency and L2-normalised. The
vocabulary and weights are fitted by bot.conversation.safety_train and stored beside the
heads (safety_model/weights.npz); the worker needs no scikit-learn to score. The same class
holds word n-grams (`unit="word"`: the folded text's words, runs of letters and digits, and
their pairs), weighted the same way.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

SIZES = (2, 5)
WORD_SIZES = (1, 2)
MIN_DOCUMENTS = 2
_SPACES = re.compile(r"\s+")
_WORDS = re.compile(r"\w+")


def folded(text: str) -> str:
    """Lower case, no accents, single spaces: "Já NÃO  aguento" -> "ja nao aguento"."""
    text = unicodedata.normalize("NFKD", text.casefold())
    text = "".join(c for c in text if unicodedata.category(c) not in {"Mn", "Cf"})
    return _SPACES.sub(" ", text).strip()


def grams(text: str, sizes: tuple[int, int] = SIZES, unit: str = "char") -> Counter[str]:
    """Each n-gram of the folded text's space-padded words, with its count (`unit="word"`:
    each run of `sizes` consecutive words, joined by a space)."""
    found: Counter[str] = Counter()
    low, high = sizes
    if unit == "word":
        words = _WORDS.findall(folded(text))
        for n in range(low, high + 1):
            found.update(" ".join(words[i : i + n]) for i in range(len(words) - n + 1))
        return found
    for word in folded(text).split():
        padded = f" {word} "
        for n in range(low, min(high, len(padded)) + 1):
            found.update(padded[i : i + n] for i in range(len(padded) - n + 1))
    return found


@dataclass(frozen=True)
class CharNgrams:
    """A fitted vocabulary: n-gram -> column, and each column's inverse document frequency."""

    vocabulary: dict[str, int]
    idf: NDArray[np.float64]
    sizes: tuple[int, int] = SIZES
    unit: str = "char"

    @classmethod
    def fit(
        cls,
        texts: Sequence[str],
        min_documents: int = MIN_DOCUMENTS,
        sizes: tuple[int, int] = SIZES,
        unit: str = "char",
    ) -> CharNgrams:
        """The n-grams found in at least `min_documents` texts, in sorted order (so the same
        texts always give the same columns), with smoothed idf = ln((1 + n) / (1 + df)) + 1."""
        documents: Counter[str] = Counter()
        for text in texts:
            documents.update(grams(text, sizes, unit).keys())
        kept = sorted(g for g, df in documents.items() if df >= min_documents)
        n = len(texts)
        idf = np.array([math.log((1 + n) / (1 + documents[g])) + 1 for g in kept])
        return cls({g: i for i, g in enumerate(kept)}, idf, sizes, unit)

    def features(self, text: str) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        """(columns, values) of one text's non-zero features, L2-normalised."""
        found = grams(text, self.sizes, self.unit).items()
        counts = [(self.vocabulary[g], c) for g, c in found if g in self.vocabulary]
        if not counts:
            return np.zeros(0, dtype=np.intp), np.zeros(0)
        columns = np.array([column for column, _ in counts], dtype=np.intp)
        values = (1.0 + np.log([c for _, c in counts])) * self.idf[columns]
        return columns, values / np.linalg.norm(values)

    def logits(
        self, texts: Sequence[str], coef: NDArray[np.float64], intercept: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """A linear head over these features: one row of class logits per text."""
        rows = np.tile(intercept.astype(np.float64), (len(texts), 1))
        for row, text in enumerate(texts):
            columns, values = self.features(text)
            rows[row] += coef[:, columns].astype(np.float64) @ values
        return rows

    def arrays(self, prefix: str) -> dict[str, NDArray[Any]]:
        """What weights.npz stores: the n-grams in column order, their idf, the sizes and (for
        words only, so that character weights keep their bytes) the unit."""
        ordered = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
        found = {
            f"{prefix}_grams": np.asarray(ordered, dtype=str),
            f"{prefix}_idf": self.idf.astype(np.float64),
            f"{prefix}_sizes": np.asarray(self.sizes, dtype=np.int64),
        }
        if self.unit != "char":
            found[f"{prefix}_unit"] = np.asarray([self.unit], dtype=str)
        return found

    @classmethod
    def from_arrays(cls, weights: Any, prefix: str) -> CharNgrams:
        """The vocabulary stored by `arrays` (from an opened .npz)."""
        ordered = [str(g) for g in weights[f"{prefix}_grams"]]
        low, high = (int(n) for n in weights[f"{prefix}_sizes"])
        idf = np.asarray(weights[f"{prefix}_idf"], dtype=np.float64)
        unit = str(weights[f"{prefix}_unit"][0]) if f"{prefix}_unit" in weights else "char"
        return cls({g: i for i, g in enumerate(ordered)}, idf, (low, high), unit)
