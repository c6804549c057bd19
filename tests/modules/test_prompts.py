"""Every prompt names only tools and states that exist, and renders with the engine's variables."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.conversation.context import prompt_variables
from bot.conversation.prompts import PromptError, load_prompt, unknown_names
from bot.runtime.tool_registry import TOOLS
from modules import MODULES

PROMPTS = sorted((Path(__file__).resolve().parents[2] / "prompts").glob("*.md"))
NOW = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)
FULL = {
    "participant_id": "p1",
    "timezone": "Europe/Madrid",
    "name": "Ana",
    "gender": "female",
    "ethnicity": "Hispanic",
    "background": "nurse on night shifts",
    "profile": {"habit_domain": "sleep", "success_count": 3, "total_prompts": 5},
}
EXTRA = {"last_prompt": "After dinner, dim the lights.", "last_prompt_when": "Monday 20:50"}


def test_there_is_a_prompt_for_every_module_and_a_module_for_every_prompt() -> None:
    assert sorted(p.stem for p in PROMPTS) == sorted(MODULES)
    for name, module in MODULES.items():
        assert module.prompt.name == name


@pytest.mark.parametrize("path", PROMPTS, ids=lambda p: p.stem)
def test_a_prompt_names_only_tools_and_states_that_exist(path: Path) -> None:
    assert unknown_names(load_prompt(path), TOOLS, MODULES) == []


@pytest.mark.parametrize("path", PROMPTS, ids=lambda p: p.stem)
@pytest.mark.parametrize("participant", [{"participant_id": "p0", "profile": {}}, FULL])
def test_a_prompt_renders_with_the_engines_variables(path: Path, participant: dict) -> None:
    variables = prompt_variables(participant, NOW, [], "inbound")
    variables |= {**EXTRA, "habit_answer": None}

    text = load_prompt(path).render(variables)

    assert "{{" not in text and "{%" not in text
    if participant is FULL:
        assert "Name: Ana" in text and "Background: nurse on night shifts" in text
        assert "15:00 on Monday 2 March 2026" in text


def test_the_name_check_catches_promptpipes_mistakes(tmp_path: Path) -> None:
    path = tmp_path / "bad.md"
    path.write_text(
        "---\ntools: [save_user_profile, track_feedback]\nfallback: Hi\n---\n"
        "Save it with `save_user_feedback`, store `other_personalization`, call "
        "generate_habit_prompt, then go to PROMPT_GENERATOR or `coordinator`.\n"
    )

    problems = unknown_names(load_prompt(path), TOOLS, MODULES)

    assert problems == [
        "tools: no tool named 'track_feedback'",
        "mentions 'coordinator': not an offered tool, argument or state",
        "mentions the tool 'generate_habit_prompt', which the prompt does not offer",
        "mentions 'other_personalization': not an offered tool, argument or state",
        "mentions 'save_user_feedback': not an offered tool, argument or state",
        "mentions 'PROMPT_GENERATOR': states are lower case",
    ]


def test_names_inside_template_tags_are_variables_not_mentions(tmp_path: Path) -> None:
    path = tmp_path / "vars.md"
    path.write_text(
        "---\nfallback: Hi\n---\nIt is {{ local_time }}{% if first_contact %}!{% endif %}"
    )

    assert unknown_names(load_prompt(path), TOOLS, MODULES) == []


def test_a_variable_the_engine_does_not_supply_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "typo.md"
    path.write_text("---\nfallback: Hi\n---\nHello {{ nmae }}")

    with pytest.raises(PromptError, match="'nmae' is undefined"):
        load_prompt(path).render({"name": "Ana"})


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\ntools: [x]\n---\nHi", "`fallback` must be a non-empty text"),
        ("---\nfallback: Hi\ntemprature: 0.2\n---\nHi", "unknown front matter key(s)"),
        ("---\nfallback: Hi\ntemperature: 2.5\n---\nHi", "`temperature` must be a number"),
        ("---\nfallback: Hi\ntemperature: warm\n---\nHi", "`temperature` must be a number"),
        ("---\nfallback: Hi\nmax_tokens: 0\n---\nHi", "`max_tokens` must be a whole number"),
        ("---\nfallback: Hi\nmax_tokens: 1.5\n---\nHi", "`max_tokens` must be a whole number"),
        ("---\nfallback: Hi\ntools: scheduler\n---\nHi", "`tools` must be a list"),
        ("---\nfallback: Hi\n---\n{% if x %}unclosed", "line 1"),
    ],
)
def test_a_broken_prompt_file_is_refused_with_the_reason(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "broken.md"
    path.write_text(text)

    with pytest.raises(PromptError) as raised:
        load_prompt(path)

    assert problem in str(raised.value)


def test_a_prompts_model_settings_are_read_from_its_front_matter(tmp_path: Path) -> None:
    path = tmp_path / "coach.md"
    path.write_text("---\nfallback: Hi\nmodel: m1\ntemperature: 0\nmax_tokens: 200\n---\nHi")

    choice = load_prompt(path).choice

    assert (choice.name, choice.temperature, choice.max_tokens) == ("m1", 0.0, 200)
