"""The soak under faults, short (bench/soak.py): 50 participants x 14 simulated days on
PostgreSQL in the Procfile's layout (gunicorn + 2 `tandem worker`, a shared simulated clock),
with a worker and the web killed and PostgreSQL restarted, and nothing lost or duplicated."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from bench.soak import Options, run
from bench.soak_checks import print_figures
from bench.soak_procs import can_restart_postgres


@pytest.mark.slow
def test_fifty_participants_for_two_weeks_under_faults_lose_and_duplicate_nothing(
    tmp_path: Path,
) -> None:
    cannot = can_restart_postgres()  # None: it can (pg_ctlcluster, a local cluster, root)
    started = time.perf_counter()
    figures = run(
        Options(participants=50, days=14, seed=1, pg_restarts=0 if cannot else 1, quiet=True),
        tmp_path,
    )
    print_figures(figures, file=sys.stderr)
    sys.stderr.write(f"soak test: {time.perf_counter() - started:.0f} s\n")
    assert figures.failures == [], figures.failures
    assert figures.faults.get("worker", 0) >= 1 and figures.faults.get("web", 0) >= 1
    counts = figures.counts
    assert counts["inbound acknowledged"] > 50 and counts["outbound sent (fake Twilio)"] > 100
    for name in (
        "inbound lost",
        "inbound duplicated",
        "outbound lost",
        "outbound duplicated",
        "timers lost",
        "timers fired twice",
        "replay --check exit",
    ):
        assert counts[name] == 0, name
    assert counts["timers fired"] > 14 * 25  # the daily check-ins fired, at least half of them
    assert figures.rss  # read, and within 10 % (a failure above otherwise)
    if cannot:  # everything else passed; say, in the summary, what was not tested
        pytest.skip(f"PostgreSQL was NOT restarted (cannot restart it here: {cannot})")
    assert figures.faults["postgres"] == 1
