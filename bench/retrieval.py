"""Benchmark library retrieval: BM25 top-2 over 1,000 documents, per query, beside a brute-force
baseline in the same run.

Documents (default 1,000, ~200 words each from a 3,000-word vocabulary with a Zipf-like
spread, seeded so every run builds the same corpus) and queries (default 200, 4-12 words) are
generated. For each query, in alternating rounds: Tandem (`Library.search(query, 2, {})`, the
bm25s index built once beforehand, its build time printed apart) and the baseline: a
hand-rolled BM25 of the same formula (Lucene's IDF, k1 1.5, b 0.75) scanning every document's
term counts for every query. It prints p50 and p99 per query of each, their ratio, and how
often both give the same two documents (a check that they rank alike).
Run by hand: `python bench/retrieval.py [--documents 1000] [--queries 200] [--rounds 5]`.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import percentile  # noqa: E402
from bench.rounds import alternate  # noqa: E402
from bot.interventions.language.format import Library as LibrarySpec  # noqa: E402
from bot.interventions.language.libraries import Document, Library, tokens  # noqa: E402

K1, B = 1.5, 0.75


def corpus(documents: int, seed: int = 11) -> list[Document]:
    rng = random.Random(seed)
    vocabulary = [f"w{n}" for n in range(3000)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    found = []
    for n in range(documents):
        words = rng.choices(vocabulary, weights, k=rng.randint(120, 280))
        found.append(Document(f"d{n:05d}", f"document {n}", " ".join(words), {"tags": []}, ""))
    return sorted(found, key=lambda doc: doc.id)


def queries(count: int, seed: int = 12) -> list[str]:
    rng = random.Random(seed)
    return [
        " ".join(f"w{rng.randint(0, 2999)}" for _ in range(rng.randint(4, 12)))
        for _ in range(count)
    ]


class BruteForce:
    """BM25 by hand: each document's term counts, every document scored for every query."""

    def __init__(self, documents: list[Document]) -> None:
        self.ids = [doc.id for doc in documents]
        self.counts = [Counter(tokens(doc.text)) for doc in documents]
        self.lengths = [sum(c.values()) for c in self.counts]
        self.average = sum(self.lengths) / len(self.lengths)
        frequency: Counter[str] = Counter()
        for counts in self.counts:
            frequency.update(counts.keys())
        n = len(documents)
        self.idf = {w: math.log(1 + (n - df + 0.5) / (df + 0.5)) for w, df in frequency.items()}

    def top(self, query: str, k: int) -> list[str]:
        words = [w for w in tokens(query) if w in self.idf]
        scored = []
        for doc_id, counts, length in zip(self.ids, self.counts, self.lengths, strict=True):
            norm = K1 * (1 - B + B * length / self.average)
            score = sum(self.idf[w] * counts[w] / (counts[w] + norm) for w in words if w in counts)
            if score > 0:
                scored.append((-round(score, 6), doc_id))
        return [doc_id for _, doc_id in sorted(scored)[:k]]


def timed(run) -> float:  # noqa: ANN001
    started = time.perf_counter()
    run()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    documents = corpus(args.documents)
    asked = queries(args.queries)
    library = Library("bench", LibrarySpec(path="bench"), documents)
    build = timed(lambda: library.search(asked[0], 2, {}))
    baseline_build = time.perf_counter()
    brute = BruteForce(documents)
    baseline_build = (time.perf_counter() - baseline_build) * 1000

    tandem_ms: list[float] = []
    brute_ms: list[float] = []
    same = 0
    for query in asked:
        cases = [
            ("tandem", lambda q=query: timed(lambda: library.search(q, 2, {}))),
            ("brute", lambda q=query: timed(lambda: brute.top(q, 2))),
        ]
        figures = alternate(cases, args.rounds)
        tandem_ms.append(min(figures["tandem"]))
        brute_ms.append(min(figures["brute"]))
        same += [hit.document.id for hit in library.search(query, 2, {})] == brute.top(query, 2)

    print(
        f"BM25 top-2 over {args.documents} documents, {args.queries} queries, "
        f"best of {args.rounds} alternating rounds per query (ms per query)"
    )
    print(
        f"index build: tandem (bm25s) {build:.1f} ms (with the first query), "
        f"baseline term counts {baseline_build:.1f} ms"
    )
    print(f"{'':10} {'p50':>9} {'p99':>9}")
    for name, values in (("tandem", tandem_ms), ("brute", brute_ms)):
        print(f"{name:10} {percentile(values, 50):9.3f} {percentile(values, 99):9.3f}")
    p50 = percentile(brute_ms, 50) / percentile(tandem_ms, 50)
    p99 = percentile(brute_ms, 99) / percentile(tandem_ms, 99)
    print(f"baseline / tandem: p50 {p50:.1f}x, p99 {p99:.1f}x")
    print(f"same top-2 as the baseline: {same}/{len(asked)} queries")


if __name__ == "__main__":
    main()
