"""A PromptPipe-style client (tests/web/promptpipe_client.py, written from PromptPipe's
reference) run against Tandem over HTTP, asserting each row of docs/promptpipe.md's API table:
what behaves as in PromptPipe and how each difference shows."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.store.services import Services
from bot.web import create_app
from tests.fakes.http_server import LocalServer
from tests.web.conftest import TOKEN
from tests.web.promptpipe_client import PromptPipeClient

DOC = Path(__file__).resolve().parents[2] / "docs" / "promptpipe.md"
UNKNOWN = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"


@pytest.fixture
def server(services: Services) -> Iterator[LocalServer]:
    with LocalServer(create_app(services)) as running:
        yield running


@pytest.fixture
def pp(server: LocalServer) -> PromptPipeClient:
    return PromptPipeClient(server.url, TOKEN)


def test_the_api_table_of_the_migration_guide_lists_exactly_the_rows_checked_here() -> None:
    rows = re.findall(r"^\| (A\d+) \|", DOC.read_text(), flags=re.MULTILINE)
    checked = sorted({m for name in globals() for m in re.findall(r"_a(\d+)_", name)}, key=int)
    assert rows == [f"A{n}" for n in checked]


def test_a1_without_a_bearer_token_every_call_is_a_401(server: LocalServer) -> None:
    answer = PromptPipeClient(server.url).list()
    assert (answer.status, answer.body["status"]) == (401, "error")


def test_a2_enrolling_answers_201_with_promptpipes_message_and_the_number_in_e164(
    pp: PromptPipeClient,
) -> None:
    answer = pp.enroll("447911123456", name="Ana", timezone="Europe/London")
    assert (answer.status, answer.body["status"]) == (201, "ok")
    assert answer.message == "Conversation participant enrolled successfully"
    assert answer.result["phone_number"] == "+447911123456"  # PromptPipe: "447911123456"
    assert answer.result["timezone"] == "Europe/London"  # PromptPipe never returned it
    assert answer.result["status"] == "active"


@pytest.mark.parametrize("phone", ["447911123456", "00447911123456", "+44 7911 123456"])
def test_a3_numbers_with_a_country_code_are_taken_in_any_of_promptpipes_forms(
    pp: PromptPipeClient, phone: str
) -> None:
    assert pp.enroll(phone).result["phone_number"] == "+447911123456"


def test_a4_a_number_that_is_not_valid_or_is_ambiguous_is_a_400_saying_why(
    pp: PromptPipeClient,
) -> None:
    short = pp.enroll("12345")  # PromptPipe: too short (< 6 digits); Tandem: not a number
    ambiguous = pp.enroll("6465025300")  # +64 (NZ) or +1 646 (DEFAULT_REGION=US)
    assert (short.status, ambiguous.status) == (400, 400)
    assert ambiguous.message.startswith("phone_number: invalid phone number: ambiguous")


def test_a5_errors_keep_the_envelope_and_name_the_field_first(pp: PromptPipeClient) -> None:
    missing = pp.call("POST", "/conversation/participants", {})
    bad_timezone = pp.enroll("+14155552671", timezone="Mars/Olympus")
    assert (missing.status, missing.body["status"]) == (400, "error")
    assert missing.message == "phone_number: is required"  # PromptPipe: "phone_number is required"
    assert missing.body["errors"] == [{"field": "phone_number", "message": "is required"}]
    assert bad_timezone.message.startswith("timezone: unknown timezone")


def test_a6_a_second_enrollment_of_a_number_is_a_409(pp: PromptPipeClient) -> None:
    pp.enroll("+447911123456")
    again = pp.enroll("447911123456")
    assert again.status == 409
    assert again.message.endswith("Participant with this phone number already enrolled")


def test_a7_get_and_put_answer_as_promptpipes_and_404_an_unknown_id(
    pp: PromptPipeClient,
) -> None:
    pid = pp.enroll("+447911123456").result["id"]
    updated = pp.update(pid, status="paused", name="Ana")
    assert (updated.status, updated.message) == (200, "Participant updated successfully")
    assert pp.get(pid).result["status"] == "paused"
    missing = pp.get(UNKNOWN)
    assert (missing.status, missing.message) == (404, "participant_id: Participant not found")


def test_a8_the_list_is_paged_and_says_when_there_is_more(pp: PromptPipeClient) -> None:
    for n in range(3):
        pp.enroll(f"+1415555267{n}")
    first = pp.call("GET", "/conversation/participants?limit=2")
    assert len(first.result) == 2
    assert first.message.startswith("2 of 3 participants")
    rest = pp.call("GET", first.body["page"]["next"])
    assert len(rest.result) == 1 and "message" not in rest.body


def test_a9_delete_unenrolls_keeping_the_record_and_a_second_delete_is_a_404(
    pp: PromptPipeClient,
) -> None:
    pid = pp.enroll("+447911123456").result["id"]
    deleted = pp.delete(pid)
    # PromptPipe said "deleted"; Tandem says what it does (docs/promptpipe.md, A9).
    assert deleted.status == 200
    assert deleted.message.startswith("Participant unenrolled (not deleted)")
    assert pp.get(pid).result["status"] == "unenrolled"  # PromptPipe: 404, the row is gone
    assert pp.delete(pid).status == 404


def test_a10_a_method_a_path_does_not_take_is_a_405_with_allow(pp: PromptPipeClient) -> None:
    pid = pp.enroll("+447911123456").result["id"]
    answer = pp.call("PATCH", f"/conversation/participants/{pid}", {"name": "Ana"})
    assert (answer.status, answer.body["status"]) == (405, "error")
    assert {"GET", "PUT", "DELETE"} <= set(answer.headers["Allow"].split(", "))


def test_a11_an_unknown_conversation_path_is_a_json_404(pp: PromptPipeClient) -> None:
    for path in ("/conversation/", "/conversation/participants/x/anything"):
        answer = pp.call("GET", path)
        assert (answer.status, answer.body["status"]) == (404, "error")


def test_a12_health_has_promptpipes_fields(pp: PromptPipeClient) -> None:
    pp.enroll("+447911123456")
    answer = pp.health()  # PromptPipe's fields need the API token (issue 65)
    assert answer.status == 200
    assert answer.body["status"] == "healthy"
    assert answer.body["active_participants"] == 1
    assert "timestamp" in answer.body
    anonymous = PromptPipeClient(pp.base).health()
    assert (anonymous.status, anonymous.body) == (200, {"status": "healthy"})


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/send"),
        ("POST", "/schedule"),
        ("GET", "/receipts"),
        ("POST", "/response"),
        ("GET", "/responses"),
        ("GET", "/stats"),
        ("GET", "/timers"),
        ("POST", "/twilio/webhook"),
    ],
)
def test_a13_promptpipes_generic_endpoints_are_not_served(
    pp: PromptPipeClient, method: str, path: str
) -> None:
    assert pp.call(method, path, {}).status == 404
