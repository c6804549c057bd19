"""The intervention format as pydantic models: intervention.yaml and the front matter of each
primitive (step, judgement, note, question). docs/interventions.md explains every key."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
    model_validator,
)

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
FieldType = Literal["text", "int", "number", "bool", "choice", "list", "date", "time"]
VERBS = ("note", "alert", "ask", "schedule", "send", "set", "retrieve", "administer")
FilterValue = str | int | float | bool


def parse_duration(value: Any) -> timedelta:
    """ "30m", "2h", "1.5d", "90s" -> timedelta."""
    if isinstance(value, timedelta):
        return value
    match = _DURATION.match(str(value))
    if match is None:
        raise ValueError(f"{value!r} is not a duration such as 30m, 2h or 1d")
    return timedelta(seconds=float(match[1]) * _UNITS[match[2]])


# The JSON Schema (`tandem interventions schema`) says what authors write, not the parsed type.
Duration = Annotated[
    timedelta,
    BeforeValidator(parse_duration),
    WithJsonSchema({"type": "string", "pattern": _DURATION.pattern, "examples": ["30m", "2h"]}),
]
Text = Annotated[
    str,
    BeforeValidator(lambda v: str(v) if isinstance(v, int | float) else v),
    WithJsonSchema({"type": ["string", "number"]}),
]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldSpec(Strict):
    """A typed value: a judgement's result field, or a profile field (`list` is a list of
    text, `date` is YYYY-MM-DD, `time` is HH:MM)."""

    type: FieldType
    description: str | None = None
    options: dict[str, str] | list[str] | None = None
    min: float | None = None
    max: float | None = None
    unit: str | None = None  # what a number counts (minutes, kg): for the codebook
    optional: bool = False

    @model_validator(mode="after")
    def _coherent(self) -> FieldSpec:
        if self.type == "choice" and not self.options:
            raise ValueError("a choice needs `options` (each value with its meaning)")
        if self.type != "choice" and self.options:
            raise ValueError(f"`options` only go with type choice, not {self.type}")
        if (self.min is not None or self.max is not None) and self.type not in ("int", "number"):
            raise ValueError("`min`/`max` only go with type int or number")
        if self.unit is not None and self.type not in ("int", "number"):
            raise ValueError("`unit` only goes with type int or number")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"`min` ({self.min:g}) is above `max` ({self.max:g})")
        return self

    def choices(self) -> dict[str, str]:
        """Each option with its meaning ("" when options were given as a list)."""
        if isinstance(self.options, dict):
            return {str(k): str(v) for k, v in self.options.items()}
        return {str(option): "" for option in self.options or ()}


class Action(Strict):
    """One thing to do when a transition fires or a judgement is recorded (if `when` holds)."""

    when: str | None = None
    note: str | None = None
    alert: str | None = None
    severity: Literal["info", "warning", "critical"] = "warning"
    ask: str | None = None
    schedule: str | None = None
    at: str | None = None
    send: str | None = None
    after: Duration | None = None
    set: dict[str, str | int | float | bool | None] | None = None
    retrieve: str | None = None  # a library: with `query`, `k`, `as`, `filter` (see Retrieve)
    query: str | None = None
    k: int = Field(2, ge=1, le=50)
    as_: str | None = Field(None, alias="as")
    filter: dict[str, FilterValue] = {}
    administer: str | None = None  # an instrument of intervention.yaml `instruments:`
    # with `ask` or `administer`: again and again (bot.timers.recurrence_format, checked by
    # the validator; docs/schedules.md)
    repeat: dict[Any, Any] | None = None
    freeze: bool = False  # with `send` and `after`: render when scheduled, not when sent

    @model_validator(mode="after")
    def _one_verb(self) -> Action:
        verbs = [verb for verb in VERBS if getattr(self, verb) is not None]
        if len(verbs) != 1:
            found = ", ".join(verbs) or "none"
            raise ValueError(f"an action does exactly one of {', '.join(VERBS)} (found: {found})")
        if self.at is not None and not self.schedule:
            raise ValueError("`at` goes with `schedule` only")
        if self.after is not None and not (self.ask or self.send or self.administer):
            raise ValueError("`after` goes with `ask`, `send` or `administer` only")
        if self.repeat is not None and not (self.ask or self.administer or self.send):
            raise ValueError("`repeat` goes with `ask`, `administer` or `send` only")
        if self.freeze and not (self.send and self.after is not None):
            raise ValueError("`freeze` goes with `send` and `after` only")
        if self.repeat is not None and self.after is not None:
            raise ValueError("`repeat` and `after` do not go together: use the repeat's `offset`")
        if self.retrieve is None:
            given = [k for k in ("query", "as_", "filter") if getattr(self, k)]
            if given or "k" in self.model_fields_set:
                raise ValueError("`query`, `k`, `as` and `filter` go with `retrieve` only")
        elif not (self.query or "").strip():
            raise ValueError("`retrieve` needs a `query` (a template)")
        return self

    @property
    def verb(self) -> str:
        return next(verb for verb in VERBS if getattr(self, verb) is not None)

    def retrieval(self) -> Retrieve:
        """A `retrieve:` action as the retrieval it runs."""
        assert self.retrieve is not None and self.query is not None
        written = {"library": self.retrieve, "query": self.query, "k": self.k, "as": self.as_}
        return Retrieve.model_validate({**written, "filter": self.filter})


class Retrieve(Strict):
    """The top `k` documents of `library` for `query` (a template), those whose metadata
    match `filter` (equality; `tags` holds the value), available as `retrieved.<as>`."""

    library: str
    query: str
    k: int = Field(2, ge=1, le=50)
    as_: str | None = Field(None, alias="as")
    filter: dict[str, FilterValue] = {}

    @property
    def name(self) -> str:
        """What templates call it: `retrieved.<name>` (default: the library's name)."""
        return self.as_ or self.library


class Library(Strict):
    """A folder of markdown documents (front matter `id`, `title`, `tags`, any metadata),
    ranked by BM25 or by embeddings from a model alias."""

    path: str
    method: Literal["bm25", "embeddings"] = "bm25"
    model: str | None = None

    @model_validator(mode="after")
    def _coherent(self) -> Library:
        if self.method == "embeddings" and not self.model:
            raise ValueError("`method: embeddings` needs `model:` (an alias from `models:`)")
        if self.method == "bm25" and self.model:
            raise ValueError("`model` goes with `method: embeddings` only")
        return self


class Transition(Strict):
    """`after_reply`: checked once the step has answered the message (answer-then-switch): the
    participant moves then, and the next message is handled by the new step."""

    to: str
    when: str | None = None
    actions: list[Action] = []
    after_reply: bool = False


class FormField(FieldSpec):
    """A field of a form: a typed value, the domain it belongs to, whether it is critical."""

    domain: str | None = None
    critical: bool = False


class FormDomain(Strict):
    """A part of a form, with a soft target of turns the conversation spends on it."""

    title: Text | None = None
    description: str | None = None
    target: int | None = Field(None, ge=1)


class Form(Strict):
    """A record built up over turns (forms/<name>.yaml, or under `forms:` in intervention.yaml).

    `complete_when` is a condition over `form.*` (the clock's figures), checked after each
    extraction; `model_completes` lets the model mark the form complete; `open` lets it propose
    new fields. `prompt` is a template added to each extraction's instructions."""

    title: Text
    description: str | None = None
    fields: dict[str, FormField] = {}
    domains: dict[str, FormDomain] = {}
    target_turns: int | None = Field(None, ge=1)
    complete_when: str | None = None
    model_completes: bool = False
    open: bool = False
    model: str | None = None
    prompt: str | None = None


class StepForm(Strict):
    """The form a step fills: `collect` (every message is extracted, turns count on the clock)
    or `passive` (extraction continues, only to record corrections; no turns are counted)."""

    name: str
    mode: Literal["collect", "passive"] = "collect"


def _named(value: Any) -> Any:
    return {"name": value} if isinstance(value, str) else value


class JudgementRun(Strict):
    """When a step runs a judgement: every `every` turns, or on entering or leaving it."""

    name: str
    when: Literal["turn", "enter", "exit"] = "turn"
    every: int = Field(1, ge=1)


class Interrupt(Strict):
    """Enter this step from anywhere when `when` holds (judgements run every turn first)."""

    when: str
    judgements: list[str] = []
    cooldown: int = Field(3, ge=0)


class Step(Strict):
    kind: Literal["step"] = "step"
    title: Text
    description: str | None = None
    say: str | list[str] | None = None
    model: str | None = None
    tools: list[str] = []
    judgements: list[
        Annotated[JudgementRun, BeforeValidator(_named, json_schema_input_type=str | JudgementRun)]
    ] = []
    notes: list[str] = []
    on_enter: list[Action] = []
    on_exit: list[Action] = []
    max_turns: int | None = Field(None, ge=1)
    max_minutes: float | None = Field(None, gt=0)
    transitions: list[Transition] = []
    end: bool = False
    digression: bool = False
    return_when: str | None = None
    interrupt: Interrupt | None = None
    form: (
        Annotated[StepForm, BeforeValidator(_named, json_schema_input_type=str | StepForm)] | None
    ) = None
    retrieve: list[Retrieve] = []  # run every turn the step answers, before its reply

    @property
    def returns(self) -> bool:
        """Digressions and interrupts go back to where the participant came from."""
        return self.digression or self.interrupt is not None


class Judgement(Strict):
    kind: Literal["judgement"] = "judgement"
    title: Text
    description: str | None = None
    model: str | None = None
    result: dict[str, FieldSpec] | None = None
    actions: list[Action] = []


class Note(Strict):
    kind: Literal["note"] = "note"
    title: Text
    description: str | None = None
    model: str | None = None


class Question(Strict):
    kind: Literal["question"] = "question"
    title: Text
    description: str | None = None
    text: str
    answer: Literal["text", "options", "scale", "yesno"] = "text"
    options: list[Text] = []  # for `yesno`, the words shown for yes and no (default Yes, No)
    min: int = 1
    max: int = 10
    clarify: str | None = None
    thanks: str = "Thank you, noted."
    retries: int = Field(1, ge=0, le=3)
    schedule: str | None = None
    answer_window: Duration = timedelta(hours=2)
    model: str | None = None
    llm: bool = True  # false: read answers without the LLM only (fixed-wording interventions)
    moves_on: bool = False  # after a valid answer, check the step's transitions at once

    @model_validator(mode="after")
    def _coherent(self) -> Question:
        if self.answer == "options" and len(self.options) < 2:
            raise ValueError("an options question needs at least two `options`")
        if self.answer == "yesno" and self.options and len(self.options) != 2:
            raise ValueError("a yesno question's `options` are two: the words for yes and no")
        if self.answer not in ("options", "yesno") and self.options:
            raise ValueError("`options` only go with `answer: options` (or `yesno`)")
        if self.answer == "scale" and self.min >= self.max:
            raise ValueError(f"the scale's `min` ({self.min}) must be below `max` ({self.max})")
        return self


class Sessions(Strict):
    gap_hours: float = Field(gt=0)
    resume_at: str


class Defaults(Strict):
    step: str | None = None
    judgement: str | None = None
    note: str | None = None
    question: str | None = None


class Safety(Strict):
    message: str | None = None
    extra_phrases: list[str] = []
    extra_exclusions: list[str] = []


class Speakers(Strict):
    participant: str = "PARTICIPANT"
    bot: str = "COACH"


class Intake(Strict):
    fields: dict[str, FieldSpec] = {}


# It promises nothing: no retry of the failed turn is scheduled, so nothing will follow.
DEFAULT_FALLBACK = "Sorry, I can't answer right now. Please write again a little later."


class ChecklistItem(Strict):
    """One question a fidelity reviewer answers yes or no about a bot turn (`review_checklist:`):
    `key` names its column in evaluations.csv (`check_<key>`), `label` is what they read."""

    key: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")
    label: Text


class Configuration(Strict):
    """intervention.yaml."""

    title: Text
    version: Text
    description: str | None = None
    root: str | None = None
    module: str | None = None
    sessions: Sessions | None = None
    models: dict[str, str] = {}
    defaults: Defaults = Defaults()
    # Sampling for every LLM call of the intervention (None: TANDEM_TEMPERATURE, TANDEM_MAX_TOKENS).
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=1)
    supervisors: list[Text] = []
    safety: Safety = Safety()
    quiet_hours: str | None = None
    # Phone numbers, e-mail addresses and the participant's name are replaced with
    # placeholders in everything sent to the LLM (bot.conversation.redaction).
    redact_for_llm: bool = False
    intake: Intake | None = None
    profile: dict[str, FieldSpec] = {}
    libraries: dict[str, Library] = {}
    speakers: Speakers = Speakers()
    fallback: str = DEFAULT_FALLBACK
    forms: dict[str, Form] = {}
    instruments: list[str] = []  # instruments/<name>.yaml (docs/instruments.md)
    # What the deployment must offer beyond what is inferred (bot.interventions.validation.needs).
    needs: list[Literal["llm", "embeddings", "whatsapp_template"]] = []
    # What fidelity reviewers tick for each bot turn they rate (docs/console.md, Fidelity review).
    review_checklist: list[ChecklistItem] = []
    # The approved WhatsApp template (Content SID) that carries the greeting, as {{1}}, to a
    # WhatsApp participant who has not written yet (the 24-hour window is closed until they do).
    whatsapp_template: str | None = Field(None, pattern=r"^HX[0-9a-fA-F]{32}$")

    @model_validator(mode="after")
    def _starts(self) -> Configuration:
        if not self.root and not self.module:
            raise ValueError("say where participants start: `root` (a step) or `module`")
        return self

    @field_validator("review_checklist")
    @classmethod
    def _keys_differ(cls, items: list[ChecklistItem]) -> list[ChecklistItem]:
        keys = [item.key for item in items]
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:
            raise ValueError(f"each checklist `key` once: {', '.join(twice)} is given twice")
        return items


KINDS: dict[str, type[Strict]] = {
    "step": Step,
    "judgement": Judgement,
    "note": Note,
    "question": Question,
}
