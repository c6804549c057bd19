"""save_user_profile: PromptPipe's merge rules, explicit clearing, tone, precise errors."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from bot.conversation.tooling import ToolOutcome
from bot.store.event_types.conversation import ProfileSaved
from bot.store.projections import participants as projection
from tests.tools import NOW, context, participant, stream
from tools.save_user_profile import SaveUserProfile, run


def _save(profile: dict[str, Any] | None = None, at=NOW, **arguments: Any) -> ToolOutcome:
    args = SaveUserProfile.model_validate(arguments)
    return run(args, context(who=participant(profile=profile or {}), now=at))


def _body(outcome: ToolOutcome) -> dict[str, Any]:
    return json.loads(outcome.message.split("\n", 1)[1])


def _changes(outcome: ToolOutcome) -> dict[str, Any]:
    (saved,) = outcome.events
    assert isinstance(saved, ProfileSaved)
    return dict(saved.changes)


def test_only_non_empty_different_values_are_saved() -> None:
    outcome = _save(
        {"habit_domain": "walking"},
        prompt_anchor="after coffee",
        preferred_time="9am",
        habit_domain="",
    )
    assert _changes(outcome) == {"prompt_anchor": "after coffee", "preferred_time": "9am"}
    assert outcome.message.startswith(
        "SUCCESS: profile saved (2 field(s) updated: prompt_anchor, preferred_time)"
    )


def test_saving_the_values_already_saved_is_a_noop_without_events() -> None:
    outcome = _save({"prompt_anchor": "after coffee"}, prompt_anchor="after coffee")
    assert outcome.ok and outcome.events == []
    assert outcome.message.startswith("NOOP: profile already up to date; no changes were saved.")


def test_the_result_carries_the_saved_profile_snapshot() -> None:
    outcome = _save({"habit_domain": "walking"}, last_barrier="rain")
    assert _body(outcome)["profile_snapshot"] == {"habit_domain": "walking", "last_barrier": "rain"}


def test_the_event_folds_into_the_participant_row_as_the_snapshot_says() -> None:
    before = participant(profile={"habit_domain": "walking", "last_tweak": "shorter"})
    outcome = run(SaveUserProfile(last_barrier="rain", clear=["last_tweak"]), context(who=before))
    (event,) = stream(*outcome.events)
    after = projection.apply(before, event)
    assert after is not None and after["profile"] == _body(outcome)["profile_snapshot"]


def test_whitespace_only_values_never_overwrite() -> None:
    assert _save({"habit_domain": "walking"}, habit_domain="   ").events == []


def test_values_are_saved_without_surrounding_whitespace() -> None:
    assert _changes(_save(habit_domain="  walking ")) == {"habit_domain": "walking"}


def test_the_legacy_last_blocker_sets_last_barrier() -> None:
    assert _changes(_save(last_blocker="busy")) == {"last_barrier": "busy"}


def test_last_barrier_wins_over_the_legacy_last_blocker() -> None:
    assert _changes(_save(last_blocker="busy", last_barrier="tired")) == {"last_barrier": "tired"}


def test_a_named_field_is_cleared() -> None:
    outcome = _save({"last_tweak": "shorter", "habit_domain": "walking"}, clear=["last_tweak"])
    (saved,) = outcome.events
    assert isinstance(saved, ProfileSaved) and saved.cleared == ["last_tweak"]
    assert outcome.message.startswith(
        "SUCCESS: profile saved (0 field(s) updated; 1 field(s) cleared: last_tweak)"
    )
    assert _body(outcome)["profile_snapshot"] == {"habit_domain": "walking"}


def test_clearing_a_field_that_is_not_saved_is_a_noop() -> None:
    assert _save({"habit_domain": "walking"}, clear=["last_tweak"]).events == []


def test_clearing_an_unknown_field_is_refused_naming_the_clearable_ones() -> None:
    with pytest.raises(
        ValidationError,
        match="clear: 'intensity' is not a profile field that "
        "can be cleared; use any of: habit_domain, prompt_anchor",
    ):
        SaveUserProfile.model_validate({"clear": ["intensity"]})


def test_setting_and_clearing_the_same_field_is_refused() -> None:
    with pytest.raises(
        ValidationError, match="habit_domain: a field cannot be both given a value and cleared"
    ):
        SaveUserProfile.model_validate({"habit_domain": "walking", "clear": ["habit_domain"]})


def test_an_overlong_value_is_refused_with_its_length_and_the_limit() -> None:
    with pytest.raises(
        ValidationError, match="additional_info is 1001 characters; the limit is 1000"
    ):
        SaveUserProfile.model_validate({"additional_info": "x" * 1001})


@pytest.mark.parametrize("confidence", [-0.1, 1.5])
def test_a_tone_confidence_outside_zero_to_one_is_refused(confidence: float) -> None:
    with pytest.raises(ValidationError, match="tone_confidence must be between 0 and 1"):
        SaveUserProfile.model_validate({"tone_tags": ["concise"], "tone_confidence": confidence})


def test_identity_cannot_be_passed_as_an_argument() -> None:
    with pytest.raises(ValidationError, match="participant_id"):
        SaveUserProfile.model_validate({"participant_id": "p2", "habit_domain": "x"})


def test_intensity_is_saved_when_it_changes() -> None:
    assert _changes(_save({"intensity": "normal"}, intensity="low")) == {"intensity": "low"}


def test_an_explicit_tone_request_stores_the_tone_fields() -> None:
    changes = _changes(_save(tone_tags=["no_emojis"], tone_update_source="explicit"))
    assert changes == {
        "tone_tags": ["no_emojis"],
        "tone_scores": {"no_emojis": 1.0, "emojis_ok": 0.0},
        "tone_version": 1,
        "tone_last_updated_at": NOW.isoformat(),
        "tone_update_source": "explicit",
    }


def test_an_implicit_tone_update_within_three_minutes_is_not_applied_and_explained() -> None:
    first = _changes(_save(tone_tags=["concise"]))
    outcome = _save(first, at=NOW + timedelta(minutes=2), tone_tags=["concise"])
    assert outcome.events == []
    assert _body(outcome)["notes"] == [
        "tone not updated: implicit tone updates are limited to one every 3 minutes and the "
        "last was 120 s ago; use tone_update_source 'explicit' only if the participant asked "
        "for this style"
    ]


def test_the_other_fields_are_saved_when_the_tone_update_is_rate_limited() -> None:
    first = _changes(_save(tone_tags=["concise"]))
    later = _save(first, at=NOW + timedelta(minutes=1), tone_tags=["concise"], last_tweak="x")
    assert _changes(later) == {"last_tweak": "x"}


def test_unknown_tone_tags_are_dropped_and_reported() -> None:
    outcome = _save(tone_tags=["sarcastic", "casual"], tone_update_source="explicit")
    assert _changes(outcome)["tone_tags"] == ["casual"]
    assert _body(outcome)["notes"][0].startswith("dropped unknown tone tags: sarcastic (allowed:")


def test_a_tone_source_without_tone_tags_is_ignored_and_reported() -> None:
    outcome = _save(tone_update_source="explicit")
    assert outcome.events == []
    assert _body(outcome)["notes"] == [
        "tone_update_source/tone_confidence ignored: no tone_tags were given"
    ]
