"""`tandem`: the group with every command family registered (the console script's target)."""

from __future__ import annotations

import sys

from bot.cli import (  # noqa: F401  (each module registers its commands on the group)
    analyze,
    chat,
    enroll,
    erase,
    events,
    export,
    interventions,
    keys,
    maintenance,
    run,
    safety,
    store,
    study,
    timers,
    users,
    withdraw,
)
from bot.cli.root import cli


def main() -> None:
    sys.exit(cli.main(standalone_mode=True))
