"""The export's arm mask (bot.reporting.arm_mask): a blinded study's arms as codes or left out,
in every cell that names one, and nothing else touched."""

from __future__ import annotations

from types import SimpleNamespace

from bot.reporting.arm_mask import NAMES, RAW_FIELDS, ArmMask
from bot.store.events import participant_stream

CODES = {"tips": "X111111", "tips-daily": "X222222", "tips-buddy": "X333333"}
STUDIES = [("p1", "smart-blind"), ("p2", "walk-pilot"), ("p3", None)]


def mask(omit: bool = False) -> ArmMask:
    given = ArmMask(
        frozenset({"walk-pilot"}), frozenset({"coach", "control"}), {"smart-blind": CODES}, omit
    )
    return given.with_participants(STUDIES)


def test_a_stage_two_allocation_row_carries_codes_only() -> None:
    row = {
        "participant_id": "p1",
        "study": "smart-blind",
        "arm": "tips-daily",
        "sequence": "s2/tips",
        "p_tips-daily": 0.5,
        "p_tips-buddy": 0.5,
        "conditional_p_tips-daily": 1.0,
        "intervention": "smart-walk",
    }

    masked = mask().record(row)

    assert masked == {
        "participant_id": "p1",
        "study": "smart-blind",
        "arm": "X222222",
        "sequence": "s2/X111111",
        "p_X222222": 0.5,
        "p_X333333": 0.5,
        "conditional_p_X222222": 1.0,
        "intervention": None,
    }
    assert not any(name in str(masked) for name in ("tips", "smart-walk"))


def test_an_open_study_and_a_decision_options_probabilities_are_left_alone() -> None:
    opened = {"participant_id": "p2", "arm": "coach", "p_coach": 0.5, "intervention": "x"}
    decision = {"participant_id": "p1", "arm": "tips", "p_walk": 0.6, "p_rest": 0.4}

    assert mask().record(opened) == opened
    assert mask().record(decision) == {**decision, "arm": "X111111"}
    assert NAMES.with_participants(STUDIES).record(decision) == decision


def test_a_researchers_files_leave_the_arm_column_out_and_the_arm_files_unwritten() -> None:
    researcher = mask(omit=True)
    row = {"participant_id": "p1", "arm": "tips", "intervention": "smart-walk"}

    assert researcher.columns(("participant_id", "arm", "intervention")) == (
        "participant_id",
        "intervention",
    )
    assert researcher.record(row) == {"participant_id": "p1", "arm": None, "intervention": None}
    assert not researcher.writes("allocations") and not researcher.writes("events")
    assert researcher.writes("participants") and mask().writes("allocations")


def test_per_arm_columns_are_renamed_and_kept_where_an_open_study_uses_the_name() -> None:
    columns = ("arm", "p_tips", "p_coach", "conditional_p_tips", "timezone")

    assert mask().columns(columns) == (
        "arm",
        "p_X111111",
        "p_coach",
        "conditional_p_X111111",
        "timezone",
    )


def raw(event_type: str, stream: str, data: dict) -> SimpleNamespace:
    fields = dict.fromkeys(RAW_FIELDS)
    return SimpleNamespace(**{**fields, "event_type": event_type, "stream_id": stream}, data=data)


def test_events_that_name_an_arm_are_masked() -> None:
    allocated = raw(
        "participant.allocated",
        participant_stream("p1"),
        {
            "arm": "tips-buddy",
            "first_arm": "tips",
            "sequence": "s2/tips",
            "probabilities": {"tips-daily": 0.5, "tips-buddy": 0.5},
            "stratum": "activity_level=low",
        },
    )
    switched = raw(
        "participant.updated", participant_stream("p1"), {"changes": {"intervention": "x"}}
    )
    broadcast = raw("broadcast.created", "broadcast-1", {"filter": {"arm": "tips"}})
    other = raw("participant.allocated", participant_stream("p2"), {"arm": "coach"})

    assert mask().event(allocated).data == {
        "arm": "X333333",
        "first_arm": "X111111",
        "sequence": "s2/X111111",
        "probabilities": {"X222222": 0.5, "X333333": 0.5},
        "stratum": "activity_level=low",
    }
    assert mask().event(switched).data == {"changes": {"intervention": None}}
    assert mask().event(broadcast).data == {"filter": {"arm": None}}
    assert mask().event(other) is other
