"""The console messenger shows each message both ways, one line each, coloured only on a
terminal, and keeps its text out of the logs."""

from __future__ import annotations

import datetime as dt
import io
import logging
import os

import pytest

from bot.channel.console import ConsoleMessenger
from bot.channel.messenger import OutboundMessage
from bot.store.event_types.messages import MessageQueued, MessageReceived
from bot.store.events import Event

TO = "+14155552671"


def test_a_message_is_printed_with_its_recipient_and_gets_a_console_sid():
    out = io.StringIO()

    result = ConsoleMessenger(out).send(OutboundMessage("o-1", TO, "sms", body="Hello there"))

    assert "Hello there" in out.getvalue()
    assert TO in out.getvalue()
    assert result.provider_sid.startswith("CONSOLE")


def test_each_send_gets_its_own_sid():
    messenger = ConsoleMessenger(io.StringIO())
    message = OutboundMessage("o-1", TO, "sms", body="Hi")

    assert messenger.send(message).provider_sid != messenger.send(message).provider_sid


def test_a_template_is_printed_with_its_content_sid_and_variables():
    out = io.StringIO()

    ConsoleMessenger(out).send(
        OutboundMessage("o-1", TO, "whatsapp", content_sid="HX1", content_variables={"1": "Hi"})
    )

    assert "HX1" in out.getvalue() and "Hi" in out.getvalue()


def test_a_send_logs_nothing_at_info_and_only_ids_at_debug(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)

    ConsoleMessenger(io.StringIO()).send(OutboundMessage("o-77", TO, "sms", body="Secret text"))

    assert [r.levelno for r in caplog.records] == [logging.DEBUG]
    logged = caplog.records[0].getMessage()
    assert "o-77" in logged
    assert "Secret text" not in logged and TO not in logged


def test_each_message_is_one_line_its_line_breaks_shown_as_slashes():
    out = io.StringIO()

    ConsoleMessenger(out).send(
        OutboundMessage("o-1", TO, "sms", body="Pick one:\n1. Sleep\n2. Stress\n")
    )

    assert out.getvalue() == f"--> {TO} (sms): Pick one: / 1. Sleep / 2. Stress\n"


def _received(body: str, channel: str = "sms", media: list | None = None) -> Event:
    data = MessageReceived(
        message_sid="SM1",
        from_address=TO,
        to_address="+15005550006",
        channel=channel,
        body=body,
        media=media or [],
    )
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    return Event(1, "e-1", "participant:p-1", 1, data, {}, None, now, now)


def test_what_the_participant_sent_is_shown_and_nothing_else_of_the_store():
    out = io.StringIO()
    messenger = ConsoleMessenger(out)
    queued = MessageQueued(outbox_id="o-1", to_address=TO, channel="sms", body="Not shown")
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

    messenger.received(
        [
            _received("hello\nthere", channel="whatsapp"),
            Event(2, "e-2", "participant:p-1", 2, queued, {}, None, now, now),
        ]
    )

    assert out.getvalue() == f"<-- {TO} (whatsapp): hello / there\n"


def test_colour_only_on_a_terminal():
    piped = io.StringIO()
    ConsoleMessenger(piped).send(OutboundMessage("o-1", TO, "sms", body="Hi"))
    assert piped.getvalue() == f"--> {TO} (sms): Hi\n"

    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as terminal:
        messenger = ConsoleMessenger(terminal)
        messenger.send(OutboundMessage("o-1", TO, "sms", body="Hi"))
        messenger.received([_received("hello")])
        shown = ""
        while "hello" not in shown:
            shown += os.read(leader, 4096).decode()
    os.close(leader)
    assert shown.replace("\r\n", "\n") == (
        f"\x1b[36m-->\x1b[0m {TO} (sms): Hi\n\x1b[33m<--\x1b[0m {TO} (sms): hello\n"
    )


def test_without_an_output_it_prints_to_stdout(capsys: pytest.CaptureFixture[str]):
    ConsoleMessenger().send(OutboundMessage("o-1", TO, "sms", body="On stdout"))

    assert "On stdout" in capsys.readouterr().out
