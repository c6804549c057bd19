"""The console's enrollment fields: a form or CSV row as the service's request, and the
service's refusals in the words the console's pages have always used.

The rules themselves are `bot.services.enrollment.check`, shared with the API and the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.services.enrollment import Enrollment

FIELDS = ("phone", "name", "channel", "timezone", "intervention", "study")
# The service words a refusal for every entry point; the console's form and dry-run table
# lead two of them with their own words (the rest of the message is the service's).
CONSOLE_LEADS = {
    "invalid phone number: ": "not a phone number: ",
    "no intervention '": "no intervention named '",
}


def asked(given: Mapping[str, str], baseline: Mapping[str, str] | None = None) -> Enrollment:
    """The enrollment a form or CSV row asks for (blank fields: not given); `baseline` holds
    the study's baseline values as text (a CSV row: every column that is not a field)."""
    if baseline is None:
        baseline = {k: v for k, v in given.items() if k not in FIELDS}
    return Enrollment(
        phone=given.get("phone") or "",
        name=given.get("name") or None,
        channel=given.get("channel") or None,
        timezone=given.get("timezone") or None,
        intervention=given.get("intervention") or None,
        study=given.get("study") or None,
        baseline=dict(baseline),
        baseline_text=True,
    )


def in_console_words(problems: Mapping[str, str]) -> dict[str, str]:
    """Each field's problem as the console's form shows it."""
    shown = {}
    for field, message in problems.items():
        for lead, console_lead in CONSOLE_LEADS.items():
            if message.startswith(lead):
                rest = message[len(lead) :]
                # The reason may already say it ("not a phone number"): say it once.
                said = rest.startswith(console_lead.rstrip(": "))
                message = rest if said else console_lead + rest
        shown[field] = message
    return shown
