"""What a staff password must be: long enough, and not a common or breached one.

Length alone let `aaaaaaaaaaaa` through. zxcvbn (the maintained Python port of Dropbox's
estimator) works offline: it matches a password against its bundled lists of the most common
passwords of public breaches, English words, names and keyboard patterns, repeats and sequences,
and estimates how many guesses it would take. A password it scores below STRONG_ENOUGH is refused
with zxcvbn's own hint; the account's email counts as a known word.
"""

from __future__ import annotations

from zxcvbn import zxcvbn

MIN_PASSWORD = 12  # as in bot.console.accounts, which checks it too
# zxcvbn's scores: 0 too guessable ... 3 safely unguessable (~10^10 guesses) ... 4 very.
STRONG_ENOUGH = 3


def weakness(password: str, email: str) -> str | None:
    """Why `password` is refused for `email`, in the staff member's words, or None."""
    if len(password) < MIN_PASSWORD:
        return f"use at least {MIN_PASSWORD} characters"
    found = zxcvbn(password[:100], user_inputs=[email, *email.replace("@", ".").split(".")])
    if found["score"] >= STRONG_ENOUGH:
        return None
    hint = found["feedback"].get("warning") or "it is too easy to guess"
    return f"choose another password: {hint.rstrip('.').lower()}"
