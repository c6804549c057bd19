"""A process that runs conversations reports every start-up problem in one round: malformed
settings, the supervisor route, the master key and an unusable INTERVENTION together; and a
study that does not validate refuses the start."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.config import ConfigError
from bot.runtime.routing import intervention_catalogue
from bot.runtime.startup import startup_settings
from bot.studies.catalogue import STUDIES, StudyCatalogue

TWILIO = {
    "MESSENGER": "twilio",
    "TWILIO_ACCOUNT_SID": "AC" + "0" * 32,
    "TWILIO_AUTH_TOKEN": "secret",
    "TWILIO_FROM_NUMBER": "+15005550006",
    "PUBLIC_BASE_URL": "https://tandem.example.org",
}


def _problems(environ: dict[str, str]) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        startup_settings(intervention_catalogue(), environ, env_file=None)
    return raised.value.problems


def test_a_bad_setting_and_an_unknown_intervention_are_reported_together() -> None:
    problems = _problems({"DEFAULT_TIMEZONE": "Mars/Olympus", "INTERVENTION": "nosuch"})

    assert any(p.startswith("DEFAULT_TIMEZONE:") for p in problems)
    assert any("INTERVENTION='nosuch'" in p for p in problems)
    assert any("nosuch: no such intervention" in p for p in problems)


def test_the_supervisor_route_and_master_key_come_with_a_malformed_setting() -> None:
    problems = _problems({**TWILIO, "LLM_MAX_RETRIES": "many", "INTERVENTION": "nosuch"})

    assert any(p.startswith("LLM_MAX_RETRIES:") for p in problems)
    assert any(p.startswith("SUPERVISOR_PHONES: MESSENGER=twilio needs") for p in problems)
    assert any(p.startswith("TANDEM_MASTER_KEY: MESSENGER=twilio needs") for p in problems)
    assert any("INTERVENTION='nosuch'" in p for p in problems)
    assert len(problems) == len(set(problems))


def test_valid_settings_with_a_usable_intervention_start(tmp_path: Path) -> None:
    environ = {"DATABASE_URL": f"sqlite:///{tmp_path / 't.db'}", "INTERVENTION": "demo"}

    settings = startup_settings(intervention_catalogue(), environ, env_file=None)

    assert settings.intervention == "demo"
    assert settings.database_url.endswith("t.db")


def test_a_study_that_does_not_validate_refuses_the_start(tmp_path: Path) -> None:
    """The worker and the web refuse to start rather than run without a study's stage 2."""
    root = tmp_path / "studies"
    (root / "smart-demo").mkdir(parents=True)
    text = (STUDIES / "smart-demo" / "study.yaml").read_text()
    assert "tips-daily: 1" in text
    (root / "smart-demo" / "study.yaml").write_text(text.replace("tips-daily: 1", "tips-daily: 0"))
    environ = {"DATABASE_URL": f"sqlite:///{tmp_path / 't.db'}", "INTERVENTION": "demo"}
    catalogue = intervention_catalogue()

    with pytest.raises(ConfigError) as raised:
        startup_settings(catalogue, environ, None, StudyCatalogue(root, catalogue))

    problems = raised.value.problems
    assert problems[0].startswith("studies that cannot be used")
    assert "`tandem study validate`" in problems[0]
    assert any(p.startswith(f"{root / 'smart-demo' / 'study.yaml'}:") for p in problems[1:])
    assert startup_settings(catalogue, environ, None, StudyCatalogue(STUDIES, catalogue))
