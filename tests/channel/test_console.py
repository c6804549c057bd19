"""The console messenger prints each message and keeps its text out of the logs."""

from __future__ import annotations

import io
import logging

import pytest

from bot.channel.console import ConsoleMessenger
from bot.channel.messenger import OutboundMessage

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


def test_the_log_names_the_outbox_id_but_never_the_text_or_the_number(
    caplog: pytest.LogCaptureFixture,
):
    caplog.set_level(logging.DEBUG)

    ConsoleMessenger(io.StringIO()).send(OutboundMessage("o-77", TO, "sms", body="Secret text"))

    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "o-77" in logged
    assert "Secret text" not in logged and TO not in logged


def test_without_an_output_it_prints_to_stdout(capsys: pytest.CaptureFixture[str]):
    ConsoleMessenger().send(OutboundMessage("o-1", TO, "sms", body="On stdout"))

    assert "On stdout" in capsys.readouterr().out
