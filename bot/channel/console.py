"""Console messengers: `serve`'s prints each message to stdout; `tandem chat`'s keeps them."""

from __future__ import annotations

import logging
import secrets
import sys
import threading
from typing import TextIO

from bot.channel.messenger import OutboundMessage, SendResult

log = logging.getLogger(__name__)


class ConsoleMessenger:
    """Writes each message to `out` (stdout by default) and returns a fake provider sid.

    The printed text is the point of this messenger; the log line carries only ids, so message
    bodies and phone numbers stay out of the logs at INFO.
    """

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out
        self._lock = threading.Lock()

    def send(self, message: OutboundMessage) -> SendResult:
        sid = "CONSOLE" + secrets.token_hex(14)
        if message.content_sid:
            variables = dict(message.content_variables or {})
            text = f"[template {message.content_sid}] {variables}"
        else:
            text = message.body or ""
        out = self.out or sys.stdout
        with self._lock:  # several dispatcher threads: one message per block, never interleaved
            out.write(f"--> {message.to_address} ({message.channel})\n{text}\n\n")
            out.flush()
        log.info("console messenger sent outbox %s as %s", message.outbox_id, sid)
        return SendResult(provider_sid=sid, status="sent")


class CollectingMessenger:
    """The chat sandbox's phone (`tandem chat`): keeps each message, in sending order, until
    the sandbox takes them to show."""

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
