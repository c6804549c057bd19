"""`tandem simulate` with WhatsApp personas (docs/simulate.md): a persona's `whatsapp` chance
enrolls participants on WhatsApp (drawn from the seed), the engine keeps to the 24-hour window
(0 violations, the greeting as the template), the report's check finds a planted violation, and
the same seed gives the same report."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from bot.sandbox.personas import Persona
from bot.sandbox.simulation import on_whatsapp
from bot.sandbox.whatsapp_window import TEMPLATE_SENT, check
from bot.store.event_types.messages import MessageQueued, MessageReceived, MessageSent
from bot.store.events import Event, EventData

CHATTY = """description: replies on WhatsApp within minutes
timezone: Europe/London
replies:
  probability: 0.9
  latency: {median_minutes: 5, spread: 0.5, max_minutes: 60}
whatsapp: 1
"""
SOMETIMES = """description: on WhatsApp half the time, replies rarely and late
timezone: America/New_York
replies:
  probability: 0.3
  latency: {median_minutes: 600, spread: 1, max_minutes: 2000}
  active_hours: ["09:00", "21:00"]
whatsapp: 0.5
"""
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def personas(tmp_path: Path) -> Path:
    where = tmp_path / "personas"
    where.mkdir(exist_ok=True)
    (where / "chatty.yaml").write_text(CHATTY)
    (where / "sometimes.yaml").write_text(SOMETIMES)
    return where


def simulate(report: Path, where: Path, *more: str) -> dict[str, Any]:
    args = ["simulate", "demo", "--personas", str(where), "--participants", "12", "--days", "5"]
    result = CliRunner().invoke(cli, [*args, *more, "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert "WhatsApp window violations: 0" in result.output
    return json.loads((report / "report.json").read_text())


def enrolled(report: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The channel of each participant, as `tandem events` reads the run's database."""
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{report / 'simulation.db'}")
    result = CliRunner().invoke(cli, ["events", "--type", "participant.enrolled"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    return [row["data"]["channel"] for row in rows]


@pytest.mark.parametrize("outside", ["defer", "template"])
def test_whatsapp_participants_get_nothing_free_form_outside_the_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, outside: str
) -> None:
    """Held until they write (defer) or sent as the template: either way no violation."""
    monkeypatch.delenv("WHATSAPP_TEMPLATE_SID", raising=False)  # the simulation's stand-in
    if outside == "template":  # a deployment sending the template needs to name it
        monkeypatch.setenv("WHATSAPP_TEMPLATE_SID", "HX" + "a" * 32)
    monkeypatch.setenv("WHATSAPP_OUTSIDE_WINDOW", outside)
    found = simulate(tmp_path / "r", personas(tmp_path))
    channels = enrolled(tmp_path / "r", monkeypatch)
    count = channels.count("whatsapp")
    assert count >= found["summary"]["personas"]["chatty"] and "sms" in channels
    burden = found["burden"]
    assert burden["window_violations"] == 0
    assert burden["template_sends"] >= count  # every greeting went out as the template
    if outside == "template":  # silences longer than a day were bridged by the template
        assert burden["template_sends"] > count


def test_the_same_seed_gives_the_same_report_with_whatsapp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WHATSAPP_TEMPLATE_SID", raising=False)
    where = personas(tmp_path)
    one = simulate(tmp_path / "one", where, "--seed", "4")
    two = simulate(tmp_path / "two", where, "--seed", "4")
    assert (tmp_path / "one" / "report.json").read_bytes() == (
        tmp_path / "two" / "report.json"
    ).read_bytes()
    assert one == two
    assert enrolled(tmp_path / "one", monkeypatch) == enrolled(tmp_path / "two", monkeypatch)


def test_the_channel_is_drawn_with_the_personas_chance() -> None:
    half = Persona(description="x", whatsapp=0.5)
    drawn = [on_whatsapp(half, 1, n) for n in range(2000)]
    assert 900 < sum(drawn) < 1100  # 1000 expected; sd about 22
    assert drawn == [on_whatsapp(half, 1, n) for n in range(2000)]
    assert not any(on_whatsapp(Persona(description="x"), 1, n) for n in range(100))


def event(data: EventData, at: datetime, seq: int) -> Event:
    return Event(seq, f"e{seq}", "participant:p", seq, data, {}, None, at, at)


def queued(oid: str, **more: Any) -> MessageQueued:
    return MessageQueued(
        outbox_id=oid, to_address="whatsapp:+15550100000", channel="whatsapp", body="hi", **more
    )


def test_the_check_finds_a_free_form_message_sent_after_the_window_closed() -> None:
    """Planted: a free-form message 25 h after the last inbound, and one before any; a
    template and a message within the window are not violations."""
    inbound = MessageReceived(
        message_sid="SM1",
        from_address="whatsapp:+15550100000",
        to_address="whatsapp:+15005550006",
        channel="whatsapp",
        body="ok",
    )
    tpl = "HX" + "0" * 32
    events = [
        event(queued("a"), START, 1),
        event(MessageSent(outbox_id="a", provider_sid="SM1"), START, 2),  # before any inbound
        event(queued("b", content_sid=tpl), START, 3),
        event(MessageSent(outbox_id="b", provider_sid="SM2"), START, 4),
        event(inbound, START + timedelta(hours=1), 5),
        event(queued("c"), START + timedelta(hours=2), 6),
        event(MessageSent(outbox_id="c", provider_sid="SM3"), START + timedelta(hours=24), 7),
        event(queued("d"), START + timedelta(hours=26), 8),
        event(MessageSent(outbox_id="d", provider_sid="SM4"), START + timedelta(hours=26), 9),
        event(queued("e"), START + timedelta(hours=26), 10),
        event(
            MessageSent(outbox_id="e", provider_sid=TEMPLATE_SENT + "x"),
            START + timedelta(hours=27),
            11,
        ),
    ]
    found = check(events)
    assert [v["since"] for v in found.violations] == ["never wrote", "1 day, 1:00:00"]
    assert found.templates == 2 and found.free_form == 3
    sms = [event(queued("f").model_copy(update={"channel": "sms"}), START, 1)]
    sms.append(event(MessageSent(outbox_id="f", provider_sid="SM5"), START, 2))
    assert check(sms).violations == [] and check(sms).free_form == 0
