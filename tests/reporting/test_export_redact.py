"""A pseudonymised export's redaction of free text: a participant's own names (whole, each
part, any case), phone numbers in their usual spellings and e-mail addresses; not dates, nor
words that merely contain a name."""

from __future__ import annotations

from bot.reporting.redact import Redactor


def _alice() -> Redactor:
    row = {"name": "Alice Tremblay", "phone": "+15145550199", "profile": {"nickname": "Ali"}}
    return Redactor.of(row)


def test_a_participants_names_are_redacted_whole_in_parts_and_in_any_case() -> None:
    said = _alice().text("Hi Alice Tremblay! ALICE, or Mrs tremblay, or Ali")
    assert said == "Hi [name]! [name], or Mrs [name], or [name]"


def test_a_word_that_only_contains_a_name_is_kept() -> None:
    assert _alice().text("Alicia went to Alice Springs") == "Alicia went to [name] Springs"


def test_phone_numbers_in_their_usual_spellings_are_redacted() -> None:
    said = _alice().text("+1 514 555 0199, (514) 555-0199, 514.555.0199, 15145550199, 98765 43210")
    assert said == "[phone], [phone], [phone], [phone], [phone]"


def test_dates_and_short_numbers_are_not_phone_numbers() -> None:
    kept = "on 2026-01-31 I walked 4200 steps, 12 km"
    assert _alice().text(kept) == kept


def test_an_e_mail_address_is_redacted_whole() -> None:
    assert _alice().text("write to alice.t@example.org") == "write to [email]"


def test_free_text_inside_objects_and_lists_is_redacted() -> None:
    redacted = _alice().record("participants", {"notes": {"said": ["Alice called"]}, "x": "Ali"})
    assert redacted == {"notes": {"said": ["[name] called"]}, "x": "Ali"}
