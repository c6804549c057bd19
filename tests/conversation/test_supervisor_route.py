"""A production start needs someone to text about a crisis, or SUPERVISOR_PHONES=none."""

from __future__ import annotations

import logging

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from bot.conversation.supervisors import check_supervisor_route
from bot.core.config import ConfigError, load_settings
from bot.web import create_app
from tests.conftest import TEST_MASTER_KEY
from tests.web.conftest import settings_for

TWILIO = {
    "MESSENGER": "twilio",
    "TWILIO_ACCOUNT_SID": "AC" + "0" * 32,
    "TWILIO_AUTH_TOKEN": "secret",
    "TWILIO_FROM_NUMBER": "+15005550006",
    "TANDEM_MASTER_KEY": TEST_MASTER_KEY,  # production needs one (checked before supervisors)
}


def _settings(**env: str):
    return load_settings(env, env_file=None)


def test_twilio_without_supervisor_phones_refuses_to_start():
    with pytest.raises(ConfigError, match="SUPERVISOR_PHONES: MESSENGER=twilio needs"):
        check_supervisor_route(_settings(**TWILIO))


def test_supervisor_phones_none_starts_with_a_warning_every_time(caplog):
    settings = _settings(**TWILIO, SUPERVISOR_PHONES="none")
    with caplog.at_level(logging.WARNING):
        check_supervisor_route(settings)
        check_supervisor_route(settings)

    warnings = [r for r in caplog.records if "SUPERVISOR_PHONES=none" in r.getMessage()]
    assert len(warnings) == 2
    assert settings.supervisor_phones == [] and settings.supervisors_declined


def test_the_console_messenger_starts_without_supervisors_and_without_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        check_supervisor_route(_settings())
    assert caplog.records == []


def test_twilio_with_a_supervisor_phone_starts_quietly(caplog):
    with caplog.at_level(logging.WARNING):
        check_supervisor_route(_settings(**TWILIO, SUPERVISOR_PHONES="+14165550199"))
    assert caplog.records == []


def test_supervisors_declined_cannot_be_set_from_the_environment():
    assert not _settings(**TWILIO, supervisors_declined="true").supervisors_declined


def test_the_web_app_refuses_to_start_on_twilio_without_supervisors(database_url: str):
    from bot.runtime.bootstrap import build_services

    services = build_services(settings_for(database_url, **TWILIO))
    try:
        with pytest.raises(ConfigError, match="SUPERVISOR_PHONES"):
            create_app(services)
    finally:
        services.close()


def test_the_worker_command_refuses_to_start_on_twilio_without_supervisors(monkeypatch):
    for name, value in TWILIO.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SUPERVISOR_PHONES", raising=False)

    result = CliRunner().invoke(cli, ["worker"])

    assert result.exit_code == 1
    assert "SUPERVISOR_PHONES: MESSENGER=twilio needs" in result.output
