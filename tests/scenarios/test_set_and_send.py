"""Data flows where authors expect: `set:` stores a judgement's result in typed profile fields
(seen in GET /conversation/participants/{id} and in the export), `send:` templates print it,
and `profile.saved` records only values that changed."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from bot.reporting.export import export
from tests.fakes.openai_api import ScriptedReply
from tests.scenarios.harness import SCENARIO_INTERVENTIONS, Harness


def test_set_from_a_judgement_fills_typed_profile_fields_and_send_prints_them(
    make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = make_harness(SCENARIO_INTERVENTIONS, INTERVENTION="goal-setting")
    h.script(ScriptedReply.text("What would you like to do each day, and for how long?"))
    h.enroll(name="Ana", intervention="goal-setting")
    h.script(ScriptedReply.structured({"goal": "a brisk walk", "minutes": 20}))

    h.text("A brisk walk, twenty minutes")
    h.advance(timedelta(hours=1))

    assert h.outbound()[1:] == [
        "Great: a brisk walk, 20 minutes a day.",
        "Reminder: a brisk walk for 20 minutes today.",
    ]
    saved = h.data("profile.saved")
    assert [(s.changes, s.source) for s in saved] == [
        ({"goal": "a brisk walk", "minutes": 20}, "intervention")
    ]
    shown = h.api("GET", f"/participants/{h.pid}").get_json()["result"]
    assert shown["profile"] == {"goal": "a brisk walk", "minutes": 20}
    export(h.store, tmp_path, "jsonl")
    lines = (tmp_path / "participants.jsonl").read_text().splitlines()
    (row,) = [json.loads(line) for line in lines]
    assert row["profile"] == {"goal": "a brisk walk", "minutes": 20}
