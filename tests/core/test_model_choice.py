"""Model settings fall through level by level: prompt file > intervention > server."""

from __future__ import annotations

from bot.core.model_choice import ModelChoice


def test_each_setting_left_open_is_taken_from_the_level_below() -> None:
    prompt = ModelChoice(name=None, temperature=0.0, max_tokens=None)
    intervention = ModelChoice(name="careful", temperature=0.4, max_tokens=300)

    assert prompt.over(intervention) == ModelChoice("careful", 0.0, 300)


def test_a_zero_temperature_is_a_setting_not_a_gap() -> None:
    assert ModelChoice(temperature=0.0).over(ModelChoice(temperature=0.1)).temperature == 0.0


def test_a_bare_model_name_is_a_choice_of_that_name_only() -> None:
    assert ModelChoice.of("m1") == ModelChoice("m1", None, None)
    assert ModelChoice.of(None).over("m2") == ModelChoice("m2", None, None)
