"""A writer process for the multi-process SQLite test (run with `python -m`)."""

from __future__ import annotations

import sys

from sqlalchemy.exc import OperationalError

from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.event_types import MessageReceived
from bot.store.events import participant_stream


def main(url: str, name: str, count: int) -> int:
    store = EventStore(make_engine(url))
    locked = 0
    for i in range(count):
        stream = participant_stream(f"shared-{i % 3}") if i % 2 else participant_stream(name)
        event = MessageReceived(
            message_sid=f"{name}-{i}",
            from_address="+14155552671",
            to_address="+15005550006",
            channel="sms",
            body=str(i),
        )
        try:
            store.append(stream, [event])
        except OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                locked += 1
            else:
                raise
    print(f"locked={locked}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
