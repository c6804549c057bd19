"""A loaded intervention: its config, its primitives by slug, where each came from (file and
lines, for error messages), and their compiled templates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel

from bot.conversation.context import PROFILE_FIELDS
from bot.conversation.safety import CrisisScreen
from bot.core.localtime import QuietHours, parse_quiet_hours
from bot.core.model_choice import ModelChoice
from bot.interventions.language.arms import Arms
from bot.interventions.language.decisions_format import Decision
from bot.interventions.language.format import (
    Action,
    Configuration,
    Form,
    Judgement,
    Note,
    Question,
    Retrieve,
    Step,
)
from bot.interventions.language.instrument_port import Instruments
from bot.interventions.language.libraries import Library
from bot.interventions.language.results import result_model
from bot.interventions.language.templates import Slot, TemplateSet

Path_ = tuple[Any, ...]


@dataclass(frozen=True)
class Source:
    """A file: its path as shown to authors, the line of each front matter key (by key path,
    e.g. ("transitions", 0, "when")), and the file line of the body's first line."""

    file: str
    lines: Mapping[Path_, int] = field(default_factory=dict)
    body_line: int = 1
    has_body: bool = False
    text: str = field(default="", repr=False)

    def line_text(self, line: int | None) -> str:
        lines = self.text.splitlines()
        return lines[line - 1] if line and 0 < line <= len(lines) else ""

    def line(self, *path: Any) -> int | None:
        """The line of the longest prefix of `path` that is a key (None: no front matter)."""
        for end in range(len(path), 0, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return min(self.lines.values(), default=None)

    def in_body(self, line: int | None) -> int | None:
        return None if line is None else self.body_line + line - 1


@dataclass(frozen=True)
class Compiled:
    """A compiled template, the slots written in its own source, the file line of its first
    line (None if unknown) and its source."""

    template: jinja2.Template
    slots: tuple[Slot, ...]
    line: int | None = None
    source: str = ""  # as written, for the validator's checks of its `{% if %}` tests


@dataclass(frozen=True)
class Retrieval:
    """A retrieval as written: the source key and key path (for `file:line`), what it asks
    for, the compiled key of its query template, and the action it is (None: a step's)."""

    key: str
    path: tuple[Any, ...]
    spec: Retrieve
    template: str
    action: Action | None = None


@dataclass
class Intervention:
    """Everything in one folder under interventions/. Keys of `sources` and `compiled` are
    "config", "<kind>:<slug>" (the body), "step:<slug>:say:<i>", "question:<slug>:text"."""

    slug: str
    folder: Path
    config: Configuration
    steps: dict[str, Step]
    judgements: dict[str, Judgement]
    notes: dict[str, Note]
    questions: dict[str, Question]
    partials: dict[str, str]
    sources: dict[str, Source]
    templates: TemplateSet
    compiled: dict[str, Compiled]
    digest: str
    unreadable: set[str] = field(default_factory=set)  # slugs of files that did not load
    forms: dict[str, Form] = field(default_factory=dict)
    libraries: dict[str, Library] = field(default_factory=dict)
    decisions: dict[str, Decision] = field(default_factory=dict)  # decisions/<name>.md
    arms: Arms = field(default_factory=Arms)  # the study arms running it (`arm.*`)
    # intervention.yaml `instruments:` as bot.instruments reads them (None: not attached)
    instruments: Instruments | None = None
    _models: dict[str, type[BaseModel]] = field(default_factory=dict, repr=False)

    @property
    def revision(self) -> str:
        """The declared version and a hash of every file: a changed file changes it."""
        return f"{self.config.version}+{self.digest[:12]}"

    @property
    def root(self) -> str | None:
        return self.config.root

    def source(self, kind: str, slug: str) -> Source:
        return self.sources[f"{kind}:{slug}"]

    def form_source(self, name: str) -> tuple[str, tuple[Any, ...]]:
        """Where form `name` is written: its source key and the key path of its declaration
        (forms/<name>.yaml, or `forms.<name>` in intervention.yaml)."""
        if f"form:{name}" in self.sources:
            return f"form:{name}", ()
        return "config", ("forms", name)

    def template(self, key: str) -> Compiled | None:
        return self.compiled.get(key)

    def model(self, name: str | None, kind: str) -> ModelChoice:
        """The model to call: an alias from intervention.yaml (or the kind's default alias)
        resolved to its model name, with the intervention's temperature and max_tokens; what
        is None is the server's default (TANDEM_MODEL, TANDEM_TEMPERATURE, TANDEM_MAX_TOKENS)."""
        alias = name or getattr(self.config.defaults, kind, None)
        resolved = self.config.models.get(alias, alias) if alias else None
        return ModelChoice(resolved, self.config.temperature, self.config.max_tokens)

    def note_names(self) -> dict[str, str]:
        """Each note NAME (a slot of a note file) and the note that writes it."""
        names: dict[str, str] = {}
        for slug in self.notes:
            compiled = self.compiled.get(f"note:{slug}")
            for slot in compiled.slots if compiled else ():
                names.setdefault(slot.name, slug)
        return names

    def profile_fields(self) -> list[str]:
        """Profile fields conditions, templates and `set:` may use: those declared in
        intervention.yaml (`profile:`, `intake.fields`) and the engine's own
        (bot.conversation.context.PROFILE_FIELDS). Any other name is an author's mistake."""
        declared = list(self.config.intake.fields) if self.config.intake else []
        return list(dict.fromkeys([*declared, *self.config.profile, *PROFILE_FIELDS]))

    def declares_profile(self, name: str) -> bool:
        """Whether `name` is a profile field (or cannot be known: intervention.yaml is broken)."""
        return name in self.profile_fields() or "intervention.yaml" in self.unreadable

    def actions(self) -> list[tuple[str, tuple[Any, ...], Action]]:
        """Every action with the source key and key path it was written at."""
        found: list[tuple[str, tuple[Any, ...], Action]] = []
        for slug, step in self.steps.items():
            for part in ("on_enter", "on_exit"):
                found += [(f"step:{slug}", (part, n), a) for n, a in enumerate(getattr(step, part))]
            for t, transition in enumerate(step.transitions):
                found += [
                    (f"step:{slug}", ("transitions", t, "actions", n), a)
                    for n, a in enumerate(transition.actions)
                ]
        for slug, judgement in self.judgements.items():
            key = f"judgement:{slug}"
            found += [(key, ("actions", n), a) for n, a in enumerate(judgement.actions)]
        return found

    def retrievals(self) -> list[Retrieval]:
        """Every retrieval: each step's `retrieve:` and each `retrieve:` action."""
        found: list[Retrieval] = []
        for slug, step in self.steps.items():
            for n, spec in enumerate(step.retrieve):
                key = f"step:{slug}"
                found.append(Retrieval(key, ("retrieve", n), spec, f"{key}:query:retrieve.{n}"))
        for key, path, action in self.actions():
            if action.retrieve is not None and action.query is not None:
                where = ".".join(str(part) for part in path)
                template = f"{key}:query:{where}"
                found.append(Retrieval(key, path, action.retrieval(), template, action))
        return found

    def retrieval_of(self, action: Action) -> Retrieval:
        """The retrieval a `retrieve:` action runs (this very action object)."""
        return next(r for r in self.retrievals() if r.action is action)

    def retrieved_names(self) -> dict[str, str]:
        """Each `retrieved.<name>` templates may use, and the library it comes from."""
        return {r.spec.name: r.spec.library for r in self.retrievals()}

    def result_model(self, slug: str) -> type[BaseModel]:
        """The pydantic model of a judgement's result (KeyError: no such judgement)."""
        if slug not in self._models:
            judgement = self.judgements[slug]
            doc = judgement.description or f"Your judgement: {judgement.title}."
            self._models[slug] = result_model(slug, judgement.result or {}, doc)
        return self._models[slug]

    def crisis_screen(self) -> CrisisScreen:
        """The crisis screen with this intervention's extra phrases and exclusions."""
        safety = self.config.safety
        return CrisisScreen.from_default(safety.extra_phrases, safety.extra_exclusions)

    def quiet_hours(self) -> QuietHours | None:
        return parse_quiet_hours(self.config.quiet_hours)

    def returns(self, step: str) -> bool:
        found = self.steps.get(step)
        return bool(found and found.returns)

    def interrupts(self) -> list[str]:
        return [slug for slug, step in self.steps.items() if step.interrupt is not None]

    def interrupt_judgements(self) -> list[str]:
        """The judgements interrupts rely on, each once: they run on every turn."""
        wanted = [
            name
            for step in self.steps.values()
            if step.interrupt is not None
            for name in step.interrupt.judgements
        ]
        return list(dict.fromkeys(wanted))
