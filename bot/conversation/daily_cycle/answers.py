"""Understanding a reply to a numbered question (pure): a number, a word, or a poll answer.

A reply is normalised (lower case, apostrophes dropped, anything but letters and digits made a
space, "please" and "thanks" dropped) and understood if the whole reply, or its first clause
("Done! It was easy" -> "done"), is a number shown with the question or one of the phrases
below. WhatsApp poll votes arrive as "Q: Did you do it? A: Done"; the part after "A:" is the
reply. Anything else is not an answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

DONE, NEXT_TIME = "Done", "Next time"
DECREASE, KEEP, INCREASE = "Decrease", "Keep current", "Increase"
LEVELS = ("low", "normal", "high")

# Phrases per option, after normalisation. Numbers are read against the options as shown.
PHRASES: dict[str, frozenset[str]] = {
    DONE: frozenset(
        "done|did it|i did|i did it|yes|yes i did|yes i did it|y|yep|yeah|yup|completed|"
        "finished|all done|done it|im done".split("|")
    ),
    NEXT_TIME: frozenset(
        "next time|not today|no|nope|n|not yet|not done|didnt|i didnt|did not|i did not|"
        "skipped|maybe tomorrow|tomorrow".split("|")
    ),
    DECREASE: frozenset(
        "decrease|lower|easier|less|smaller|down|make it easier|too hard|too much".split("|")
    ),
    KEEP: frozenset(
        "keep|keep current|keep it|keep the same|same|the same|current|no change|"
        "just right|its fine|fine as is".split("|")
    ),
    INCREASE: frozenset(
        "increase|higher|harder|more|bigger|up|raise|make it harder|too easy".split("|")
    ),
    # Absolute levels (PromptPipe's text fallback asked for "low", "normal" or "high").
    **{level: frozenset({level}) for level in LEVELS},
}
_POLL = re.compile(r"^\s*q\s*:.*?\ba\s*:(?P<answer>.*)$", re.IGNORECASE | re.DOTALL)
_CLAUSE = re.compile(r"[.!?,;:\n]")
_COURTESY = re.compile(r" (?:please|pls|thanks|thank you|thx)(?= )")


def normalise(text: str) -> str:
    """Lower case, apostrophes dropped, runs of anything but letters and digits one space,
    and courtesy words ("please", "thanks") dropped."""
    text = text.lower().replace("'", "").replace("\u2019", "")
    words = re.sub(r"[^0-9a-z]+", " ", text).split()
    return " ".join(_COURTESY.sub(" ", f" {' '.join(words)} ").split())


def candidates(text: str) -> list[str]:
    """The normalised forms a reply is matched on: the whole reply, then its first clause."""
    poll = _POLL.match(text)
    if poll:
        text = poll["answer"]
    whole = normalise(text)
    first = normalise(_CLAUSE.split(text.strip(), maxsplit=1)[0])
    return [form for form in dict.fromkeys((whole, first)) if form]


def choose(text: str, options: Sequence[str], vocabulary: Sequence[str]) -> str | None:
    """The option (from `vocabulary`) the reply means, or None. A number means the option shown
    with that number; a phrase means its option even if it was not shown (a participant at the
    lowest level who asks for "easier" answered, and stays at the lowest level)."""
    for form in candidates(text):
        if form.isdigit():
            number = int(form)
            if 1 <= number <= len(options):
                return options[number - 1]
            continue
        for option in vocabulary:
            if form in PHRASES.get(option, ()):
                return option
    return None


def moved(level: str, answer: str) -> str:
    """The intensity after `answer` from `level`: one step down or up, clamped; or the level
    named; unchanged for "Keep current" (an unknown level counts as "normal")."""
    if answer in LEVELS:
        return answer
    current = LEVELS.index(level) if level in LEVELS else 1
    step = {DECREASE: -1, INCREASE: 1}.get(answer, 0)
    return LEVELS[min(max(current + step, 0), len(LEVELS) - 1)]
