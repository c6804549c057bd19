"""A real Twilio deployment refuses the development shortcuts and a webhook URL in clear, and
says so with every other problem in one error."""

from __future__ import annotations

import pytest

from bot.core.config import ConfigError, load_settings

TWILIO = {
    "MESSENGER": "twilio",
    "TWILIO_ACCOUNT_SID": "AC" + "0" * 32,
    "TWILIO_AUTH_TOKEN": "auth-token",
    "TWILIO_FROM_NUMBER": "+15005550006",
    "SUPERVISOR_PHONES": "+15005550111",
    "TANDEM_MASTER_KEY": "m" * 40,
    "PUBLIC_BASE_URL": "https://tandem.example.org",
}


def _problems(**changes: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_settings({**TWILIO, **changes}, env_file=None)
    return caught.value.problems


def test_the_twilio_settings_without_shortcuts_are_accepted() -> None:
    assert load_settings(TWILIO, env_file=None).messenger == "twilio"


@pytest.mark.parametrize("flag", ["true", "1", "yes", "ON"])
def test_twilio_refuses_insecure_local_mode(flag: str) -> None:
    problems = _problems(TANDEM_INSECURE_LOCAL=flag)

    assert any("MESSENGER=twilio refuses TANDEM_INSECURE_LOCAL" in p for p in problems)


def test_twilio_refuses_an_http_public_base_url() -> None:
    problems = _problems(PUBLIC_BASE_URL="http://tandem.example.org")

    assert any("MESSENGER=twilio needs an https:// PUBLIC_BASE_URL" in p for p in problems)


def test_both_refusals_come_with_the_other_problems_in_one_error() -> None:
    problems = _problems(
        TANDEM_INSECURE_LOCAL="true",
        PUBLIC_BASE_URL="HTTP://tandem.example.org",
        TWILIO_AUTH_TOKEN="",
        DEFAULT_TIMEZONE="Mars/Olympus",
    )

    assert any("refuses TANDEM_INSECURE_LOCAL" in p for p in problems)
    assert any("https:// PUBLIC_BASE_URL" in p for p in problems)
    assert any("TWILIO_AUTH_TOKEN" in p for p in problems)
    assert any("DEFAULT_TIMEZONE" in p for p in problems)


def test_the_console_messenger_may_still_run_insecure_on_http() -> None:
    settings = load_settings(
        {"TANDEM_INSECURE_LOCAL": "true", "PUBLIC_BASE_URL": "http://localhost:8000"},
        env_file=None,
    )

    assert settings.insecure_local and settings.messenger == "console"
