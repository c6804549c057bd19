"""events.csv put back in global order after a read in another order: an external merge sort.

`tandem export` reads each participant's events once, batch by batch in stream order, for the
per-participant files, and makes each event's events.csv line as it reads it (before, the
events file read every event a second time, in order of seq). `SortedRuns` takes those lines
in any order and gives them back in order of seq: it holds them in memory up to a budget of
characters, then sorts what it holds and writes it to a run file; `merged` merges the runs,
what is still held, and the events of no participant (read in order of seq) in one pass.
An export's worker process (bot.store.jobs) hands its runs over (`hand_over`) to the
export's own `SortedRuns`, which takes them (`adopt`) and merges them with its own.

The merge goes a block at a time, not a line at a time: each source gives its lines in sorted
blocks of up to `BLOCK`, and every line up to the smallest last seq of the sources' current
blocks is taken from them all and sorted together (Python's sort, which merges the sorted runs
it is given in C), since no line still to come from any source is below that seq. A line at a
time through `heapq.merge` cost about 1 us a line in the export's own process after its
workers had ended; a block costs a fifth of that.
"""

from __future__ import annotations

import marshal
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from itertools import chain, islice
from operator import itemgetter
from pathlib import Path
from types import TracebackType

from bot.store.export_files import private_bytes

# What SortedRuns holds in memory before it writes a run: characters of lines (a line of text
# costs its length and some 90 bytes of Python objects besides).
RUN_CHARACTERS = 32 * 1024 * 1024
# The most lines of a block: what a run file holds in one record, and what the merge takes
# from a source at once.
BLOCK = 4096
_SEQ = itemgetter(0)
Block = list[tuple[int, str]]


class SortedRuns:
    """Lines keyed by a unique `seq`, added in any order, read back in order of seq.

    Run files are written to `folder` (the export's own, owner-only) as `.events-run-N` (after
    `prefix`: a worker process's own), readable by their owner only, and removed on leaving
    the `with` block, however it ends, unless handed over (`hand_over`) before.
    A run is a sequence of records, each a block (a list of up to BLOCK (seq, line) pairs,
    in order of seq) in `marshal`'s format: written and read back by the export itself, in its
    owner-only folder, and never kept (marshal reads no other program's data, and runs none).
    """

    def __init__(self, folder: Path, budget: int | None = None, prefix: str = "") -> None:
        self.folder = folder
        self.prefix = prefix
        self.budget = RUN_CHARACTERS if budget is None else budget
        self.held: Block = []
        self.size = 0
        self.runs: list[Path] = []

    def __enter__(self) -> SortedRuns:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.held = []
        for path in self.runs:
            path.unlink(missing_ok=True)
        self.runs = []

    def add(self, seq: int, line: str) -> None:
        self.held.append((seq, line))
        self.size += len(line)
        if self.size >= self.budget:
            self._spill()

    def _spill(self) -> None:
        self.held.sort(key=_SEQ)
        path = self.folder / f".events-run-{self.prefix}{len(self.runs)}"
        self.runs.append(path)
        with private_bytes(path) as file:  # replaces one a failed export left behind
            for block in _blocks(self.held):
                marshal.dump(block, file)
        self.held, self.size = [], 0

    def hand_over(self) -> list[Path]:
        """Every line added, written to run files, whose paths are returned: they are the
        caller's to `adopt` (and remove) from here on, not this one's."""
        if self.held:
            self._spill()
        runs, self.runs = self.runs, []
        return runs

    def adopt(self, runs: list[Path]) -> None:
        """Run files another `SortedRuns` handed over, merged with these lines and removed
        with these runs."""
        self.runs += runs

    def merged(self, ordered: Iterable[tuple[int, str]] = ()) -> Iterator[str]:
        """Every line added, and those of `ordered` (already in order of seq), in order of
        seq. Each seq must be unique across them all."""
        return chain.from_iterable(self.merged_blocks(ordered))

    def merged_blocks(self, ordered: Iterable[tuple[int, str]] = ()) -> Iterator[list[str]]:
        """`merged`'s lines, in lists of one or more (for a writer that writes a list at once)."""
        self.held.sort(key=_SEQ)
        sources: list[Iterator[Block]] = [_read(path) for path in self.runs]
        sources += [_blocks(self.held), _blocks(ordered)]
        return _merge(sources)


def _blocks(pairs: Iterable[tuple[int, str]]) -> Iterator[Block]:
    """`pairs` in lists of up to BLOCK."""
    it = iter(pairs)
    while block := list(islice(it, BLOCK)):
        yield block


def _read(path: Path) -> Iterator[Block]:
    with path.open("rb") as file:
        while True:
            try:
                yield marshal.load(file)
            except EOFError:
                return


def _merge(sources: list[Iterator[Block]]) -> Iterator[list[str]]:
    """The lines of `sources` (each a source of blocks in order of seq, each block after the
    one before) in order of seq, a list at a time: each round takes, from every source's
    current block, its lines up to the smallest last seq of those blocks (the whole of the
    block that ends there), and sorts them together."""
    current: list[tuple[Block, Iterator[Block]]] = []  # each source's block, and its next ones
    for source in sources:
        if first := next(source, None):
            current.append((first, source))
    while current:
        limit = min(block[-1][0] for block, _rest in current)
        taken: Block = []
        after: list[tuple[Block, Iterator[Block]]] = []
        for block, rest in current:
            cut = bisect_right(block, limit, key=_SEQ)
            taken += block[:cut] if cut < len(block) else block
            left = block[cut:] if cut < len(block) else next(rest, None)
            if left:
                after.append((left, rest))
        current = after
        taken.sort(key=_SEQ)
        yield [line for _seq, line in taken]
