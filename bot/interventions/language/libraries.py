"""Libraries: folders of markdown documents an intervention retrieves from (pure once read).

Each document has front matter `id` (unique in its library), `title`, optional `tags` (a list
of text) and any other metadata (text, numbers, yes/no, lists of text); its body is the text
the model is given. Ranking is BM25 (bm25s, Lucene's non-negative IDF, English stop words
dropped) or the cosine of embeddings from the `embed` callable handed in; ties go to the
smaller id, so the same query over the same files always gives the same list.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bm25s
import numpy
from bm25s.stopwords import STOPWORDS_EN

from bot.conversation.embeddings import Embed, EmbeddingError
from bot.interventions.language.format import Library as LibrarySpec

WORD = re.compile(r"\w\w+")
STOPWORDS = frozenset(STOPWORDS_EN)
RESERVED = ("id", "title", "tags")


def tokens(text: str) -> list[str]:
    """Lower-case words of two letters or more, English stop words left out."""
    return [word for word in WORD.findall(text.lower()) if word not in STOPWORDS]


class RankingError(Exception):
    """The documents could not be ranked (no embedding model, the endpoint failed)."""


@dataclass(frozen=True)
class Document:
    """One document: `meta` is every front matter key but id and title (tags included)."""

    id: str
    title: str
    body: str
    meta: Mapping[str, Any]
    file: str
    line: int | None = None

    @property
    def tags(self) -> list[str]:
        return [str(tag) for tag in self.meta.get("tags") or []]

    @property
    def digest(self) -> str:
        """A hash of what the model reads (title and body): a changed text changes it."""
        return hashlib.sha256(f"{self.title}\n\n{self.body}".encode()).hexdigest()

    @property
    def text(self) -> str:
        return f"{self.title}\n\n{self.body}"

    def matches(self, wanted: Mapping[str, Any]) -> bool:
        """Metadata equality for each key; `tags` (or any list) must hold the value."""
        for key, value in wanted.items():
            have = self.meta.get(key)
            if isinstance(have, list):
                if value not in have:
                    return False
            elif have != value:
                return False
        return True


@dataclass(frozen=True)
class Hit:
    document: Document
    score: float
    rank: int


@dataclass
class Library:
    """A loaded library: its declaration, its documents in id order, and its BM25 index
    (built on first use) or its document vectors (embedded on first use, per model)."""

    name: str
    spec: LibrarySpec
    documents: list[Document]
    model: str | None = None  # the model an `embeddings` library's alias resolves to
    _index: Any = field(default=None, repr=False)
    _vectors: list[list[float]] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def method(self) -> str:
        return self.spec.method

    def by_id(self) -> dict[str, Document]:
        return {doc.id: doc for doc in self.documents}

    def meta_keys(self) -> set[str]:
        """The metadata a filter may name: tags, and any key some document has."""
        return {"tags", *(key for doc in self.documents for key in doc.meta)}

    def search(
        self, query: str, k: int, wanted: Mapping[str, Any], embed: Embed | None = None
    ) -> list[Hit]:
        """The top `k` documents matching `wanted` for `query`, best first. BM25 keeps only
        documents sharing a word with the query (a score above 0): none is no match."""
        if not query.strip() or not self.documents:
            return []
        if self.method == "bm25":
            scores = self._bm25(query)
            candidates = [int(n) for n in numpy.flatnonzero(scores > 0)]
        else:
            scores = numpy.array(self._cosine(query, embed))
            candidates = list(range(len(self.documents)))
        ranked = sorted(
            (-round(float(scores[n]), 6), self.documents[n].id, n)
            for n in candidates
            if self.documents[n].matches(wanted)
        )
        return [
            Hit(self.documents[n], -negative, rank)
            for rank, (negative, _, n) in enumerate(ranked[:k], start=1)
        ]

    def _bm25(self, query: str) -> numpy.ndarray:
        with self._lock:
            if self._index is None:
                index = bm25s.BM25()
                corpus = [tokens(doc.text) or ["\u2205"] for doc in self.documents]
                index.index(corpus, show_progress=False)
                self._index = index
        known = [word for word in tokens(query) if word in self._index.vocab_dict]
        if not known:
            return numpy.zeros(len(self.documents))
        return self._index.get_scores(known)

    def _cosine(self, query: str, embed: Embed | None) -> list[float]:
        if embed is None or self.model is None:
            raise RankingError(f"library {self.name!r} ranks by embeddings: none are available")
        try:
            with self._lock:
                if self._vectors is None:
                    self._vectors = embed(self.model, [doc.text for doc in self.documents])
            # the query is what a participant wrote: embedded, never cached
            (wanted,) = embed(self.model, [query], keep=False)
        except EmbeddingError as exc:
            raise RankingError(str(exc)) from None
        if len(wanted) != len(self._vectors[0]):
            raise RankingError("the query's vector and the documents' differ in length")
        return [cosine(wanted, vector) for vector in self._vectors]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


def document_problems(
    meta: Mapping[str, Any], seen: Mapping[str, str]
) -> list[tuple[str | None, str]]:
    """What is wrong with a document's front matter (the key at fault, and why)."""
    problems: list[tuple[str | None, str]] = []
    doc_id = meta.get("id")
    if doc_id is None or not str(doc_id).strip():
        problems.append((None, "a library document needs an `id`"))
    elif str(doc_id) in seen:
        problems.append(("id", f"the id {str(doc_id)!r} is also used by {seen[str(doc_id)]}"))
    if not str(meta.get("title") or "").strip():
        problems.append((None, "a library document needs a `title`"))
    tags = meta.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str | int) for t in tags):
        problems.append(("tags", "`tags` is a list of words: [sleep, stress]"))
    for key, value in meta.items():
        if key in RESERVED:
            continue
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(item, str | int | float | bool) for item in items):
            problems.append((key, f"`{key}`: metadata is text, a number, yes/no or a list"))
    return problems


def folder_documents(folder: Path) -> list[Path]:
    """The documents of a library folder: every .md file under it but README.md, by path."""
    if not folder.is_dir():
        return []
    found = sorted(p for p in folder.rglob("*.md") if p.is_file())
    return [p for p in found if p.name.lower() != "readme.md"]
