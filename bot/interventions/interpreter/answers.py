"""A reply to a pending question (the measurement last asked, still in its answer window):
read without the LLM where possible, by extraction otherwise, validated, and recorded.

The window opens when the question is sent, never when it is queued: a reply recorded while
the question was held (WhatsApp's window closed) or undelivered is an ordinary message.

A valid answer is `measurement.recorded` and the question's `thanks` is the reply (the step
does not take a turn; with `moves_on`, the turn then checks the step's transitions). An
invalid one is `measurement.rejected` and the `clarify` text asks again, up to `retries`
times; after that the message goes on to the step as usual. With `llm: false` an answer in
words is never sent to the LLM: it is invalid.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.conversation.working import Working
from bot.interventions.interpreter import context, judging
from bot.interventions.interpreter.completion import Asker
from bot.interventions.interpreter.questions import EXTRACTION, extraction_model, numbered, parse
from bot.interventions.language.intervention import Intervention
from bot.store.event_types.interventions import MeasurementRecorded, MeasurementRejected
from bot.store.event_types.messages import MessageReceived
from bot.store.events import Event, EventData

NOT_AN_ANSWER = "the reply did not answer the question"


@dataclass
class Answered:
    """What the reply to a question decided; `reply` None: the step handles the message."""

    events: list[EventData] = field(default_factory=list)
    reply: str | None = None
    # The question has not been sent yet (held for WhatsApp's window, or not yet delivered):
    # the message is not its answer, and the step does not ask it a second time.
    waiting: bool = False


def answer(
    intervention: Intervention,
    working: Working,
    inbound: Event | None,
    llm: Asker,
    render_text: Callable[[str, str], str],
) -> Answered | None:
    """None if no question of this intervention is waiting for an answer."""
    asking = context.Progress.of(working.row).asking
    if not asking or inbound is None or not isinstance(inbound.data, MessageReceived):
        return None
    slug = str(asking.get("measurement"))
    question = intervention.questions.get(slug)
    if question is None or working.now > datetime.fromisoformat(asking["answer_by"]):
        return None
    outbox_id = str(asking.get("outbox_id"))
    if not working.memory.sent_before(outbox_id, inbound.stream_version):
        # held or undelivered: not seen yet; it is on its way, not asked twice
        return Answered(waiting=True)
    reply = inbound.data.body
    found = Answered()
    value = parse(question, reply)
    method = "text" if question.answer == "text" else "parsed"
    if value is None and question.answer != "text" and question.llm:
        asked = numbered(question, render_text(f"question:{slug}:text", question.text))
        value, method = _extract(intervention, working, slug, asked, reply, llm, found), "llm"
    if value is not None:
        found.events.append(
            MeasurementRecorded(
                measurement=slug, value=value, method=method, outbox_id=asking.get("outbox_id")
            )
        )
        found.reply = render_text(f"question:{slug}:thanks", question.thanks)
        return found
    attempt = int(asking.get("attempts") or 0) + 1
    final = attempt > question.retries
    found.events.append(
        MeasurementRejected(measurement=slug, reason=NOT_AN_ANSWER, attempt=attempt, final=final)
    )
    if not final:
        asked = numbered(question, render_text(f"question:{slug}:text", question.text))
        found.reply = (
            render_text(f"question:{slug}:clarify", question.clarify)
            if question.clarify
            else f"Sorry, I didn't catch that. {asked}"
        )
    return found


def _extract(
    intervention: Intervention,
    working: Working,
    slug: str,
    asked: str,
    reply: str,
    llm: Asker,
    into: Answered,
) -> Any | None:
    """The answer as the LLM reads it from the reply, or None. The question's body, if it
    has one, is the prompt (with `question`, as sent: its partials rendered, and `answer`);
    else a standard one."""
    if llm.structured is None:
        return None
    question = intervention.questions[slug]
    prompt = EXTRACTION.format(question=asked, reply=reply)
    if intervention.template(f"question:{slug}") is not None:
        variables = context.data(intervention, working.row, working.now, working.history)
        variables |= {"question": asked, "answer": reply}
        prompt = judging.render(intervention, f"question:{slug}", variables).text
    model = intervention.model(question.model, "question")
    messages = [{"role": "system", "content": prompt}]
    wanted = extraction_model(slug, question)
    value, events = llm.structured(messages, wanted, f"question:{slug}", model=model)
    into.events += events
    return getattr(value, "value", None)
