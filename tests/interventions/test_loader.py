"""Loading an intervention folder: kinds by folder, front matter typed, lines remembered."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.interventions.language.loader import load_intervention, read_intervention
from bot.interventions.language.problems import InterventionError
from tests.interventions.variants import GOOD, problems, variant


def test_the_fixture_loads_every_primitive_by_its_folder() -> None:
    intervention = load_intervention(GOOD)

    assert intervention.slug == "good" and intervention.root == "welcome"
    assert sorted(intervention.steps) == [
        "clarify", "explore", "goodbye", "recap", "risk-check", "welcome",
    ]  # fmt: skip
    assert sorted(intervention.judgements) == ["engaged", "ready", "risk"]
    assert list(intervention.notes) == ["summary"] and list(intervention.questions) == ["mood"]
    assert intervention.note_names() == {"SUMMARY": "summary"}
    assert "style.md" in intervention.partials


def test_model_aliases_resolve_with_the_defaults_of_each_kind() -> None:
    intervention = load_intervention(GOOD)

    assert intervention.model(None, "step").name == "careful-model"
    assert intervention.model("fast", "step").name == "fast-model"
    assert intervention.model(None, "judgement").name == "fast-model"


def test_the_revision_changes_when_any_file_changes(tmp_path: Path) -> None:
    before = load_intervention(GOOD).revision
    folder = variant(tmp_path, "partials/style.md", "You are a coach.\n")

    after = load_intervention(folder).revision

    assert before.startswith("1+") and after.startswith("1+") and before != after


def test_front_matter_keys_are_found_at_their_lines() -> None:
    source = load_intervention(GOOD).source("step", "explore")

    assert source.line("transitions", 1, "when") == 10
    assert source.line("transitions", 1, "actions", 0, "severity") == 13
    assert source.body_line == 15  # the closing "---": the body's line 1 ends there


def test_a_yaml_mistake_is_reported_at_its_line(tmp_path: Path) -> None:
    folder = variant(
        tmp_path, "steps/clarify.md", replace=("digression: true", "digression: [true")
    )

    assert any(p.startswith("steps/clarify.md:4: invalid YAML") for p in problems(folder))


def test_an_unknown_key_is_named_at_its_line(tmp_path: Path) -> None:
    folder = variant(tmp_path, "steps/goodbye.md", replace=("end: true", "ends: true"))

    assert problems(folder) == ["steps/goodbye.md:3: unknown key `ends`"]


def test_a_file_outside_the_kind_folders_must_say_its_kind(tmp_path: Path) -> None:
    folder = variant(tmp_path, "extra.md", "---\ntitle: Extra\n---\nHi\n")

    assert problems(folder) == [
        "extra.md:2: unknown kind None; known: step, judgement, note, question"
    ]


def test_loading_a_folder_with_problems_raises_them_all(tmp_path: Path) -> None:
    folder = variant(tmp_path, "intervention.yaml", "title: X\nversion: 1\n")

    with pytest.raises(InterventionError) as caught:
        load_intervention(folder)

    assert "say where participants start: `root` (a step) or `module`" in str(caught.value)
    assert read_intervention(tmp_path / "missing")[0] is None


def test_the_interventions_crisis_phrases_and_quiet_hours_are_ready_to_wire() -> None:
    intervention = load_intervention(GOOD)

    assert intervention.crisis_screen().check("I might give up on everything").crisis
    assert not intervention.crisis_screen().check("I might give up sugar").crisis
    assert str(intervention.quiet_hours().start) == "22:00:00"


def _with_checklist(tmp_path: Path, items: str) -> tuple[Path, int]:
    """The good fixture with `review_checklist:` and `items` appended; the line of the key."""
    folder = variant(tmp_path, "intervention.yaml", replace=("root:", "root:"))
    text = (folder / "intervention.yaml").read_text()
    (folder / "intervention.yaml").write_text(text + "review_checklist:\n" + items)
    return folder, text.count("\n") + 1


def test_a_review_checklist_loads_with_its_keys_and_labels(tmp_path: Path) -> None:
    items = "  - {key: on_manual, label: Stayed on the manual}\n  - {key: empathic, label: 5}\n"
    folder, _ = _with_checklist(tmp_path, items)

    loaded = load_intervention(folder).config.review_checklist

    assert [(i.key, i.label) for i in loaded] == [
        ("on_manual", "Stayed on the manual"),
        ("empathic", "5"),
    ]


def test_a_checklist_key_given_twice_or_badly_written_is_named_at_its_line(
    tmp_path: Path,
) -> None:
    twice, line = _with_checklist(
        tmp_path / "a", "  - {key: on_manual, label: A}\n  - {key: on_manual, label: B}\n"
    )
    bad, bad_line = _with_checklist(tmp_path / "b", "  - {key: ok, label: A}\n  - {key: Bad Key}\n")

    assert problems(twice) == [
        f"intervention.yaml:{line}: `review_checklist`: each checklist `key` "
        "once: on_manual is given twice"
    ]
    found = problems(bad)
    assert len(found) == 2
    assert all(
        p.startswith(f"intervention.yaml:{bad_line + 2}: `review_checklist.1") for p in found
    )
