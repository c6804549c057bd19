"""Tone adaptation: whitelist, EMA, decay, rate limit, exclusions, hysteresis, the guide."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from bot.conversation.tone import Tone, apply, guide, tone_guide, validate

T0 = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)


def _implicit(tone: Tone, *tags: str, at: datetime) -> Tone:
    update = apply(tone, validate(list(tags)), at)
    assert update.changed
    return update.tone


def test_validation_lowercases_trims_dedupes_and_drops_unknown_tags() -> None:
    proposal = validate([" Concise", "concise", "sarcastic", "NO_EMOJIS"])
    assert proposal.tags == ("concise", "no_emojis")
    assert proposal.dropped == ("sarcastic",)


def test_a_proposal_without_a_source_is_implicit() -> None:
    assert validate(["concise"]).source == "implicit"


def test_scores_are_clamped_to_the_unit_interval_and_rounded_to_four_decimals() -> None:
    proposal = validate([], scores={"concise": 1.7, "formal": -2, "casual": 0.123456})
    assert dict(proposal.scores) == {"concise": 1.0, "formal": 0.0, "casual": 0.1235}


def test_eight_consecutive_implicit_observations_are_needed_to_activate_a_tag() -> None:
    tone, seen = Tone(), []
    for n in range(8):
        tone = _implicit(tone, "concise", at=T0 + n * timedelta(minutes=3))
        seen.append(tone.scores["concise"])
        assert ("concise" in tone.tags) == (n == 7)
    expected = [0.15, 0.2775, 0.386, 0.478, 0.556, 0.623, 0.680, 0.728]
    assert seen == pytest.approx(expected, abs=6e-4)


def test_an_implicit_update_within_three_minutes_of_the_last_one_is_rejected() -> None:
    tone = Tone(scores={"concise": 0.8}, last_updated_at=T0)
    update = apply(tone, validate(["concise"]), T0 + timedelta(minutes=2))
    assert not update.changed and update.reason == "rate_limited"
    assert update.tone == tone


def test_an_implicit_update_after_the_interval_moves_the_tag_and_decays_the_others() -> None:
    tone = Tone(scores={"concise": 0.8, "formal": 0.5}, last_updated_at=T0)
    new = _implicit(tone, "concise", at=T0 + timedelta(minutes=4)).scores
    assert new["concise"] == pytest.approx(0.83)
    assert new["formal"] == pytest.approx(0.425)


def test_an_explicit_update_is_not_rate_limited_and_activates_at_once() -> None:
    tone = Tone(last_updated_at=T0)
    update = apply(tone, validate(["bullet_points"], "explicit"), T0 + timedelta(seconds=5))
    assert update.changed and update.tone.tags == ("bullet_points",)
    assert update.tone.scores["bullet_points"] == 1.0


def test_explicit_no_emojis_zeroes_and_removes_emojis_ok() -> None:
    tone = Tone(tags=("emojis_ok",), scores={"emojis_ok": 1.0})
    new = apply(tone, validate(["no_emojis"], "explicit"), T0).tone
    assert new.tags == ("no_emojis",)
    assert new.scores["emojis_ok"] == 0.0


def test_of_two_exclusive_tags_both_active_the_lower_drops_to_0_39_and_deactivates() -> None:
    tone = Tone(tags=("concise",), scores={"concise": 0.9})
    new = apply(tone, validate([], "explicit", {"detailed": 0.75}), T0).tone
    assert new.scores["detailed"] == 0.39
    assert new.tags == ("concise",)


def test_on_a_tie_of_exclusive_tags_the_first_of_the_pair_is_kept() -> None:
    new = apply(Tone(), validate(["formal", "casual"], "explicit"), T0).tone
    assert new.tags == ("formal",) and new.scores["casual"] == 0.39


def test_a_score_between_the_thresholds_keeps_an_active_tag_active() -> None:
    tone = Tone(tags=("concise",), scores={"concise": 0.72}, last_updated_at=T0)
    new = _implicit(tone, "formal", at=T0 + timedelta(minutes=3))
    assert new.scores["concise"] == pytest.approx(0.612)
    assert "concise" in new.tags


def test_a_score_between_the_thresholds_keeps_an_inactive_tag_inactive() -> None:
    new = apply(Tone(), validate([], "explicit", {"casual": 0.6}), T0).tone
    assert new.tags == ()


def test_a_decayed_score_at_or_below_0_4_deactivates_the_tag() -> None:
    tone = Tone(tags=("concise",), scores={"concise": 0.47}, last_updated_at=T0)
    new = _implicit(tone, "formal", at=T0 + timedelta(minutes=3))
    assert new.scores["concise"] == pytest.approx(0.3995)
    assert "concise" not in new.tags


def test_a_proposal_that_changes_no_score_is_not_an_update() -> None:
    tone = Tone(tags=("concise",), scores={"concise": 1.0}, last_updated_at=T0)
    update = apply(tone, validate(["concise"], "explicit"), T0 + timedelta(minutes=1))
    assert not update.changed and update.reason == "unchanged"


def test_a_proposal_without_known_tags_is_not_an_update() -> None:
    update = apply(Tone(), validate(["sarcastic"]), T0)
    assert not update.changed and update.reason == "no_tags"


def test_an_update_records_when_and_how_it_happened() -> None:
    new = apply(Tone(), validate(["casual"], "explicit"), T0).tone
    assert new.as_profile()["tone_last_updated_at"] == T0.isoformat()
    assert new.as_profile()["tone_update_source"] == "explicit"
    assert new.as_profile()["tone_version"] == 1


def test_a_tone_survives_the_round_trip_through_a_stored_profile() -> None:
    tone = apply(Tone(), validate(["casual", "warm_supportive"], "explicit"), T0).tone
    assert Tone.from_profile(tone.as_profile()) == tone


def test_the_guide_is_empty_without_active_tags() -> None:
    assert guide([]) == ""
    assert tone_guide({"tone_tags": []}) == ""


def test_the_guide_has_one_rule_per_active_tag_and_ends_with_the_hostility_rule() -> None:
    text = guide(["concise", "no_emojis", "warm_supportive", "confirm_before_acting"])
    assert text.splitlines() == [
        "<TONE POLICY>",
        "Adapt your responses to the user's communication style:",
        "- Be concise: short sentences, minimal filler.",
        "- Do NOT use emojis.",
        "- Adopt a warm, supportive stance. Encourage the user.",
        "- Confirm with the user before taking actions.",
        "- NEVER mirror hostility, sarcasm, insults, or unsafe language.",
        "</TONE POLICY>",
    ]


def test_the_guide_defaults_to_the_neutral_stance_when_no_stance_tag_is_active() -> None:
    assert "- Keep a neutral, professional stance." in guide(["casual"]).splitlines()


def test_the_guide_prefers_no_emojis_over_emojis_ok() -> None:
    lines = guide(["emojis_ok", "no_emojis"]).splitlines()
    assert "- Do NOT use emojis." in lines
    assert "- Emojis are welcome where appropriate." not in lines


def test_the_profile_guide_ignores_tags_outside_the_whitelist() -> None:
    assert tone_guide({"tone_tags": ["sarcastic"]}) == ""


# Boundaries single-change mutants of bot/conversation/tone.py survived (make mutation)


def _explicit(scores: dict[str, float], tone: Tone | None = None):  # noqa: ANN202
    return apply(tone or Tone(), validate([], source="explicit", scores=scores), T0)


def test_a_stored_profile_keeps_only_known_tags_with_numeric_scores() -> None:
    tone = Tone.from_profile(
        {"tone_scores": {"bogus": 0.9, "concise": "high", "formal": 0.5, "casual": 1}}
    )
    assert tone.scores == {"formal": 0.5, "casual": 1.0}


def test_a_tone_and_its_update_cannot_be_changed_once_made() -> None:
    update = _explicit({"concise": 0.9})
    with pytest.raises(dataclasses.FrozenInstanceError):
        update.changed = False  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        update.tone.version = 2  # type: ignore[misc]


def test_an_explicit_zero_for_a_tag_never_scored_changes_nothing() -> None:
    update = _explicit({"concise": 0.0})
    assert (update.changed, update.reason, update.tone) == (False, "unchanged", Tone())


def test_no_emojis_at_exactly_the_threshold_zeroes_emojis_ok() -> None:
    update = _explicit({"no_emojis": 0.7, "emojis_ok": 0.9})
    assert update.tone.scores["emojis_ok"] == 0.0
    assert update.tone.tags == ("no_emojis",)


def test_of_a_pair_at_exactly_the_threshold_the_lower_one_deactivates() -> None:
    update = _explicit({"concise": 0.9, "detailed": 0.7})
    assert update.tone.scores == {"concise": 0.9, "detailed": 0.39}
    assert update.tone.tags == ("concise",)


def test_emojis_ok_stays_active_without_no_emojis() -> None:
    assert _explicit({"emojis_ok": 0.9}).tone.tags == ("emojis_ok",)


def test_a_proposal_cannot_be_changed_once_validated() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        validate(["concise"]).source = "explicit"  # type: ignore[misc]


def test_an_implicit_score_moves_the_ema_by_alpha_times_that_score() -> None:
    update = apply(Tone(), validate([], scores={"concise": 0.5}), T0)
    assert update.tone.scores == {"concise": 0.075}


def test_one_tag_of_a_pair_alone_is_left_as_it_is() -> None:
    assert _explicit({"detailed": 0.9}).tone.scores == {"detailed": 0.9}
    assert _explicit({"concise": 0.9}).tone.scores == {"concise": 0.9}


def test_of_a_pair_the_first_at_exactly_the_threshold_drops_below_a_higher_second() -> None:
    assert _explicit({"concise": 0.7, "detailed": 0.9}).tone.scores == {
        "concise": 0.39,
        "detailed": 0.9,
    }


def test_a_tag_activates_at_exactly_point_seven_and_deactivates_at_exactly_point_four() -> None:
    active = _explicit({"formal": 0.7}).tone
    assert active.tags == ("formal",)
    assert _explicit({"formal": 0.4}, active).tone.tags == ()
    assert _explicit({"formal": 0.41}, active).tone.tags == ("formal",)


def test_tone_guide_reads_the_profile_given() -> None:
    assert "- Be concise" in tone_guide({"tone_tags": ["concise"]})


def test_a_malformed_stored_time_is_read_as_none() -> None:
    assert Tone.from_profile({"tone_last_updated_at": "yesterday"}).last_updated_at is None
