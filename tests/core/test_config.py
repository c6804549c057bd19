"""Configuration: defaults for the embedded set-up, and one message listing every problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.config import ConfigError, load_settings


def test_an_empty_environment_gives_the_embedded_defaults() -> None:
    settings = load_settings({}, env_file=None)
    assert settings.database_url == "sqlite:///tandem.db"
    assert settings.messenger == "console"
    assert settings.default_timezone == "UTC"


def test_every_problem_is_listed_in_one_error() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(
            {
                "DEFAULT_TIMEZONE": "Mars/Olympus",
                "DEFAULT_REGION": "XX",
                "MESSENGER": "pigeon",
                "PUBLIC_BASE_URL": "ftp://example.org",
            },
            env_file=None,
        )
    text = str(caught.value)
    for name in ("DEFAULT_TIMEZONE", "DEFAULT_REGION", "MESSENGER", "PUBLIC_BASE_URL"):
        assert name in text
    assert len(caught.value.problems) == 4


def test_twilio_messenger_without_credentials_names_what_is_missing() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({"MESSENGER": "twilio", "SUPERVISOR_PHONES": "12"}, env_file=None)
    problems = caught.value.problems
    assert any("TWILIO_ACCOUNT_SID" in p for p in problems)
    assert any("TWILIO_FROM_NUMBER" in p for p in problems)
    assert any("SUPERVISOR_PHONES" in p for p in problems)


A, B, C = ("a" * 32, "b" * 40, "c" * 33)


def test_comma_separated_lists_and_flags_are_parsed() -> None:
    settings = load_settings(
        {
            "TANDEM_API_TOKENS": f"{A}, {B},,{C}",
            "STORE_PROMPTS": "false",
            "SUPERVISOR_PHONES": "+14155552671,+442071838750",
        },
        env_file=None,
    )
    assert settings.api_tokens == [A, B, C]
    assert settings.store_prompts is False
    assert settings.supervisors() == ["+14155552671", "+442071838750"]


def test_the_environment_overrides_the_env_file(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("DEFAULT_TIMEZONE=Europe/Madrid\nINTERVENTION=habit-coach\n")
    settings = load_settings({"INTERVENTION": "demo"}, env_file=env_file)
    assert settings.default_timezone == "Europe/Madrid"
    assert settings.intervention == "demo"


def test_env_example_documents_every_setting() -> None:
    from bot.core.config import ENV_NAMES

    example = (Path(__file__).resolve().parents[2] / ".env.example").read_text()
    documented = {
        line.split("=")[0].lstrip("# ").strip() for line in example.splitlines() if "=" in line
    }
    assert ENV_NAMES <= documented


def test_an_api_token_shorter_than_32_characters_stops_the_start_naming_which() -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings({"TANDEM_API_TOKENS": f"{A},x,{'y' * 31}"}, env_file=None)
    [problem] = [p for p in refused.value.problems if "TANDEM_API_TOKENS" in p]
    assert "token(s) 2, 3 are shorter than 32 characters" in problem
    assert "y" * 31 not in problem  # never the token itself


def test_a_32_character_token_is_accepted() -> None:
    assert load_settings({"TANDEM_API_TOKENS": A}, env_file=None).api_tokens == [A]


def test_a_wrong_field_and_a_missing_companion_setting_are_listed_together() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(
            {"MESSENGER": "twilio", "TWILIO_TIMEOUT_SECONDS": "soon", "SUPERVISOR_PHONES": "12"},
            env_file=None,
        )
    problems = caught.value.problems
    assert any(p.startswith("TWILIO_TIMEOUT_SECONDS:") for p in problems)
    assert "MESSENGER=twilio needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN" in problems
    assert any(p.startswith("SUPERVISOR_PHONES:") for p in problems)


def test_promptpipes_names_for_tandems_settings_are_honoured() -> None:
    settings = load_settings(
        {
            "GENAI_MODEL": "gpt-4o",
            "GENAI_TEMPERATURE": "0.3",
            "AUTO_ENROLL_NEW_USERS": "true",
            "SCHEDULER_PREP_TIME_MINUTES": "15",
            "CHAT_HISTORY_LIMIT": "-1",
        },
        env_file=None,
    )
    assert (settings.model, settings.temperature) == ("gpt-4o", 0.3)
    assert settings.unknown_sender_policy == "enroll"
    assert (settings.prep_minutes, settings.chat_history_limit) == (15, -1)


def test_a_promptpipe_switch_left_off_changes_nothing() -> None:
    settings = load_settings({"AUTO_ENROLL_NEW_USERS": "false"}, env_file=None)
    assert settings.unknown_sender_policy == "ignore"


def test_promptpipes_settings_tandem_lacks_are_refused_saying_what_to_use_instead() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(
            {"PROMPTPIPE_DEBUG": "true", "DATABASE_DSN": "postgres://x", "LOG_LEVEL": "LOUD"},
            env_file=None,
        )
    problems = caught.value.problems
    assert len(problems) == 3
    assert any(
        p.startswith("PROMPTPIPE_DEBUG is PromptPipe's") and "use DEBUG_PHONES" in p
        for p in problems
    )
    assert any(p.startswith("DATABASE_DSN") and "use DATABASE_URL" in p for p in problems)


def test_a_promptpipe_name_that_disagrees_with_tandems_own_is_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({"GENAI_MODEL": "gpt-4o", "TANDEM_MODEL": "gpt-4.1"}, env_file=None)
    assert caught.value.problems == [
        "GENAI_MODEL=gpt-4o and TANDEM_MODEL=gpt-4.1 disagree: set only TANDEM_MODEL"
    ]


@pytest.mark.parametrize(
    "url",
    ["mysql://tandem:s3cret@db.example.org/tandem", "tandem.db", "mongodb+srv://u:s3cret@x/y"],
)
def test_a_database_url_tandem_cannot_run_on_is_refused_without_repeating_it(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({"DATABASE_URL": url}, env_file=None)
    (problem,) = caught.value.problems
    assert "DATABASE_URL" in problem and "sqlite:///" in problem
    assert "s3cret" not in str(caught.value)


@pytest.mark.parametrize(
    "url",
    ["sqlite://", "sqlite:///tandem.db", "postgres://u@h/d", "postgresql+psycopg://u@h/d"],
)
def test_sqlite_and_postgresql_urls_are_accepted(url: str) -> None:
    assert load_settings({"DATABASE_URL": url}, env_file=None).database_url == url


@pytest.mark.parametrize("days", ["0", "-3", "thirty", "3651"])
def test_an_unknown_sender_retention_out_of_range_stops_the_start(days: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings({"UNKNOWN_SENDER_RETENTION_DAYS": days}, env_file=None)
    assert any("UNKNOWN_SENDER_RETENTION_DAYS" in p for p in refused.value.problems)


def test_unknown_senders_are_kept_30_days_unless_told() -> None:
    assert load_settings({}, env_file=None).unknown_sender_retention_days == 30
    chosen = load_settings({"UNKNOWN_SENDER_RETENTION_DAYS": "7"}, env_file=None)
    assert chosen.unknown_sender_retention_days == 7


@pytest.mark.parametrize("minutes", ["0", "-5", "1441", "soon"])
def test_review_escalation_can_be_neither_off_nor_longer_than_a_day(minutes: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({"REVIEW_ESCALATE_MINUTES": minutes}, env_file=None)
    (problem,) = caught.value.problems
    assert problem.startswith("REVIEW_ESCALATE_MINUTES")


def test_review_items_escalate_after_an_hour_unless_told_otherwise() -> None:
    assert load_settings({}, env_file=None).review_escalate_minutes == 60
    assert (
        load_settings({"REVIEW_ESCALATE_MINUTES": "20"}, env_file=None).review_escalate_minutes
        == 20
    )
