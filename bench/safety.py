"""Benchmark the learned crisis line's cost per message against the phrase screen alone.

Messages are the repository's own corpora (everyday.txt and every fifth line of the training
corpus, short replies and long messages alike; no held-out file is read), scored one at a time
as the worker sees them. In alternating rounds each message is screened by the
phrase screen alone, then by the phrase screen and the learned line (bot.conversation.learned,
one message per call as in the worker). It prints p50 and p95 per message of each and of the
learned line's added cost, in wall time and in the thread's CPU time, the learned line's
start-up time (import and model load, measured in a fresh process) and the resident memory it
adds (RSS after loading and scoring one message, minus RSS before).
Run by hand: `python bench/safety.py [--rounds 3] [--threads 1]`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import percentile  # noqa: E402
from bot.conversation.safety import CrisisScreen  # noqa: E402
from bot.conversation.safety_train import read_training  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "safety_corpus"
TARGET_P95_MS = 30.0

_STARTUP = """
import json, resource, time
def rss():
    return int(open('/proc/self/statm').read().split()[1]) * resource.getpagesize() / 2**20
before = rss()
start = time.perf_counter()
from bot.conversation.learned import EMBEDDERS, load_line, read_card
line = load_line(embedder=EMBEDDERS[read_card().embedder](threads={threads}))
loaded = time.perf_counter() - start
line.score("how was your day")
print(json.dumps({{"startup_s": loaded, "rss_mb": rss() - before}}))
"""


def messages() -> list[str]:
    everyday = (CORPUS / "everyday.txt").read_text(encoding="utf-8").splitlines()
    training = [example.item.text for example in read_training()[0]][::5]
    return [m for m in everyday if m.strip() and not m.startswith("#")] + training


def startup(threads: int) -> dict[str, float]:
    """Start-up and memory of the learned line, in a process of its own."""
    done = subprocess.run(
        [sys.executable, "-c", _STARTUP.format(threads=threads)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    return dict(json.loads(done.stdout.splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    from bot.conversation.learned import EMBEDDERS, load_line, read_card  # noqa: PLC0415

    screen = CrisisScreen.from_default()
    line = load_line(embedder=EMBEDDERS[read_card().embedder](threads=args.threads))
    texts = messages()
    # Wall time, and this thread's CPU time: on a shared machine the wall time also counts the
    # moments the thread waited for a core; the CPU time is what the message itself cost.
    figures: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for text in texts:
            for clock in (time.perf_counter, time.thread_time):
                start = clock()
                screen.check(text)
                middle = clock()
                line.score(text)
                end = clock()
                kind = "wall" if clock is time.perf_counter else "cpu"
                for name, value in (
                    ("phrase screen alone", middle - start),
                    ("phrase + learned", end - start),
                    ("learned line added", end - middle),
                ):
                    figures.setdefault(f"{name} ({kind})", []).append(value * 1000)
    cold = startup(args.threads)
    print(f"{len(texts)} messages x {args.rounds} rounds, model {line.version}")
    print(f"{'per message (ms)':<34}{'p50':>8}{'p95':>8}")
    for name, values in figures.items():
        print(f"{name:<34}{percentile(values, 50):>8.2f}{percentile(values, 95):>8.2f}")
    for kind in ("wall", "cpu"):
        p95 = percentile(figures[f"phrase + learned ({kind})"], 95)
        verdict = "meets" if p95 <= TARGET_P95_MS else "MISSES"
        print(f"p95 target {TARGET_P95_MS:.0f} ms for phrase + learned ({kind}): {verdict}")
    print(f"learned start-up {cold['startup_s']:.2f} s, RSS added {cold['rss_mb']:.0f} MiB")


if __name__ == "__main__":
    main()
