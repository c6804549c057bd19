"""Form events: one extraction per participant message in a step that fills a form, and what it
set, added, completed or had rejected. The form's state (the participants row's `forms`) is a
fold of these, so a replay rebuilds it and its clock exactly.

`message_id`/`message_seq` name the participant message an extraction read (the
`message.received` event), so every value says where it came from.
"""

from __future__ import annotations

from typing import Any, Literal

from bot.store.events import EventData, event, fields

FormMode = Literal["collect", "passive"]


@event("form.extracted")
class FormExtracted(EventData):
    """Form `form` read one participant message in `step`: the model's `analysis`, the domain
    the message was about (`domain`, counted against its target in `collect` mode) and what it
    means to ask next (`next`). Starts a new extraction: earlier rejections are cleared."""

    personal = fields("analysis", "next")
    plain = fields("domain", "form", "step")

    form: str
    step: str | None = None
    mode: FormMode = "collect"
    domain: str | None = None
    analysis: str = ""
    next: str | None = None
    message_id: str | None = None
    message_seq: int | None = None


@event("form.value_set")
class FormValueSet(EventData):
    """Field `key` of form `form` is now `value` (set, or corrected from `previous`); `type`,
    `domain` and `critical` are the field's declaration when it was set (for the export)."""

    personal = fields("previous", "value")
    plain = fields("domain", "form", "key", "step", "type")

    form: str
    key: str
    value: Any
    previous: Any = None
    type: str = ""
    domain: str | None = None
    critical: bool = False
    step: str | None = None
    message_id: str | None = None
    message_seq: int | None = None


@event("form.field_added")
class FormFieldAdded(EventData):
    """A field the model proposed (an `open` form), validated and accepted: its declaration
    (`type`, `domain`, `options`, `description`) and why the model wanted it."""

    personal = fields("description", "options", "why")
    plain = fields("domain", "form", "key", "type")

    form: str
    key: str
    type: str
    domain: str | None = None
    options: list[str] = []
    description: str = ""
    why: str = ""
    message_id: str | None = None
    message_seq: int | None = None


@event("form.domain_completed")
class FormDomainCompleted(EventData):
    """The model marked `domain` of form `form` complete."""

    personal = fields()
    plain = fields("domain", "form")

    form: str
    domain: str
    message_id: str | None = None


@event("form.completed")
class FormCompleted(EventData):
    """Form `form` is complete: its `complete_when` rule held (`by` rule, with the values it
    read), or the model marked it complete (`by` model, where the form allows it)."""

    personal = fields("values")
    plain = fields("condition", "form")

    form: str
    by: Literal["rule", "model"] = "rule"
    condition: str | None = None
    values: dict[str, Any] = {}
    message_id: str | None = None


@event("form.rejected")
class FormRejected(EventData):
    """Part of an extraction that was invalid and not stored: a value (`item` value), a
    proposed field, a domain or the completion mark, with `key` and the `reason`. The reasons
    are shown to the model in the next extraction."""

    personal = fields("reason")
    plain = fields("form", "key")

    form: str
    item: Literal["value", "field", "domain", "complete"]
    key: str | None = None
    reason: str
    message_id: str | None = None


@event("form.failed")
class FormFailed(EventData):
    """No extraction could be made (the LLM failed, or gave no valid structured reply):
    nothing was stored and the turn carried on."""

    personal = fields("reason")
    plain = fields("form", "step")

    form: str
    reason: str
    step: str | None = None
    message_id: str | None = None
