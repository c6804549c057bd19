"""PromptPipe's environment variables: honoured where Tandem has the same thing, else refused
with what to use instead (never silently ignored). docs/promptpipe.md lists each."""

from __future__ import annotations

from collections.abc import Mapping

# PromptPipe's name -> Tandem's, the same setting under another name.
RENAMED = {
    "GENAI_MODEL": "TANDEM_MODEL",
    "GENAI_TEMPERATURE": "TANDEM_TEMPERATURE",
}
# PromptPipe's on/off switches -> the Tandem setting and value that "on" means.
SWITCHES = {
    "AUTO_ENROLL_NEW_USERS": ("UNKNOWN_SENDER_POLICY", "enroll"),
    "USE_TWILIO": ("MESSENGER", "twilio"),
}
# Settings Tandem has no equivalent of, and what to use instead.
REFUSED = {
    "PROMPTPIPE_STATE_DIR": "DATABASE_URL (Tandem keeps all its state in its database)",
    "DATABASE_DSN": "DATABASE_URL (postgresql://user:pass@host/db or sqlite:///tandem.db)",
    "WHATSAPP_DB_DSN": "MESSENGER=twilio and TWILIO_* (WhatsApp goes through Twilio)",
    "API_ADDR": "`tandem serve --host HOST --port PORT` (or gunicorn --bind)",
    "DEFAULT_SCHEDULE": "the scheduler tool or an intervention's timed questions",
    "INTAKE_BOT_PROMPT_FILE": "prompts/intake.md (edit it in place)",
    "FEEDBACK_TRACKER_PROMPT_FILE": "prompts/feedback.md (edit it in place)",
    "PROMPT_GENERATOR_PROMPT_FILE": "tools/generate_habit_prompt.py's prompt (edit it in place)",
    "FEEDBACK_INITIAL_TIMEOUT": "REMINDER_AFTER_PROMPT_HOURS (PromptPipe never armed this timer)",
    "FEEDBACK_FOLLOWUP_DELAY": "REMINDER_AFTER_PROMPT_HOURS (PromptPipe never armed this timer)",
    "AUTO_FEEDBACK_AFTER_PROMPT_ENABLED": "AUTO_FEEDBACK_AFTER_PROMPT_MINUTES (0 = off, default 5)",
    "PROMPTPIPE_DEBUG": "DEBUG_PHONES (debug traces to those phones only) or PUT "
    '{"debug": true} per participant; PromptPipe\'s switch sent them to everyone',
}
_ON = {"1", "true", "yes", "on"}
_OFF = {"0", "false", "no", "off", ""}


def translate(environ: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """Tandem's settings from `environ` with PromptPipe's names honoured, and the problems:
    a refused name, a switch that is not on/off, or a PromptPipe name whose Tandem setting is
    also given with another value."""
    values = dict(environ)
    problems: list[str] = []
    for old, new in RENAMED.items():
        if old in environ:
            _take(values, problems, old, new, environ[old])
    for old, (new, on) in SWITCHES.items():
        if old not in environ:
            continue
        flag = environ[old].strip().lower()
        if flag in _ON:
            _take(values, problems, old, new, on)
        elif flag not in _OFF:
            problems.append(f"{old}: {environ[old]!r} is not true or false (use {new}={on})")
    for old, instead in REFUSED.items():
        if old in environ:
            problems.append(f"{old} is PromptPipe's and Tandem has no such setting: use {instead}")
    return values, problems


def _take(values: dict[str, str], problems: list[str], old: str, new: str, value: str) -> None:
    given = values.get(new)
    if given is not None and given != value:
        problems.append(f"{old}={value} and {new}={given} disagree: set only {new}")
    else:
        values[new] = value
