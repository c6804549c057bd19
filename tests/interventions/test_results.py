"""A judgement's result declared in front matter becomes a strict pydantic model."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bot.conversation.llm import check_strict
from bot.interventions.language.format import FieldSpec
from bot.interventions.language.results import result_model

FIELDS = {
    "level": FieldSpec(type="choice", options={"none": "no risk", "high": "talk of self-harm"}),
    "score": FieldSpec(type="int", min=1, max=5, description="How sure you are."),
    "note": FieldSpec(type="text", optional=True),
}


def test_the_model_has_the_declared_fields_types_and_meanings() -> None:
    model = result_model("risk", FIELDS, "Rate the risk.")

    check_strict(model)
    schema = model.model_json_schema()
    assert model.__name__ == "RiskResult" and schema["description"] == "Rate the risk."
    assert schema["properties"]["level"]["enum"] == ["none", "high"]
    assert (
        'Options: "none": no risk; "high": talk of self-harm.'
        in (schema["properties"]["level"]["description"])
    )
    assert "From 1 to 5." in schema["properties"]["score"]["description"]
    assert model.model_validate({"level": "high", "score": 2, "note": None}).note is None


@pytest.mark.parametrize(
    "value",
    [{"level": "maybe", "score": 2}, {"level": "none", "score": 9}, {"level": "none"}],
)
def test_a_value_outside_the_declared_type_is_refused(value: dict) -> None:
    with pytest.raises(ValidationError):
        result_model("risk", FIELDS, "Rate the risk.").model_validate(value)
