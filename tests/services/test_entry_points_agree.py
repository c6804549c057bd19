"""The API, the console and `tandem` do the same thing when asked to enroll or withdraw: each
test runs once per entry point and checks the same outcome."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from click.testing import CliRunner
from flask import Flask
from sqlalchemy import select

from bot.cli.main import cli
from bot.runtime.routing import intervention_catalogue
from bot.services import takeover
from bot.store.schema import participants
from bot.store.services import Services
from tests.conftest import TEST_MASTER_KEY
from tests.console.conftest import post
from tests.web.researcher import AUTH, BASE

ENTRY_POINTS = ("api", "console", "cli")
ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass(frozen=True)
class Outcome:
    """What an entry point answered: the participant it acted on, or the text of its refusal."""

    participant_id: str | None
    refusal: str | None


class EntryPoint:
    """One way in (the API, the console or the CLI), asked to enroll or withdraw."""

    def __init__(self, kind: str, app: Flask, signed_in: Callable, database_url: str) -> None:
        self.kind = kind
        self.api = app.test_client()
        self.console = signed_in("researcher") if kind == "console" else None
        self.env = {
            "DATABASE_URL": database_url,
            "DEFAULT_REGION": "US",
            "DEFAULT_TIMEZONE": "America/Toronto",
            "TANDEM_MASTER_KEY": TEST_MASTER_KEY,
        }

    def enroll(self, phone: str, intervention: str | None = None) -> Outcome:
        if self.kind == "api":
            body = {"phone_number": phone, **_given(intervention)}
            answer = self.api.post(BASE, json=body, headers=AUTH)
            if answer.status_code == 201:
                return Outcome(answer.get_json()["result"]["id"], None)
            return Outcome(None, answer.get_json()["message"])
        if self.kind == "console":
            answer = post(self.console, "/console/enroll", {"phone": phone, **_given(intervention)})
            if answer.status_code == 302:
                return Outcome(ID.search(answer.headers["Location"]).group(0), None)
            return Outcome(None, html.unescape(answer.get_data(as_text=True)))
        args = ["enroll", phone, *(["--intervention", intervention] if intervention else [])]
        result = CliRunner().invoke(cli, args, env=self.env)
        if result.exit_code == 0:
            return Outcome(ID.search(result.output).group(0), None)
        return Outcome(None, result.output)

    def withdraw(self, participant_id: str) -> Outcome:
        why = {"reason": "moved abroad", "requested_by": "participant"}
        if self.kind == "api":
            path = f"{BASE}/{participant_id}/withdraw"
            answer = self.api.post(path, json=why, headers=AUTH)
            ok = answer.status_code == 200
            return (
                Outcome(participant_id, None) if ok else Outcome(None, answer.get_json()["message"])
            )
        if self.kind == "console":
            path = f"/console/participants/{participant_id}/withdraw"
            answer = post(self.console, path, {**why, "confirm": "yes"})
            if answer.status_code == 302:
                return Outcome(participant_id, None)
            return Outcome(None, html.unescape(answer.get_data(as_text=True)))
        args = [
            "withdraw",
            participant_id,
            "--reason",
            why["reason"],
            "--requested-by",
            "participant",
        ]
        result = CliRunner().invoke(cli, args, env=self.env)
        return (
            Outcome(participant_id, None) if result.exit_code == 0 else Outcome(None, result.output)
        )


def _given(intervention: str | None) -> dict[str, str]:
    return {"intervention": intervention} if intervention else {}


@pytest.fixture(params=ENTRY_POINTS)
def entry(
    request: pytest.FixtureRequest, app: Flask, signed_in: Callable, database_url: str
) -> EntryPoint:
    return EntryPoint(request.param, app, signed_in, database_url)


def test_a_uk_number_without_a_timezone_gets_europe_london(
    entry: EntryPoint, services: Services
) -> None:
    outcome = entry.enroll("+44 20 7183 8750")

    assert outcome.refusal is None
    row = services.store.projection_row("participants", outcome.participant_id)
    assert row["timezone"] == "Europe/London"
    assert row["phone"] == "+442071838750"


def test_an_unknown_intervention_is_refused_with_the_catalogues_reason(
    entry: EntryPoint, services: Services
) -> None:
    reason = intervention_catalogue().refusal("nope")
    assert reason is not None and reason.startswith("no intervention 'nope'; known: ")

    outcome = entry.enroll("+14155552671", intervention="nope")

    assert outcome.participant_id is None
    # The same reason, naming the same usable interventions (the console leads it with
    # "no intervention named", as its form always has).
    assert reason.removeprefix("no intervention ") in outcome.refusal
    assert services.store.projection_row("participants", "x") is None


def test_withdrawing_during_a_takeover_ends_the_takeover(
    entry: EntryPoint, services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")
    takeover.take_over(services.store, pid, actor="staff:supervisor@example.org")

    outcome = entry.withdraw(pid)

    assert outcome.refusal is None
    assert services.store.projection_row("participants", pid)["status"] == "withdrawn"
    assert services.store.projection_row("takeovers", pid)["status"] == "ended"


def test_a_second_withdrawal_is_refused_the_same_way(
    entry: EntryPoint, services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")
    first = entry.withdraw(pid)
    version = services.store.version(f"participant:{pid}")

    again = entry.withdraw(pid)

    assert first.refusal is None
    assert again.participant_id is None
    assert "the participant is already withdrawn" in again.refusal
    assert services.store.version(f"participant:{pid}") == version


# The shipped interventions that talk through an LLM (named here so that a change of what is
# inferred shows as a failing test, not as an intervention silently accepted).
LLM_INTERVENTIONS = ("cbt-reframe", "fit-motivation", "habit-coach", "health-intake", "ot-mentor")


def test_each_llm_intervention_is_refused_without_an_llm_saying_what_to_set(
    entry: EntryPoint, services: Services
) -> None:
    catalogue = intervention_catalogue()
    inferred = {slug for slug in catalogue.slugs() if "llm" in catalogue.needs(slug)}
    assert inferred == set(LLM_INTERVENTIONS)

    for n, slug in enumerate(LLM_INTERVENTIONS):
        outcome = entry.enroll(f"+1415555{2671 + n}", intervention=slug)

        assert outcome.participant_id is None, slug
        assert f"intervention {slug!r} needs an LLM — not configured" in outcome.refusal
        assert "set OPENAI_API_KEY (or OPENAI_BASE_URL" in outcome.refusal
    with services.store.reading() as conn:
        assert conn.execute(select(participants.c.participant_id)).all() == []


def test_an_llm_intervention_is_refused_with_400_by_the_api_and_exit_2_by_tandem(
    app: Flask, database_url: str
) -> None:
    answer = app.test_client().post(
        BASE, json={"phone_number": "+14155552671", "intervention": "ot-mentor"}, headers=AUTH
    )
    assert answer.status_code == 400
    assert answer.get_json()["errors"][0]["field"] == "intervention"

    env = {"DATABASE_URL": database_url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    result = CliRunner().invoke(
        cli, ["enroll", "+14155552671", "--intervention", "ot-mentor"], env=env
    )
    assert result.exit_code == 2, result.output
    assert "needs an LLM — not configured" in result.output
