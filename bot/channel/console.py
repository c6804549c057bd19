"""Console messengers: `serve`'s prints the conversation to stdout; `tandem chat`'s keeps it."""

from __future__ import annotations

import logging
import secrets
import sys
import threading
from collections.abc import Iterable
from typing import TextIO

from bot.channel.messenger import OutboundMessage, SendResult
from bot.store.event_types.messages import MessageReceived
from bot.store.events import Event

log = logging.getLogger(__name__)

SENT = "-->"
RECEIVED = "<--"
NEWLINE = " / "  # one line per message: a body's line breaks are shown as " / "
_COLOURS = {SENT: "\033[36m", RECEIVED: "\033[33m"}  # cyan: sent; yellow: the participant's
_RESET = "\033[0m"


class ConsoleMessenger:
    """Shows the conversation on `out` (stdout by default), one line per message: what is sent
    (`-->`) and, once subscribed to the store (`store.listeners.append(m.received)`), what the
    participant sent (`<--`). Each send gets a fake provider sid.

    Colour only when `out` is a terminal (`colour=None`); redirected output is plain text.
    The printed line is the record of a send here: nothing is logged at INFO per message, and
    the DEBUG line carries only ids, so bodies and phone numbers stay out of the logs.
    """

    shows_sends = True  # the dispatcher leaves the per-send INFO line to messengers that don't
    sends_in_process = True  # nothing leaves the process: the dispatcher claims rows in batches

    def __init__(self, out: TextIO | None = None, *, colour: bool | None = None) -> None:
        self.out = out
        self.colour = colour
        self._lock = threading.Lock()

    def send(self, message: OutboundMessage) -> SendResult:
        sid = "CONSOLE" + secrets.token_hex(14)
        if message.content_sid:
            variables = dict(message.content_variables or {})
            text = f"[template {message.content_sid}] {variables}"
        else:
            text = message.body or ""
        self._show(SENT, message.to_address, message.channel, text)
        log.debug("console messenger sent outbox %s as %s", message.outbox_id, sid)
        return SendResult(provider_sid=sid, status="sent")

    def received(self, events: Iterable[Event]) -> None:
        """A store listener: shows each inbound message the participant sent."""
        for event in events:
            data = event.data
            if isinstance(data, MessageReceived):
                media = f" [{len(data.media)} media]" if data.media else ""
                self._show(RECEIVED, data.from_address, data.channel, data.body + media)

    def _show(self, arrow: str, address: str, channel: str, text: str) -> None:
        out = self.out or sys.stdout
        body = NEWLINE.join(part.strip() for part in text.strip().splitlines())
        colour = self.colour if self.colour is not None else _is_terminal(out)
        lead = f"{_COLOURS[arrow]}{arrow}{_RESET}" if colour else arrow
        with self._lock:  # several dispatcher threads: one line per message, never interleaved
            out.write(f"{lead} {address} ({channel}): {body}\n")
            out.flush()


def _is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream: no colour
        return False


class CollectingMessenger:
    """The chat sandbox's phone (`tandem chat`): keeps each message, in sending order, until
    the sandbox takes them to show."""

    sends_in_process = True  # nothing leaves the process: the dispatcher claims rows in batches

    def __init__(self) -> None:
        self._sent: list[OutboundMessage] = []
        self._lock = threading.Lock()

    def send(self, message: OutboundMessage) -> SendResult:
        with self._lock:
            self._sent.append(message)
        return SendResult(provider_sid="CHAT" + secrets.token_hex(14), status="sent")

    def take(self) -> list[OutboundMessage]:
        """The messages sent since the last call, oldest first."""
        with self._lock:
            taken, self._sent = self._sent, []
        return taken
