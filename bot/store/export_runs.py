"""events.csv put back in global order after a read in another order: an external merge sort.

`tandem export` reads each participant's events once, batch by batch in stream order, for the
per-participant files, and makes each event's events.csv line as it reads it (before, the
events file read every event a second time, in order of seq). `SortedRuns` takes those lines
in any order and gives them back in order of seq: it holds them in memory up to a budget of
characters, then sorts what it holds and writes it to a run file; `merged` merges the runs,
what is still held, and the events of no participant (read in order of seq) in one pass.
An export's worker process (bot.store.jobs) hands its runs over (`hand_over`) to the
export's own `SortedRuns`, which takes them (`adopt`) and merges them with its own.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from operator import itemgetter
from pathlib import Path
from types import TracebackType

from bot.store.export_files import private

# What SortedRuns holds in memory before it writes a run: characters of lines (a line of text
# costs its length and some 90 bytes of Python objects besides).
RUN_CHARACTERS = 32 * 1024 * 1024
_SEQ = itemgetter(0)


class SortedRuns:
    """Lines keyed by a unique `seq`, added in any order, read back in order of seq.

    Run files are written to `folder` (the export's own, owner-only) as `.events-run-N` (after
    `prefix`: a worker process's own), readable by their owner only, and removed on leaving
    the `with` block, however it ends, unless handed over (`hand_over`) before.
    A run is a sequence of records, each a header line `<seq> <characters>` and that many
    characters of the line itself (a line may hold line breaks: a quoted CSV cell).
    """

    def __init__(self, folder: Path, budget: int | None = None, prefix: str = "") -> None:
        self.folder = folder
        self.prefix = prefix
        self.budget = RUN_CHARACTERS if budget is None else budget
        self.held: list[tuple[int, str]] = []
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
        with private(path, newline="") as file:  # replaces one a failed export left behind
            write = file.write
            for seq, line in self.held:
                write(f"{seq} {len(line)}\n")
                write(line)
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
        self.held.sort(key=_SEQ)
        sources: list[Iterable[tuple[int, str]]] = [_read(path) for path in self.runs]
        sources += [self.held, ordered]
        for _seq, line in heapq.merge(*sources, key=_SEQ):
            yield line


def _read(path: Path) -> Iterator[tuple[int, str]]:
    with path.open(encoding="utf-8", newline="") as file:
        readline, read = file.readline, file.read
        while header := readline():
            seq, size = header.split(" ")
            yield int(seq), read(int(size))
