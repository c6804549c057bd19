"""One decision's analysis from a decisions.csv-shaped frame, as text and as JSON."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from bot.analysis.excursion import EFFECT, emee, wcls
from bot.analysis.report import analyze_decision, estimates_json, format_estimates
from tests.analysis.trial import Truth, simulate_trial


def decisions_csv(outcome: str, seed: int = 5) -> pd.DataFrame:
    """A simulated trial as the export writes decisions.csv, read back from CSV text."""
    trial = simulate_trial(seed, Truth(), participants=20, days=14)
    frame = trial.rename(columns={outcome: "outcome_value"}).assign(
        outcome_status=np.where(trial["available"], "observed", "missing"),
        utc="2026-01-01T09:00:00Z",
        local_time="09:00",
    )
    other = frame.head(30).assign(decision="evening", p_send=0.9, p_nothing=0.1)
    frame = frame[[c for c in frame.columns if c not in ("sent", "steps_before", outcome)]]
    text = pd.concat([frame, other[frame.columns]]).to_csv(index=False)
    return pd.read_csv(io.StringIO(text), keep_default_na=True)


def test_a_yes_no_outcome_is_analysed_by_emee_as_a_direct_call_would() -> None:
    frame = decisions_csv("outcome_yes")
    found = analyze_decision(frame, "nudge", moderators=["stressed"], reference="nothing")
    rows = frame[frame["decision"] == "nudge"]
    sent = (rows["option"] == "send").astype(int)
    direct = emee(rows.assign(sent=sent, stressed=rows["mod_stressed"]),
                  "outcome_value", "sent", "p_send", "available", "participant",
                  moderators=["stressed"])  # fmt: skip
    assert found.method == "emee" and found.outcome_kind == "yes/no"
    assert found.estimates["send"].coefficients == direct.coefficients


def test_a_numeric_outcome_is_analysed_by_wcls() -> None:
    frame = decisions_csv("outcome_number")
    found = analyze_decision(frame, "nudge", reference="nothing")
    rows = frame[frame["decision"] == "nudge"]
    direct = wcls(rows.assign(sent=(rows["option"] == "send").astype(int)), "outcome_value",
                  "sent", "p_send", "available", "participant")  # fmt: skip
    assert found.method == "wcls"
    assert found.estimates["send"].term().estimate == pytest.approx(direct.term().estimate)


def test_the_first_option_is_the_reference_unless_one_is_named() -> None:
    frame = decisions_csv("outcome_number")
    assert analyze_decision(frame, "nudge").reference == "send"
    assert list(analyze_decision(frame, "nudge").estimates) == ["nothing"]


def test_available_points_without_an_outcome_are_left_out_and_counted() -> None:
    frame = decisions_csv("outcome_number")
    gone = frame.index[(frame["decision"] == "nudge") & frame["available"]][:25]
    frame.loc[gone, ["outcome_status", "outcome_value"]] = ["missing", np.nan]
    found = analyze_decision(frame, "nudge", reference="nothing")
    nudge = frame[frame["decision"] == "nudge"]
    assert found.n_missing == 25 and found.n_available == int(nudge["available"].sum())
    assert found.estimates["send"].n_available == found.n_available - 25
    assert found.n_decisions == len(nudge)


def test_logged_probabilities_that_do_not_sum_to_one_fail_loudly() -> None:
    frame = decisions_csv("outcome_number")
    frame.loc[frame.index[frame["available"]][:1], "p_send"] = 0.95
    with pytest.raises(ValueError, match="do not sum to 1"):
        analyze_decision(frame, "nudge")


def test_an_unknown_moderator_or_decision_is_refused() -> None:
    frame = decisions_csv("outcome_number")
    with pytest.raises(ValueError, match="mod_mood"):
        analyze_decision(frame, "nudge", moderators=["mood"])
    with pytest.raises(ValueError, match="no decision points"):
        analyze_decision(frame, "lunch")


def test_the_text_table_shows_each_term_with_its_interval_and_the_counts() -> None:
    found = analyze_decision(decisions_csv("outcome_yes"), "nudge", ["stressed"], "nothing")
    text = format_estimates(found)
    effect = found.estimates["send"].term(EFFECT)
    assert f"{effect.low:.3f} to {effect.high:.3f}" in text
    assert effect.ratio is not None and f"{effect.ratio[0]:.2f} ({effect.ratio[1]:.2f}" in text
    assert "stressed" in text
    assert f"{found.n_participants} participants, {found.n_decisions} decision points" in text


def test_the_json_holds_the_same_numbers_and_is_plain_json() -> None:
    found = analyze_decision(decisions_csv("outcome_yes"), "nudge", ["stressed"], "nothing")
    data = json.loads(json.dumps(estimates_json(found)))
    term = data["options"]["send"]["coefficients"][0]
    effect = found.estimates["send"].term(EFFECT)
    assert (term["estimate"], term["ci_low"], term["risk_ratio"]) == pytest.approx(
        (effect.estimate, effect.low, effect.ratio[0] if effect.ratio else None)
    )
    assert data["n_available"] == found.n_available and data["reference"] == "nothing"
