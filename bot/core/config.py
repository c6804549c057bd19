"""Configuration from environment variables (and an optional `.env`), validated once at start."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import phonenumbers
from dotenv import dotenv_values
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails

from bot.core import promptpipe_env
from bot.core.addresses import InvalidPhoneNumber, canonical_phone
from bot.core.localtime import parse_quiet_hours, validate_timezone
from bot.core.model_choice import DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE

TWILIO_API = "https://api.twilio.com"
# DATABASE_URL's schemes (a driver after + is SQLAlchemy's: bot.store.database picks psycopg's).
DATABASE_SCHEMES = ("sqlite", "postgres", "postgresql")
DEFAULT_HELP_TEXT = (
    "Automated line of a research study. Reply STOP to stop messages or START to resume. "
    "For help, contact the study team who enrolled you."
)
DEFAULT_UNKNOWN_SENDER_REPLY = (
    "This number belongs to a research study and does not recognise yours, so it cannot reply. "
    "Reply STOP to get no further messages."
)

DEFAULT_UNREGISTER_NOTICE = (
    "You have been unregistered from this study by the organizer. If you have any questions, "
    "please contact the organizer. Thank you for your participation."
)


DEFAULT_HELPLINE_TEXT = (
    "If you are in danger or thinking about ending your life, call your local emergency number "
    "now, or call or text 988 (Suicide and Crisis Lifeline, US and Canada). Elsewhere, "
    "findahelpline.com lists free, confidential helplines."
)
# {helpline} is replaced by HELPLINE_TEXT; {alerted} says the study team was told, and only when
# someone is there to be told (a supervisor phone), else it is left out.
DEFAULT_SAFETY_MESSAGE = (
    "I'm an automated study assistant and I can't give the support you deserve right now. "
    "{helpline} {alerted}"
)


class ConfigError(Exception):
    """One or more settings are missing or malformed; the message lists every problem.

    From `load_settings`, it also carries the settings as given (`values`, by environment
    name) and, when they validate without the malformed ones, those settings (`partial`, the
    malformed ones at their defaults), so that a process's other start-up checks can run in
    the same round (bot.runtime.startup)."""

    def __init__(
        self,
        problems: list[str],
        values: Mapping[str, str] | None = None,
        partial: Settings | None = None,
    ) -> None:
        super().__init__(
            "Tandem cannot start; fix these settings (see .env.example):\n"
            + "\n".join(f"  - {p}" for p in problems)
        )
        self.problems = problems
        self.values = dict(values or {})
        self.partial = partial


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


# A bearer token shorter than this is refused at start: it could be guessed.
MIN_TOKEN_LENGTH = 32
# A Twilio webhook body larger than this is refused (413) before it is parsed; an SMS is at
# most 1,600 characters and a WhatsApp message 4,096, so real bodies are a few kilobytes.
WEBHOOK_MAX_BODY_BYTES = 64 * 1024


class Settings(BaseModel):
    """Every setting Tandem reads, by its environment variable name."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    database_url: str = Field("sqlite:///tandem.db", alias="DATABASE_URL")
    api_tokens: list[str] = Field(default_factory=list, alias="TANDEM_API_TOKENS", repr=False)
    insecure_local: bool = Field(False, alias="TANDEM_INSECURE_LOCAL")
    # Reverse proxies in front of the web app that each append to X-Forwarded-For: the client's
    # address is the header's Nth from the right (werkzeug's ProxyFix); 0 = the header is not
    # believed. Sign-in throttling (docs/security.md) counts per client address.
    # Admins without a TOTP second factor must enrol one before any other console page.
    console_require_2fa: bool = Field(False, alias="CONSOLE_REQUIRE_2FA")
    trusted_proxy_count: int = Field(0, ge=0, le=10, alias="TRUSTED_PROXY_COUNT")
    # The researcher console signs its session cookies with a key derived from this one.
    master_key: str | None = Field(None, min_length=32, alias="TANDEM_MASTER_KEY", repr=False)
    public_base_url: str | None = Field(None, alias="PUBLIC_BASE_URL")
    messenger: Literal["console", "twilio"] = Field("console", alias="MESSENGER")
    twilio_account_sid: str | None = Field(None, alias="TWILIO_ACCOUNT_SID")
    twilio_auth_token: str | None = Field(None, alias="TWILIO_AUTH_TOKEN", repr=False)
    twilio_from_number: str | None = Field(None, alias="TWILIO_FROM_NUMBER")
    twilio_messaging_service_sid: str | None = Field(None, alias="TWILIO_MESSAGING_SERVICE_SID")
    twilio_api_base_url: str = Field(TWILIO_API, alias="TWILIO_API_BASE_URL")
    webhook_max_body_bytes: int = Field(
        WEBHOOK_MAX_BODY_BYTES, ge=4096, le=10 * 1024 * 1024, alias="WEBHOOK_MAX_BODY_BYTES"
    )
    twilio_timeout_seconds: float = Field(15.0, gt=0, le=120, alias="TWILIO_TIMEOUT_SECONDS")
    send_retry_base_seconds: float = Field(30.0, gt=0, alias="SEND_RETRY_BASE_SECONDS")
    send_retry_max_seconds: float = Field(1800.0, gt=0, alias="SEND_RETRY_MAX_SECONDS")
    send_max_attempts: int = Field(8, ge=1, alias="SEND_MAX_ATTEMPTS")
    send_unknown_policy: Literal["give_up", "retry"] = Field("give_up", alias="SEND_UNKNOWN_POLICY")
    send_unknown_reconcile_seconds: float = Field(
        900.0, gt=0, alias="SEND_UNKNOWN_RECONCILE_SECONDS"
    )
    whatsapp_outside_window: Literal["template", "defer"] = Field(
        "defer", alias="WHATSAPP_OUTSIDE_WINDOW"
    )
    whatsapp_template_sid: str | None = Field(
        None, pattern=r"^HX[0-9a-fA-F]{32}$", alias="WHATSAPP_TEMPLATE_SID"
    )
    # Broadcasts (docs/broadcasts.md): messages queued per second, 1 by default (Twilio's rate
    # for one long code); a messaging service or short code allows more.
    broadcast_rate_per_second: float = Field(1.0, gt=0, le=1000, alias="BROADCAST_RATE_PER_SECOND")
    openai_api_key: str | None = Field(None, alias="OPENAI_API_KEY", repr=False)
    openai_base_url: str | None = Field(None, alias="OPENAI_BASE_URL")
    model: str = Field("gpt-4o-mini", alias="TANDEM_MODEL")
    # Sampling for every LLM call unless a prompt file or intervention sets its own (docs/llm.md).
    temperature: float = Field(DEFAULT_TEMPERATURE, ge=0, le=2, alias="TANDEM_TEMPERATURE")
    max_tokens: int = Field(DEFAULT_MAX_TOKENS, ge=1, le=200_000, alias="TANDEM_MAX_TOKENS")
    # LLM calls (docs/llm.md): seconds to wait for an answer, and SDK retries on 408/409/429/5xx.
    llm_timeout_seconds: float = Field(45.0, gt=0, le=600, alias="LLM_TIMEOUT_SECONDS")
    llm_max_retries: int = Field(2, ge=0, le=10, alias="LLM_MAX_RETRIES")
    default_region: str | None = Field(None, alias="DEFAULT_REGION")
    default_timezone: str = Field("UTC", alias="DEFAULT_TIMEZONE")
    supervisor_phones: list[str] = Field(default_factory=list, alias="SUPERVISOR_PHONES")
    # An alert nobody acknowledged within ALERT_ESCALATE_MINUTES (0 = never) is sent again to
    # the supervisors and to ESCALATION_PHONES.
    escalation_phones: list[str] = Field(default_factory=list, alias="ESCALATION_PHONES")
    alert_escalate_minutes: float = Field(15.0, ge=0, le=10080, alias="ALERT_ESCALATE_MINUTES")
    # SUPERVISOR_PHONES=none: the operator chose to run with nobody to alert (never from env).
    supervisors_declined: bool = False
    debug_phones: list[str] = Field(default_factory=list, alias="DEBUG_PHONES")
    store_prompts: bool = Field(True, alias="STORE_PROMPTS")
    # Where embedding vectors are cached, one file per model and text (bot.conversation.embeddings).
    embeddings_cache_dir: str = Field(".tandem/embeddings", alias="EMBEDDINGS_CACHE_DIR")
    intervention: str = Field("demo", alias="INTERVENTION")
    # The study (studies/<slug>/) an enrollment joins when it names no study and no
    # intervention (docs/studies.md); empty: none.
    study: str | None = Field(None, alias="STUDY")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", alias="LOG_LEVEL")
    # Twilio webhooks: what a message from an unknown number does, and the reply to HELP.
    unknown_sender_policy: Literal["ignore", "reply", "enroll"] = Field(
        "ignore", alias="UNKNOWN_SENDER_POLICY"
    )
    unknown_sender_reply: str = Field(DEFAULT_UNKNOWN_SENDER_REPLY, alias="UNKNOWN_SENDER_REPLY")
    # How long an unknown sender's messages stay readable: their data key, made at their first
    # message, is destroyed once older than this (docs/operations.md, Unknown senders).
    unknown_sender_retention_days: int = Field(
        30, ge=1, le=3650, alias="UNKNOWN_SENDER_RETENTION_DAYS"
    )
    help_text: str = Field(DEFAULT_HELP_TEXT, alias="HELP_TEXT")
    # Researcher API: the text sent when a participant is unenrolled (empty = send none).
    unregister_notice: str = Field(DEFAULT_UNREGISTER_NOTICE, alias="UNREGISTER_NOTICE")
    # Durable timers (docs/timers.md): participant-local quiet hours ("22:00-08:00", empty =
    # none), the sweep for timers other processes wrote, grace per kind, the leader's lease.
    quiet_hours: str = Field("", alias="QUIET_HOURS")
    # A simulated clock (bench/soak.py): the file whose ISO instant every process reads as the
    # time. Refused without TANDEM_SIMULATION=true; never set in production (docs/performance.md).
    clock_file: Path | None = Field(None, alias="TANDEM_CLOCK")
    simulation: bool = Field(False, alias="TANDEM_SIMULATION")
    timer_sweep_seconds: float = Field(30.0, gt=0, alias="TIMER_SWEEP_SECONDS")
    timer_grace: dict[str, float | None] = Field(default_factory=dict, alias="TIMER_GRACE")
    scheduler_lease_seconds: float = Field(30.0, ge=1, alias="SCHEDULER_LEASE_SECONDS")
    # The daily habit cycle (docs/daily_cycle.md): the no-reply reminder after a habit prompt
    # and the move to feedback after it; 0 = off.
    reminder_after_prompt_hours: float = Field(
        5.0, ge=0, le=48, alias="REMINDER_AFTER_PROMPT_HOURS"
    )
    # The daily prompt goes out this many minutes before the habit time (PromptPipe's name).
    prep_minutes: int = Field(10, ge=0, le=720, alias="SCHEDULER_PREP_TIME_MINUTES")
    auto_feedback_after_prompt_minutes: float = Field(
        5.0, ge=0, le=1440, alias="AUTO_FEEDBACK_AFTER_PROMPT_MINUTES"
    )

    # Conversation (docs/conversation.md): earlier messages the LLM sees (0 = none), the reply
    # to crisis language, whether the LLM turn still runs after it, and how often supervisors
    # may be texted about one participant.
    chat_history_limit: int = Field(50, ge=-1, le=10000, alias="CHAT_HISTORY_LIMIT")  # -1: all
    safety_message: str = Field(DEFAULT_SAFETY_MESSAGE, min_length=1, alias="SAFETY_MESSAGE")
    helpline_text: str = Field(DEFAULT_HELPLINE_TEXT, alias="HELPLINE_TEXT")
    safety_continue_turn: bool = Field(False, alias="SAFETY_CONTINUE_TURN")
    supervisor_alert_window_minutes: float = Field(
        30.0, ge=0, le=10080, alias="SUPERVISOR_ALERT_WINDOW_MINUTES"
    )
    # The second line of crisis detection (docs/conversation.md): an LLM classification of
    # every inbound message beside the phrase screen; `auto` = on whenever an LLM is configured.
    safety_classifier: Literal["auto", "off"] = Field("auto", alias="SAFETY_CLASSIFIER")
    safety_classifier_timeout_seconds: float = Field(
        10.0, gt=0, le=120, alias="SAFETY_CLASSIFIER_TIMEOUT_SECONDS"
    )
    # The learned line (docs/safety.md): an offline model scoring every inbound message in the
    # worker; at or above the alert threshold a crisis alert, from the review threshold up a
    # review verdict. Unset thresholds come from the model card (bot/conversation/safety_model).
    # On by default (off: the phrase screen and the LLM classifier alone): the phrase screen
    # alone catches about 1 crisis in 10 written in everyday texting style (docs/safety.md has
    # the figures). The worker loads the model at start; the web never loads it.
    safety_learned: bool = Field(True, alias="SAFETY_LEARNED")
    safety_alert_threshold: float | None = Field(None, ge=0, le=1, alias="SAFETY_ALERT_THRESHOLD")
    safety_review_threshold: float | None = Field(None, ge=0, le=1, alias="SAFETY_REVIEW_THRESHOLD")
    # With the learned line on, a phrase-screen hit it scores under this is a review item, not
    # an alert (0 = every phrase hit alerts, the phrase screen deciding alone).
    safety_confirm_threshold: float | None = Field(
        None, ge=0, le=1, alias="SAFETY_CONFIRM_THRESHOLD"
    )
    # A review item (a score in the review band) nobody cleared within this many minutes
    # becomes a crisis alert (docs/safety.md). Never off: at most a day, at least a minute.
    review_escalate_minutes: float = Field(60.0, ge=1, le=1440, alias="REVIEW_ESCALATE_MINUTES")
    # A turn whose LLM call failed is tried again after these minutes, one retry each
    # ("2,10,30"; empty or "off" = never); after the last one an operator alert is raised.
    turn_retry_minutes: list[float] = Field(
        default_factory=lambda: [2.0, 10.0, 30.0], alias="TURN_RETRY_MINUTES"
    )

    # Readiness (docs/operations.md): a degraded state (GET /ready) that lasts this many minutes
    # raises an operator alert, texted to OPERATOR_PHONES; the LLM (or sending) counts as
    # failing when at least READY_FAILURES of its last READY_WINDOW calls (sends) failed, and
    # turns when READY_FAILURES failed within the last hour.
    operator_phones: list[str] = Field(default_factory=list, alias="OPERATOR_PHONES")
    operator_alert_minutes: float = Field(10.0, gt=0, le=10080, alias="OPERATOR_ALERT_MINUTES")
    ready_window: int = Field(10, ge=1, le=1000, alias="READY_WINDOW")
    ready_failures: int = Field(3, ge=1, le=1000, alias="READY_FAILURES")
    # GET /metrics answers only with this bearer token (or one of TANDEM_API_TOKENS).
    metrics_token: str | None = Field(None, alias="METRICS_TOKEN", repr=False)

    _split_lists = field_validator(
        "api_tokens",
        "supervisor_phones",
        "debug_phones",
        "escalation_phones",
        "operator_phones",
        mode="before",
    )(_split)
    _flags = field_validator(
        "insecure_local",
        "store_prompts",
        "safety_continue_turn",
        "safety_learned",
        "console_require_2fa",
        "simulation",
        mode="before",
    )(_flag)

    @model_validator(mode="before")
    @classmethod
    def _declined(cls, data: Any) -> Any:
        raw = data.get("SUPERVISOR_PHONES") if isinstance(data, dict) else None
        if isinstance(raw, str) and raw.strip().lower() == "none":
            return {**data, "SUPERVISOR_PHONES": [], "supervisors_declined": True}
        return data

    @field_validator("safety_classifier", mode="before")
    @classmethod
    def _classifier(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("turn_retry_minutes", mode="before")
    @classmethod
    def _retries(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        if value.strip().lower() in ("", "off", "none"):
            return []
        return [part.strip() for part in value.split(",")]

    @field_validator("turn_retry_minutes")
    @classmethod
    def _retry_delays(cls, value: list[float]) -> list[float]:
        if any(not 0 < minutes <= 10080 for minutes in value) or len(value) > 10:
            raise ValueError("at most 10 delays, each more than 0 and at most 10080 minutes")
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("unknown_sender_policy", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("whatsapp_template_sid", "study", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("quiet_hours")
    @classmethod
    def _quiet_hours(cls, value: str) -> str:
        parse_quiet_hours(value)
        return value.strip()

    @field_validator("timer_grace", mode="before")
    @classmethod
    def _grace(cls, value: object) -> object:
        return parse_grace(value) if isinstance(value, str) else value

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

    @field_validator("database_url")
    @classmethod
    def _database(cls, value: str) -> str:
        # The scheme alone: the rest may hold a password, which an error must not repeat.
        scheme = value.split("://", 1)[0].split("+", 1)[0] if "://" in value else None
        if scheme not in DATABASE_SCHEMES:
            shown = f"{scheme}://" if scheme else "no scheme"
            raise ValueError(
                f"names no database Tandem runs on ({shown}): use sqlite:///path/to/file.db "
                "or postgresql://user@host/database"
            )
        return value

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
        problems = coherence_problems(self.model_dump(by_alias=True))
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def llm_configured(self) -> bool:
        """Whether an LLM server is named (a key for OpenAI's, or a base URL of another)."""
        return bool(self.openai_api_key or self.openai_base_url)

    def supervisors(self) -> list[str]:
        return [canonical_phone(p, self.default_region) for p in self.supervisor_phones]

    def operators(self) -> list[str]:
        return [canonical_phone(p, self.default_region) for p in self.operator_phones]

    def escalation(self) -> list[str]:
        return [canonical_phone(p, self.default_region) for p in self.escalation_phones]

    def debuggers(self) -> list[str]:
        return [canonical_phone(p, self.default_region) for p in self.debug_phones]


ENV_NAMES = {field.alias for field in Settings.model_fields.values() if field.alias}


def coherence_problems(values: Mapping[str, object]) -> list[str]:
    """Problems between settings, by environment name; `values` may be raw text (a field of
    its own that is wrong is reported by its field, so every problem shows at once)."""
    problems = []
    region = values.get("DEFAULT_REGION") or None
    region_ok = region is None or str(region).upper() in phonenumbers.SUPPORTED_REGIONS
    for name in ("SUPERVISOR_PHONES", "DEBUG_PHONES", "ESCALATION_PHONES", "OPERATOR_PHONES"):
        phones = _split(values.get(name) or [])
        for raw in phones if isinstance(phones, list) and region_ok else []:
            try:
                canonical_phone(str(raw), str(region) if region else None)
            except InvalidPhoneNumber as exc:
                problems.append(f"{name}: {exc}")

    def given(name: str) -> str:
        return str(values.get(name) or "").strip()

    if given("TANDEM_CLOCK") and _flag(values.get("TANDEM_SIMULATION")) is not True:
        problems.append(
            "TANDEM_CLOCK names a simulated clock: refused without TANDEM_SIMULATION=true "
            "(benchmarks only, never production)"
        )
    if given("MESSENGER").lower() == "twilio":
        if not (given("TWILIO_ACCOUNT_SID") and given("TWILIO_AUTH_TOKEN")):
            problems.append("MESSENGER=twilio needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN")
        if not (given("TWILIO_FROM_NUMBER") or given("TWILIO_MESSAGING_SERVICE_SID")):
            problems.append(
                "MESSENGER=twilio needs TWILIO_FROM_NUMBER or TWILIO_MESSAGING_SERVICE_SID"
            )
        # Real messages to real people: no development shortcuts, no webhook URL in clear.
        if _flag(values.get("TANDEM_INSECURE_LOCAL")) is True:
            problems.append(
                "MESSENGER=twilio refuses TANDEM_INSECURE_LOCAL=true: it turns off the checks "
                "that protect a real deployment (API tokens, Secure cookies); remove it"
            )
        if given("PUBLIC_BASE_URL").lower().startswith("http://"):
            problems.append(
                "MESSENGER=twilio needs an https:// PUBLIC_BASE_URL: Twilio would send "
                "participants' messages and its signatures to an http:// address in clear"
            )
    tokens = _split(values.get("TANDEM_API_TOKENS") or [])
    short = [
        n
        for n, token in enumerate(tokens if isinstance(tokens, list) else [], 1)
        if len(str(token)) < MIN_TOKEN_LENGTH
    ]
    if short:
        problems.append(
            f"TANDEM_API_TOKENS: token(s) {', '.join(map(str, short))} are shorter than "
            f"{MIN_TOKEN_LENGTH} characters: use long random tokens "
            "(Python's secrets.token_urlsafe(32) makes one)"
        )
    reply = values.get("UNKNOWN_SENDER_REPLY", DEFAULT_UNKNOWN_SENDER_REPLY)
    if given("UNKNOWN_SENDER_POLICY").lower() == "reply" and not str(reply or "").strip():
        problems.append("UNKNOWN_SENDER_POLICY=reply needs an UNKNOWN_SENDER_REPLY text")
    if given("WHATSAPP_OUTSIDE_WINDOW").lower() == "template" and not given(
        "WHATSAPP_TEMPLATE_SID"
    ):
        problems.append("WHATSAPP_OUTSIDE_WINDOW=template needs WHATSAPP_TEMPLATE_SID (HX...)")
    return problems


def load_settings(
    environ: Mapping[str, str] | None = None, env_file: str | Path | None = ".env"
) -> Settings:
    """Read settings from the environment over an optional .env file; list every problem."""
    values: dict[str, str] = {}
    if env_file is not None and Path(env_file).is_file():
        values.update({k: v for k, v in dotenv_values(env_file).items() if v is not None})
    values.update(os.environ if environ is None else environ)
    values, problems = promptpipe_env.translate(values)
    chosen = {k: v for k, v in values.items() if k in ENV_NAMES}
    try:
        settings = Settings.model_validate(chosen)
    except ValidationError as exc:
        found = [line for err in exc.errors() for line in _describe(err)]
        # A field's own error keeps the checks between fields from running: run them here.
        found += [p for p in coherence_problems(chosen) if p not in found]
        malformed = {_alias(err) for err in exc.errors()}
        raise ConfigError(problems + found, chosen, _without(chosen, malformed)) from None
    if problems:
        raise ConfigError(problems, chosen)
    return settings


def _without(values: Mapping[str, str], names: set[str]) -> Settings | None:
    """The settings with `names` left at their defaults, if the rest validate."""
    try:
        return Settings.model_validate({k: v for k, v in values.items() if k not in names})
    except ValidationError:
        return None


def _alias(err: ErrorDetails) -> str:
    loc = err.get("loc") or ()
    field = Settings.model_fields.get(str(loc[0])) if loc else None
    return field.alias if field and field.alias else str(loc[0] if loc else "")


def _describe(err: ErrorDetails) -> list[str]:
    loc = err.get("loc") or ()
    message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    if not loc:
        return message.split("; ")
    field = Settings.model_fields.get(str(loc[0]))
    name = field.alias if field and field.alias else str(loc[0])
    return [f"{name}: {message}"]


# TIMER_GRACE: how late each timer kind may still fire (see bot.timers.kinds).
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_ITEM = re.compile(r"([a-z][a-z0-9_]*)=(none|[0-9]+(?:\.[0-9]+)?)([smhd]?)")


def parse_grace(text: str) -> dict[str, float | None]:
    """Parse "daily=2h,reminder=30m,transition=none" into seconds per kind (None = no limit)."""
    found: dict[str, float | None] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        match = _ITEM.fullmatch(item.lower())
        if match is None:
            raise ValueError(
                f"invalid grace {item!r}: expected kind=<number>[s|m|h|d] or kind=none,"
                " e.g. daily=2h"
            )
        kind, amount, unit = match.groups()
        if amount == "none":
            if unit:
                raise ValueError(f"invalid grace {item!r}: 'none' takes no unit")
            found[kind] = None
        else:
            found[kind] = float(amount) * _UNITS[unit]
    return found
