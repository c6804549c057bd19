"""Embeddings for libraries ranked by meaning: a file cache in front of the LLM client's
`/embeddings` call, so a library document is embedded once per model however often it is
ranked, across processes and restarts.

Only library documents are cached (`keep=True`); a query, which is made of what a participant
wrote, is embedded afresh each time and never written or looked up (`keep=False`), so the cache
holds nothing of a participant to erase (a file named by the hash of their text would tell
whether they wrote a guessed sentence). The cache key is the SHA-256 of the model and the text;
each vector is one JSON file under `EMBEDDINGS_CACHE_DIR/documents/` (`<first two hex
digits>/<key>.json`, written whole then renamed, so a crash never leaves half a vector and two
processes writing the same key write the same thing). Files of the earlier layout (directly
under the folder, queries among them) are deleted when the cache opens. A file cache rather
than a table: vectors are derived data, rebuilt by calling the endpoint again, and never part
of a participant's record (`retrieval.done` records what was found).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

Fetch = Callable[[str, list[str]], list[list[float]]]  # model, texts -> vectors
DOCUMENTS = "documents"
_EARLIER = re.compile(r"[0-9a-f]{2}")  # a folder of the earlier layout


class Embed(Protocol):
    """model, texts -> one vector each; `keep=False` for a query (nothing of it kept); raises
    EmbeddingError when they cannot be had."""

    def __call__(
        self, model: str, texts: Sequence[str], *, keep: bool = True
    ) -> list[list[float]]: ...


class EmbeddingError(Exception):
    """The vectors could not be had: the endpoint failed or answered with something else."""


def key(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()


def checked(vectors: object, wanted: int) -> list[list[float]]:
    """The endpoint's answer, if it is `wanted` vectors of one length of finite numbers."""
    if not isinstance(vectors, list) or len(vectors) != wanted:
        raise EmbeddingError(f"expected {wanted} vectors from /embeddings")
    sizes = {len(v) if isinstance(v, list) else -1 for v in vectors}
    if len(sizes) > 1 or min(sizes, default=0) <= 0:
        raise EmbeddingError("the /embeddings vectors are not all of one length")
    for vector in vectors:
        if not all(isinstance(x, int | float) and math.isfinite(x) for x in vector):
            raise EmbeddingError("an /embeddings vector holds something other than numbers")
    return [[float(x) for x in vector] for vector in vectors]


class EmbeddingCache:
    """`embed(model, texts)`: each text's vector, from the cache or (all missing ones in one
    request) from `fetch`; `embed(model, texts, keep=False)` (a query): from `fetch` only,
    nothing read or written. Raises EmbeddingError."""

    def __init__(self, fetch: Fetch, folder: Path | str) -> None:
        self.fetch, self.root = fetch, Path(folder)
        self.folder = self.root / DOCUMENTS
        self.drop_earlier_layout()

    def drop_earlier_layout(self) -> int:
        """Delete the earlier layout's folders (`<two hex digits>/` under the root), whose
        files may be named by the hash of a participant's text; how many went."""
        if not self.root.is_dir():
            return 0
        earlier = [p for p in self.root.iterdir() if p.is_dir() and _EARLIER.fullmatch(p.name)]
        for folder in earlier:
            shutil.rmtree(folder, ignore_errors=True)
        return len(earlier)

    def path(self, model: str, text: str) -> Path:
        found = key(model, text)
        return self.folder / found[:2] / f"{found}.json"

    def __call__(self, model: str, texts: Sequence[str], *, keep: bool = True) -> list[list[float]]:
        if not keep:
            return checked(self.fetch(model, list(texts)), len(texts))
        vectors: dict[int, list[float]] = {}
        for n, text in enumerate(texts):
            cached = self.read(self.path(model, text))
            if cached is not None:
                vectors[n] = cached
        missing = [n for n in range(len(texts)) if n not in vectors]
        if missing:
            fetched = checked(self.fetch(model, [texts[n] for n in missing]), len(missing))
            for n, vector in zip(missing, fetched, strict=True):
                vectors[n] = vector
                self.write(self.path(model, texts[n]), vector)
        return [vectors[n] for n in range(len(texts))]

    @staticmethod
    def read(path: Path) -> list[float] | None:
        try:
            vector = json.loads(path.read_text())
        except (OSError, ValueError):
            return None  # not cached (or a damaged file): embedded again, and rewritten
        return vector if isinstance(vector, list) and vector else None

    @staticmethod
    def write(path: Path, vector: list[float]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=path.parent, suffix=".partial")
        with os.fdopen(fd, "w") as file:
            json.dump(vector, file)
        os.replace(partial, path)
