"""Questions (measurements): the text sent, reading the answer without the LLM where
possible, and the model the LLM fills when it is not ("I'd say about a 7 today")."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from bot.conversation.daily_cycle.answers import candidates, normalise
from bot.interventions.language.format import Question

_INTEGER = re.compile(r"(?<![\w.])-?\d+(?![\w.])")
_OUT_OF = re.compile(r"^\s*(-?\d+)\s*(?:/|out of|of)\s*\d+\b")


# A yes/no answer in the words participants use (as `normalise` leaves them); "1" and "2"
# are the numbers of the listed options, yes first.
YES_WORDS = frozenset(
    normalise(w) for w in ("yes", "y", "yeah", "yep", "yup", "si", "sí", "oui", "sim", "ja")
)
NO_WORDS = frozenset(normalise(w) for w in ("no", "n", "nope", "non", "não", "nao", "nein"))


def listed(question: Question) -> list[str]:
    """The options shown with the question: an options question's, or yes and no."""
    if question.answer == "yesno":
        return list(question.options) or ["Yes", "No"]
    return list(question.options) if question.answer == "options" else []


def numbered(question: Question, text: str) -> str:
    """The question as sent: its text, then each option numbered from 1 (options and yes/no
    questions)."""
    shown = listed(question)
    if not shown:
        return text
    return "\n".join([text, *(f"{n}. {option}" for n, option in enumerate(shown, 1))])


def yes_or_no(question: Question, reply: str) -> bool | None:
    """True for yes (a yes word, 1, or the first option's words), False for no, else None."""
    yes, no = (normalise(option) for option in listed(question))
    for form in candidates(reply):
        if form in YES_WORDS or form in ("1", yes):
            return True
        if form in NO_WORDS or form in ("2", no):
            return False
    return None


def parse(question: Question, reply: str) -> Any | None:
    """The answer read without the LLM, or None: an option by its number or its words, a whole
    number on the scale, or the text itself."""
    if question.answer == "text":
        return reply.strip() or None
    if question.answer == "yesno":
        return yes_or_no(question, reply)
    if question.answer == "options":
        wanted = {normalise(option): option for option in question.options}
        for form in candidates(reply):
            if form.isdigit() and 1 <= int(form) <= len(question.options):
                return question.options[int(form) - 1]
            if form in wanted:
                return wanted[form]
        return None
    out_of = _OUT_OF.match(reply)
    numbers = [out_of[1]] if out_of else _INTEGER.findall(reply)
    if len(numbers) == 1 and question.min <= int(numbers[0]) <= question.max:
        return int(numbers[0])
    return None


def extraction_model(slug: str, question: Question) -> type[BaseModel]:
    """{value: the answer, or null if the reply does not answer the question}."""
    if question.answer == "options":
        annotation: Any = Literal[tuple(question.options)]
        keywords: dict[str, Any] = {}
        what = "the option the participant chose"
    elif question.answer == "yesno":
        annotation, keywords = bool, {}
        what = "true if the participant said yes, false if they said no"
    else:
        annotation, keywords = int, {"ge": question.min, "le": question.max}
        what = f"the participant's rating, a whole number from {question.min} to {question.max}"
    described = Field(None, description=f"{what}; null if not answered", **keywords)
    return create_model(
        "Answer",
        __config__=ConfigDict(extra="forbid"),
        __doc__=f"The answer to the question {slug!r}: {what}, or null if they did not answer.",
        value=(annotation | None, described),
    )


EXTRACTION = (
    "The participant was asked: {question}\n\nThey replied: {reply}\n\n"
    "If the reply answers the question, give the answer; if it does not, give null."
)
