"""`tandem`: the console script's target. The group (`bot.cli.root`) imports each command's
module when the command is used (`bot.cli.commands` names them)."""

from __future__ import annotations

import sys

from bot.cli.root import cli


def main() -> None:
    sys.exit(cli.main(standalone_mode=True))
