"""The keys of administering, repeating and send-time rendering on an action: `administer`
is a verb, `repeat` goes with ask, administer or send (not with `after`), `freeze` with a
delayed send only."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bot.interventions.language.format import Action

DAILY = {"every": "1 day", "at": "09:00"}


def test_administer_repeat_and_freeze_are_accepted_where_they_belong() -> None:
    assert Action.model_validate({"administer": "phq9", "after": "14d"}).verb == "administer"
    assert Action.model_validate({"ask": "mood", "repeat": DAILY}).repeat == DAILY
    assert Action.model_validate({"send": "Hi", "after": "7d", "freeze": True}).freeze


@pytest.mark.parametrize(
    ("written", "why"),
    [
        ({"note": "summary", "repeat": DAILY}, "`repeat` goes with"),
        ({"administer": "phq9", "after": "1d", "repeat": DAILY}, "do not go together"),
        ({"send": "Hi", "freeze": True}, "`freeze` goes with `send` and `after`"),
        ({"administer": "phq9", "ask": "mood"}, "exactly one of"),
    ],
)
def test_a_key_where_it_does_not_belong_is_refused(written: dict, why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        Action.model_validate(written)
