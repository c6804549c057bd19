"""What each staff role may do in the console; pages and links ask `allowed(role, need)`."""

from __future__ import annotations

# admin: everything, users, erasing, unblinding one participant of a blinded study;
# researcher: participants, exports, takeover, withdrawing, broadcasts;
# statistician: the study page (allocation balance) and exports, with a blinded study's arm
# codes (never names); no participant page, no change to anyone, no unblinding;
# supervisor: alerts and the transcripts of participants with an alert for supervisors (a
# crisis, a review item or one texted to them; not an operational alert alone), checked per
# participant by the page, and those participants' messages in the inbox (admins and
# researchers see every inbox entry);
# reviewer: the fidelity review pages only (`rate`): blind transcripts whose bot turns they rate,
# with no phone, name, participant id, arm or intervention name, and no change to anyone.
# Admins and researchers may rate too.
PERMISSIONS: dict[str, frozenset[str]] = {
    "admin": frozenset(
        {
            "participants",
            "enroll",
            "export",
            "takeover",
            "withdraw",
            "erase",
            "alerts",
            "users",
            "unblind",
            "broadcasts",
            "study",
            "inbox",
            "rate",
        }
    ),
    "researcher": frozenset(
        {
            "participants",
            "enroll",
            "export",
            "takeover",
            "withdraw",
            "alerts",
            "broadcasts",
            "study",
            "inbox",
            "rate",
        }
    ),
    "statistician": frozenset({"study", "export"}),
    "supervisor": frozenset({"alerts", "inbox"}),
    "reviewer": frozenset({"rate"}),
}


def allowed(role: str | None, need: str) -> bool:
    return role is not None and need in PERMISSIONS.get(role, frozenset())


def home(role: str) -> str:
    """The endpoint a role lands on after signing in."""
    if allowed(role, "participants"):
        return "console.participants"
    if allowed(role, "study"):
        return "console.study"
    return "console.alerts" if allowed(role, "alerts") else "console.fidelity"
