"""`tandem interventions validate` knows forms: field domains, the completion rule (a typed
condition over `form.*`), steps naming a form, form names in conditions and templates."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.interventions.validation.validate import validate_folder

SHIPPED = Path(__file__).resolve().parents[2] / "interventions"


def copy(tmp_path: Path, slug: str = "ot-mentor") -> Path:
    folder = tmp_path / slug
    shutil.copytree(SHIPPED / slug, folder)
    return folder


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def messages(folder: Path) -> list[str]:
    return [f"{Path(p.file).name}:{p.line}: {p.message}" for p in validate_folder(folder)]


def test_the_shipped_forms_validate() -> None:
    assert validate_folder(SHIPPED / "ot-mentor") == []
    assert validate_folder(SHIPPED / "health-intake") == []


def test_a_completion_rule_naming_an_unknown_figure_or_misusing_a_type_is_reported(
    tmp_path: Path,
) -> None:
    folder = copy(tmp_path)
    form = folder / "forms" / "situation.yaml"
    edit(form, "form.others_known >= 7", "form.other_known >= 7")
    assert any(
        "situation.yaml:5: complete_when" in m and "did you mean 'form.others_known'" in m
        for m in messages(folder)
    )
    edit(form, "form.other_known >= 7", 'form.others_known >= "seven"')
    assert any("situation.yaml:5: complete_when" in m for m in messages(folder))


def test_a_field_in_an_undeclared_domain_is_reported(tmp_path: Path) -> None:
    folder = copy(tmp_path, "health-intake")
    edit(
        folder / "forms" / "intake.yaml", "domain: sleep, description", "domain: slep, description"
    )
    found = messages(folder)
    assert any("no domain 'slep'; did you mean 'sleep'?" in m for m in found), found


def test_a_step_naming_an_unknown_form_is_reported(tmp_path: Path) -> None:
    folder = copy(tmp_path)
    edit(folder / "steps" / "intake.md", "form: situation", "form: situaton")
    found = messages(folder)
    assert any("intake.md:4: no form 'situaton'; did you mean 'situation'?" in m for m in found)


def test_conditions_and_templates_naming_what_a_form_lacks_are_reported(tmp_path: Path) -> None:
    folder = copy(tmp_path)
    step = folder / "steps" / "intake.md"
    edit(step, "when: forms.situation.complete", "when: forms.situation.clock.knwn >= 3")
    edit(step, "{{ forms.situation.clock.text }}", "{{ forms.situation.answers.hobby }}")
    found = messages(folder)
    assert any("no form value 'forms.situation.clock.knwn'" in m for m in found), found
    assert any("'forms.situation.answers.hobby'" in m for m in found), found


def test_a_wrong_type_in_a_form_condition_is_reported(tmp_path: Path) -> None:
    folder = copy(tmp_path)
    step = folder / "steps" / "intake.md"
    edit(
        step, "when: forms.situation.complete", 'when: forms.situation.answers.patient_age == "old"'
    )
    found = messages(folder)
    assert any("intake.md" in m and "patient_age" in m for m in found), found


def test_a_form_declared_in_intervention_yaml_is_read_and_its_problems_point_there(
    tmp_path: Path,
) -> None:
    folder = copy(tmp_path)
    body = (folder / "forms" / "situation.yaml").read_text()
    (folder / "forms" / "situation.yaml").unlink()
    indented = "\n".join("    " + line for line in body.splitlines())
    config = folder / "intervention.yaml"
    config.write_text(config.read_text() + "forms:\n  situation:\n" + indented + "\n")
    assert messages(folder) == []
    edit(
        config,
        "      marital_status:\n        type: choice",
        "      marital_status:\n        domain: family\n        type: choice",
    )
    found = messages(folder)
    assert any(m.startswith("intervention.yaml:") and "no domain 'family'" in m for m in found), (
        found
    )


def test_an_unconditional_transition_hides_only_later_ones_of_the_same_timing(
    tmp_path: Path,
) -> None:
    folder = copy(tmp_path)
    step = folder / "steps" / "intake.md"
    edit(step, "transitions:\n", "transitions:\n  - to: mentoring\n    when: step.turns > 30\n")
    edit(step, "    when: step.turns > 30\n", "")  # unconditional, before the reply
    assert not any("always fires" in m for m in messages(folder))  # the other is after it

    edit(step, "transitions:\n", "transitions:\n  - to: mentoring\n")
    assert any("intake.md" in m and "always fires: later ones never" in m for m in messages(folder))
