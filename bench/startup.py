"""Time `tandem` commands as whole processes: start, import, run, exit.

Each command runs as `python -c "from bot.cli.main import main; main()" ARGS` (what the
`tandem` console script runs) with the tree first on PYTHONPATH, `--runs` times, and the
min, median and max wall time are printed. With `--base REV`, REV is checked out with
`git worktree add` into a temporary directory and its runs alternate with this tree's, so that
both see the same load. Wall time on a loaded machine is noisy: read the min. Run by hand:
`python bench/startup.py [--runs 7] [--base REV]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
COMMANDS = (
    ("--help",),
    ("export", "--help"),
    ("keys", "generate"),
    ("interventions", "validate"),
)
ENTRY = "from bot.cli.main import main; main()"


@contextmanager
def _worktree(rev: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="tandem-startup-") as tmp:
        path = Path(tmp) / "base"
        subprocess.run(
            ["git", "-C", HERE, "worktree", "add", "--detach", "--quiet", path, rev], check=True
        )
        try:
            yield path
        finally:
            subprocess.run(["git", "-C", HERE, "worktree", "remove", "--force", path], check=False)


def _once(tree: Path, args: tuple[str, ...]) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, *args], cwd=tree, env=env, capture_output=True
    )
    took = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"tandem {' '.join(args)} failed in {tree}: {done.stderr.decode()}")
    return took


def _cell(times: list[float]) -> str:
    return f"{min(times):.2f} / {statistics.median(times):.2f} / {max(times):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs of each command per tree")
    parser.add_argument("--base", help="a git revision to compare with (a temporary worktree)")
    args = parser.parse_args()
    with ExitStack() as stack:
        trees = {"now": HERE}
        if args.base:
            trees = {"base": stack.enter_context(_worktree(args.base)), **trees}
        times: dict[tuple[str, tuple[str, ...]], list[float]] = {}
        for _ in range(args.runs):
            for command in COMMANDS:
                for tag, tree in trees.items():  # alternating: both trees see the same load
                    times.setdefault((tag, command), []).append(_once(tree, command))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.runs} runs each; seconds min / median / max; load average {load}")
    print("| command | " + " | ".join(trees) + " |")
    print("|---|" + "---:|" * len(trees))
    for command in COMMANDS:
        cells = " | ".join(_cell(times[(tag, command)]) for tag in trees)
        print(f"| `tandem {' '.join(command)}` | {cells} |")


if __name__ == "__main__":
    main()
