"""events.csv put back in global order after a read in another order: an external merge sort.

`tandem export` reads each participant's events once, batch by batch in stream order, for the
per-participant files, and makes each event's events.csv line as it reads it (before, the
events file read every event a second time, in order of seq). `SortedRuns` takes those lines
in any order and gives them back in order of seq: it holds them in memory (UTF-8 encoded, as
the file holds them) up to a budget of bytes, then sorts what it holds and writes it to a run
file; `merged` merges the runs and what is still held in one pass, a block of lines at a time.
The export adds the lines of the events of no participant too (the system's), read while its
worker processes run.
An export's worker process (bot.store.jobs) hands its runs over (`hand_over`) to the
export's own `SortedRuns`, which takes them (`adopt`) and merges them with its own.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate
from operator import itemgetter
from pathlib import Path
from types import TracebackType
from typing import IO

from bot.reporting.cells import private

# What SortedRuns holds in memory before it writes a run: bytes of lines, UTF-8 encoded (a line
# costs its length and some 120 bytes of Python objects besides).
RUN_BYTES = 32 * 1024 * 1024
# Lines a run file's block holds, and `merged` takes from each source at a time.
BLOCK = 4096
_SEQ, _LINE = itemgetter(0), itemgetter(1)


class SortedRuns:
    """Lines keyed by a unique `seq`, added in any order, read back in order of seq.

    Run files are written to `folder` (the export's own, owner-only) as `.events-run-N` (after
    `prefix`: a worker process's own), readable by their owner only, and removed on leaving
    the `with` block, however it ends, unless handed over (`hand_over`) before.
    A run is a sequence of blocks of lines in order of seq (`_write_run`).
    """

    def __init__(self, folder: Path, budget: int | None = None, prefix: str = "") -> None:
        self.folder = folder
        self.prefix = prefix
        self.budget = RUN_BYTES if budget is None else budget
        self.held: list[tuple[int, bytes]] = []
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
        encoded = line.encode()  # here (in a worker process, with jobs), not in the merge
        self.held.append((seq, encoded))
        self.size += len(encoded)
        if self.size >= self.budget:
            self._spill()

    def _spill(self) -> None:
        self.held.sort(key=_SEQ)
        path = self.folder / f".events-run-{self.prefix}{len(self.runs)}"
        self.runs.append(path)
        with private(path, binary=True) as file:  # replaces one a failed export left behind
            _write_run(file, self.held)
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

    def merged(self) -> Iterator[list[bytes]]:
        """Every line added, in order of seq, UTF-8 encoded, in blocks (lists of lines, each
        block's after the one before). Each seq must be unique.

        Merged a block at a time, not a line at a time: each source (a run, or what is
        held) is read BLOCK lines at a time, and every line up to the least of the
        sources' last seqs in hand is taken from each and sorted in one `list.sort` (which
        merges sorted runs in C), in bytes, written as they will be. Merged line by line
        (`heapq.merge` over runs read as text) it cost more, in the export's own process,
        after its workers have ended."""
        self.held.sort(key=_SEQ)
        sources: list[Iterator[Sequence[tuple[int, bytes]]]] = [_read(p) for p in self.runs]
        sources.append(_chunks(self.held))
        hands = [_Hand(source) for source in sources]
        hands = [hand for hand in hands if hand.pairs]
        while hands:
            bound = min(hand.pairs[-1][0] for hand in hands)
            taken: list[tuple[int, bytes]] = []
            for hand in hands:
                taken += hand.upto(bound)
            taken.sort(key=_SEQ)
            yield list(map(_LINE, taken))
            hands = [hand for hand in hands if hand.pairs]


class _Hand:
    """What `merged` holds of one source: its next lines (`pairs` from `at`), refilled a block
    at a time from the source as they are taken."""

    def __init__(self, source: Iterator[Sequence[tuple[int, bytes]]]) -> None:
        self.source = source
        self.pairs: Sequence[tuple[int, bytes]] = next(source, [])
        self.at = 0

    def upto(self, bound: int) -> Sequence[tuple[int, bytes]]:
        """The lines in hand up to seq `bound`, taken; `pairs` refilled if they run out."""
        cut = bisect_right(self.pairs, bound, lo=self.at, key=_SEQ)
        taken = self.pairs[self.at : cut]
        self.at = cut
        if cut == len(self.pairs):
            self.pairs, self.at = next(self.source, []), 0
        return taken


def _chunks(pairs: Sequence[tuple[int, bytes]]) -> Iterator[Sequence[tuple[int, bytes]]]:
    """`pairs` in blocks of BLOCK."""
    for start in range(0, len(pairs), BLOCK):
        yield pairs[start : start + BLOCK]


def _write_run(file: IO[bytes], pairs: Sequence[tuple[int, bytes]]) -> None:
    """`pairs` (in order of seq) as a run's blocks of BLOCK lines: a block is a line
    `<count> <bytes>`, a line of its seqs and a line of its lines' lengths in bytes (each
    separated by spaces), then its lines, one after the other (a line may hold line breaks:
    a quoted CSV cell)."""
    for block in _chunks(pairs):
        seqs, lines = zip(*block, strict=True)
        data = b"".join(lines)
        file.write(b"%d %d\n" % (len(block), len(data)))
        file.write(" ".join(map(str, seqs)).encode() + b"\n")
        file.write(" ".join(map(str, map(len, lines))).encode() + b"\n")
        file.write(data)


def _read(path: Path) -> Iterator[list[tuple[int, bytes]]]:
    """A run's blocks (`_write_run`), each as (seq, line) pairs."""
    with path.open("rb") as file:
        readline, read = file.readline, file.read
        while header := readline():
            count, size = map(int, header.split(b" "))
            seqs = list(map(int, readline().split(b" ")))
            ends = list(accumulate(map(int, readline().split(b" "))))
            data = read(size)
            if len(seqs) != count or len(ends) != count or ends[-1] != size or len(data) != size:
                raise ValueError(f"run file {path.name} is cut short or malformed")
            yield list(zip(seqs, map(data.__getitem__, map(slice, [0, *ends], ends)), strict=True))
