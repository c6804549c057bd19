"""Every event type says which of its text fields are personal data (sealed with the
participant's data key) and which are not: a new type or field left unclassified fails here."""

from __future__ import annotations

from typing import Any

import pytest

import bot.store.event_types  # noqa: F401  (registers every type)
from bot.store.events import REGISTRY, EventData, event, fields
from bot.store.personal import ERASED, erased_value, personal_fields, text_fields, unclassified


@pytest.mark.parametrize("event_type", sorted(REGISTRY))
def test_every_text_field_of_every_event_type_is_classified(event_type: str) -> None:
    model = REGISTRY[event_type]
    assert unclassified(model) == frozenset(), (
        f"{event_type}: declare each of these fields in `personal` (sealed with the "
        "participant's data key) or `plain` on the model"
    )


@pytest.mark.parametrize("event_type", sorted(REGISTRY))
def test_a_classification_names_only_fields_the_model_has(event_type: str) -> None:
    model = REGISTRY[event_type]
    declared = (model.personal or frozenset()) | model.plain
    assert declared <= set(model.model_fields), declared - set(model.model_fields)
    assert not (model.personal or frozenset()) & model.plain


def test_a_new_event_type_with_an_unclassified_text_field_is_caught() -> None:
    class Noted(EventData):
        note: str
        count: int

    assert unclassified(Noted) == {"note"}
    # Left unclassified, it is sealed whole rather than stored in plain.
    assert personal_fields(Noted) == {"note"}


def test_a_new_text_field_on_a_classified_type_is_caught() -> None:
    class Classified(EventData):
        personal = fields("body")

        body: str
        added_later: str | None = None

    assert unclassified(Classified) == {"added_later"}


def test_ids_and_choices_are_not_free_text_but_a_whatsapp_id_is_declared_personal() -> None:
    received = REGISTRY["message.received"]
    assert "message_sid" not in text_fields(received)
    assert "channel" not in text_fields(received)
    assert {"from_address", "body", "media", "profile_name", "wa_id"} <= personal_fields(received)


@pytest.mark.parametrize(
    ("event_type", "field", "expected"),
    [
        ("message.received", "body", ERASED),
        ("message.received", "media", []),
        ("participant.updated", "changes", {}),
        ("measurement.recorded", "value", ERASED),
        ("participant.enrolled", "name", ERASED),
    ],
)
def test_an_erased_field_reads_as_erased_text_or_an_empty_container(
    event_type: str, field: str, expected: Any
) -> None:
    assert erased_value(REGISTRY[event_type], field) == expected


def test_the_personal_data_the_issue_names_is_sealed() -> None:
    expected = {
        "participant.enrolled": {"phone", "name"},
        "message.received": {"from_address", "body", "media", "profile_name"},
        "message.queued": {"to_address", "body"},
        "profile.saved": {"changes"},
        "llm.called": {"messages", "response"},
        "note.taken": {"values"},
        "judgement.recorded": {"result"},
        "step.replied": {"sent", "slots"},
    }
    for event_type, names in expected.items():
        assert names <= personal_fields(REGISTRY[event_type]), event_type


def test_the_registry_refuses_nothing_new_here() -> None:
    # `event` still registers as before: the declarations are plain class attributes.
    @event("test.personal_fields_probe")
    class Probe(EventData):
        personal = fields("text")

        text: str

    try:
        assert personal_fields(Probe) == {"text"}
    finally:
        del REGISTRY["test.personal_fields_probe"]
