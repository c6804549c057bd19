"""Templates render once into text and slots: nothing the model or a participant writes is
ever template source, and slot markers are checked."""

from __future__ import annotations

import jinja2
import pytest

from bot.interventions.language.templates import (
    RenderError,
    Slot,
    SlotError,
    TemplateSet,
    parse_slot,
)


def render(source: str, **context: object):
    templates = TemplateSet({"rules.md": "Be brief. [[think:check]]"})
    return templates.render(templates.compile(source), context)


def test_a_template_renders_into_texts_around_its_slots_in_order() -> None:
    rendered = render("Hi {{ name }}. [[think:plan]] Then {{ 1 + 1 }}. [[reply]]", name="Ana")

    assert rendered.texts == ("Hi Ana. ", " Then 2. ", "")
    assert rendered.slots == (Slot("think", "plan"), Slot("speak", "reply"))


def test_data_that_looks_like_template_code_or_a_slot_stays_literal() -> None:
    said = "{{ 7*7 }} {% for x in y %} [[reply]]"

    rendered = render("They said: {{ said }} [[reply]]", said=said)

    assert rendered.texts[0] == f"They said: {said} "
    assert len(rendered.slots) == 1


def test_slots_in_a_partial_and_in_a_false_branch_are_handled() -> None:
    rendered = render('{% include "rules.md" %}{% if false %}[[think:never]]{% endif %} [[reply]]')

    assert [slot.name for slot in rendered.slots] == ["check", "reply"]


def test_a_slot_rendered_twice_is_an_error() -> None:
    with pytest.raises(RenderError, match="reply rendered more than once"):
        render("{% for i in [1, 2] %}[[reply]]{% endfor %}")


def test_a_template_cannot_reach_python_internals() -> None:
    with pytest.raises(jinja2.exceptions.SecurityError):
        render("{{ name.__class__.__mro__ }}", name="x")


def test_an_unknown_variable_is_an_error_not_an_empty_string() -> None:
    with pytest.raises(jinja2.UndefinedError):
        render("Hello {{ nmae }}")


@pytest.mark.parametrize(
    ("inside", "slot"),
    [
        ("reply", Slot("speak", "reply")),
        ("speak:answer", Slot("speak", "answer")),
        ("think:plan", Slot("think", "plan")),
        ("pick:mood|good, bad , so-so", Slot("pick", "mood", ("good", "bad", "so-so"))),
        ("bool:ready", Slot("bool", "ready")),
        ("int:score", Slot("int", "score")),
    ],
)
def test_the_slot_syntax(inside: str, slot: Slot) -> None:
    assert parse_slot(inside) == slot


@pytest.mark.parametrize(
    ("inside", "message"),
    [
        ("ponder:x", "unknown slot kind 'ponder'"),
        ("pick:x|one", "a pick slot needs two or more options"),
        ("bool:x|a,b", "only pick slots take options"),
        ("two words", "is not a slot"),
    ],
)
def test_a_broken_slot_says_what_is_wrong_and_where(inside: str, message: str) -> None:
    with pytest.raises(SlotError, match=message) as caught:
        TemplateSet({}).compile(f"line one\nline two [[{inside}]]")

    assert caught.value.line == 2


def test_the_typed_slots_ask_for_a_strict_one_field_model() -> None:
    from bot.conversation.llm import check_strict

    for slot in (parse_slot("pick:mood|good,bad"), parse_slot("bool:ok"), parse_slot("int:n")):
        check_strict(slot.model())
    assert slot.model().model_validate({"value": 3}).value == 3
