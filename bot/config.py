"""Configuration from environment variables (and an optional `.env`), validated once at start."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import phonenumbers
from dotenv import dotenv_values
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bot.localtime import validate_timezone
from bot.messaging.addresses import InvalidPhoneNumber, canonical_phone

TWILIO_API = "https://api.twilio.com"
DEFAULT_HELP_TEXT = (
    "Automated line of a research study. Reply STOP to stop messages or START to resume. "
    "For help, contact the study team who enrolled you."
)
DEFAULT_UNKNOWN_SENDER_REPLY = (
    "This number belongs to a research study and does not recognise yours, so it cannot reply. "
    "Reply STOP to get no further messages."
)


class ConfigError(Exception):
    """One or more settings are missing or malformed; the message lists every problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(
            "Tandem cannot start; fix these settings (see .env.example):\n"
            + "\n".join(f"  - {p}" for p in problems)
        )
        self.problems = problems


def _split(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _flag(value: object) -> object:
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off", ""}:
            return False
    return value


class Settings(BaseModel):
    """Every setting Tandem reads, by its environment variable name."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    database_url: str = Field("sqlite:///tandem.db", alias="DATABASE_URL")
    api_tokens: list[str] = Field(default_factory=list, alias="TANDEM_API_TOKENS")
    insecure_local: bool = Field(False, alias="TANDEM_INSECURE_LOCAL")
    public_base_url: str | None = Field(None, alias="PUBLIC_BASE_URL")
    messenger: Literal["console", "twilio"] = Field("console", alias="MESSENGER")
    twilio_account_sid: str | None = Field(None, alias="TWILIO_ACCOUNT_SID")
    twilio_auth_token: str | None = Field(None, alias="TWILIO_AUTH_TOKEN", repr=False)
    twilio_from_number: str | None = Field(None, alias="TWILIO_FROM_NUMBER")
    twilio_messaging_service_sid: str | None = Field(None, alias="TWILIO_MESSAGING_SERVICE_SID")
    twilio_api_base_url: str = Field(TWILIO_API, alias="TWILIO_API_BASE_URL")
    openai_api_key: str | None = Field(None, alias="OPENAI_API_KEY", repr=False)
    openai_base_url: str | None = Field(None, alias="OPENAI_BASE_URL")
    model: str = Field("gpt-4o-mini", alias="TANDEM_MODEL")
    default_region: str | None = Field(None, alias="DEFAULT_REGION")
    default_timezone: str = Field("UTC", alias="DEFAULT_TIMEZONE")
    supervisor_phones: list[str] = Field(default_factory=list, alias="SUPERVISOR_PHONES")
    debug_phones: list[str] = Field(default_factory=list, alias="DEBUG_PHONES")
    store_prompts: bool = Field(True, alias="STORE_PROMPTS")
    intervention: str = Field("demo", alias="INTERVENTION")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", alias="LOG_LEVEL")
    # Twilio webhooks: what a message from an unknown number does, and the reply to HELP.
    unknown_sender_policy: Literal["ignore", "reply", "enroll"] = Field(
        "ignore", alias="UNKNOWN_SENDER_POLICY"
    )
    unknown_sender_reply: str = Field(DEFAULT_UNKNOWN_SENDER_REPLY, alias="UNKNOWN_SENDER_REPLY")
    help_text: str = Field(DEFAULT_HELP_TEXT, alias="HELP_TEXT")

    _split_lists = field_validator(
        "api_tokens", "supervisor_phones", "debug_phones", mode="before"
    )(_split)
    _flags = field_validator("insecure_local", "store_prompts", mode="before")(_flag)

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("unknown_sender_policy", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("default_timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        validate_timezone(value)
        return value

    @field_validator("default_region")
    @classmethod
    def _region(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        if value.upper() not in phonenumbers.SUPPORTED_REGIONS:
            raise ValueError(f"unknown region {value!r} (a two-letter code such as US or GB)")
        return value.upper()

    @field_validator("public_base_url", "openai_base_url", "twilio_api_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http(s) URL")
        return value.rstrip("/")

    @model_validator(mode="after")
    def _coherent(self) -> Settings:
        problems = []
        for name in ("supervisor_phones", "debug_phones"):
            for raw in getattr(self, name):
                try:
                    canonical_phone(raw, self.default_region)
                except InvalidPhoneNumber as exc:
                    problems.append(f"{name.upper()}: {exc}")
        if self.messenger == "twilio":
            if not (self.twilio_account_sid and self.twilio_auth_token):
                problems.append("MESSENGER=twilio needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN")
            if not (self.twilio_from_number or self.twilio_messaging_service_sid):
                problems.append(
                    "MESSENGER=twilio needs TWILIO_FROM_NUMBER or TWILIO_MESSAGING_SERVICE_SID"
                )
        if self.unknown_sender_policy == "reply" and not self.unknown_sender_reply.strip():
            problems.append("UNKNOWN_SENDER_POLICY=reply needs an UNKNOWN_SENDER_REPLY text")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def supervisors(self) -> list[str]:
        return [canonical_phone(p, self.default_region) for p in self.supervisor_phones]

    def debuggers(self) -> list[str]:
        return [canonical_phone(p, self.default_region) for p in self.debug_phones]


ENV_NAMES = {field.alias for field in Settings.model_fields.values() if field.alias}


def load_settings(
    environ: Mapping[str, str] | None = None, env_file: str | Path | None = ".env"
) -> Settings:
    """Read settings from the environment over an optional .env file; list every problem."""
    values: dict[str, str] = {}
    if env_file is not None and Path(env_file).is_file():
        values.update({k: v for k, v in dotenv_values(env_file).items() if v is not None})
    values.update(os.environ if environ is None else environ)
    chosen = {k: v for k, v in values.items() if k in ENV_NAMES}
    try:
        return Settings.model_validate(chosen)
    except ValidationError as exc:
        raise ConfigError([line for err in exc.errors() for line in _describe(err)]) from None


def _describe(err: dict) -> list[str]:
    loc = err.get("loc") or ()
    message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    if not loc:
        return message.split("; ")
    field = Settings.model_fields.get(str(loc[0]))
    name = field.alias if field and field.alias else str(loc[0])
    return [f"{name}: {message}"]
