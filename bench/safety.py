"""Benchmark the learned crisis line's cost per message against the phrase screen alone.

Messages are the repository's own corpora (everyday.txt, heldout_v3.tsv, one message per line,
as the worker sees them: one at a time). In alternating rounds each message is screened by the
phrase screen alone, then by the phrase screen and the learned line (bot.conversation.learned,
one message per call as in the worker). It prints p50 and p95 per message of each and of the
learned line's added cost, the learned line's start-up time (import and model load, measured
in a fresh process) and the resident memory it adds (RSS after loading and scoring one
message, minus RSS before). Run by hand: `python bench/safety.py [--rounds 3] [--threads 1]`.
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
from bot.conversation.safety_eval import read_corpus  # noqa: E402

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
    labelled = read_corpus((CORPUS / "heldout_v3.tsv").read_text(encoding="utf-8").splitlines())
    return [m for m in everyday if m.strip()] + [item.text for item in labelled]


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
    phrase: list[float] = []
    both: list[float] = []
    added: list[float] = []
    for _ in range(args.rounds):
        for text in texts:
            start = time.perf_counter()
            screen.check(text)
            middle = time.perf_counter()
            line.score(text)
            end = time.perf_counter()
            phrase.append((middle - start) * 1000)
            both.append((end - start) * 1000)
            added.append((end - middle) * 1000)
    cold = startup(args.threads)
    print(f"{len(texts)} messages x {args.rounds} rounds, model {line.version}")
    print(f"{'per message (ms)':<28}{'p50':>8}{'p95':>8}")
    for name, values in (
        ("phrase screen alone", phrase),
        ("phrase + learned", both),
        ("learned line added", added),
    ):
        print(f"{name:<28}{percentile(values, 50):>8.2f}{percentile(values, 95):>8.2f}")
    verdict = "meets" if percentile(both, 95) <= TARGET_P95_MS else "MISSES"
    print(f"p95 target {TARGET_P95_MS:.0f} ms for phrase + learned: {verdict}")
    print(f"learned start-up {cold['startup_s']:.2f} s, RSS added {cold['rss_mb']:.0f} MiB")


if __name__ == "__main__":
    main()
