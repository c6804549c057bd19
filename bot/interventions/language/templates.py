"""Templates: sandboxed Jinja2 with StrictUndefined and `{% include %}` partials, whose
`[[slot]]` markers split the rendered text into literal segments and completion slots.

A template is rendered ONCE, before any completion: each marker becomes a call that prints a
sentinel holding a per-render secret, and the output is split on the sentinels. Completions
are therefore never template source (a model that writes `{{ 7*7 }}` is quoted, not run), and
text that merely looks like a slot (a participant typing `[[reply]]`) is never one.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
from pydantic import BaseModel, ConfigDict, Field, create_model

SLOT_MARK = re.compile(r"\[\[(.*?)\]\]")
_SPEC = re.compile(r"^\s*(?:([a-z]+)\s*:\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:\|(.*))?$")
KINDS = ("speak", "think", "pick", "bool", "int")
_CALL = "_slot_"
_INSTRUCTIONS = {
    "speak": "Write {name}: only the words to send to the participant, with no label or quotes.",
    "think": "Write {name}: brief private notes for yourself. They are never sent.",
    "pick": "Choose {name}: exactly one of {options}.",
    "bool": "Decide {name}: true or false.",
    "int": "Give {name}: a whole number.",
}
# A note's text slots are records for the study team and later prompts, never messages: the
# model must not write them as if talking to the participant.
NOTE_INSTRUCTION = (
    "Write {name}: the note itself, for the study's records and later prompts, with no label "
    "or quotes. It is never sent to the participant: write about them, not to them."
)


class SlotError(ValueError):
    """A `[[...]]` marker that is not a valid slot; `line` is 1-based in its template."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Slot:
    """One completion: `[[name]]`, `[[think:name]]`, `[[pick:name|a,b]]`, `[[bool:name]]`,
    `[[int:name]]` (`[[speak:name]]` is the same as `[[name]]`)."""

    kind: str
    name: str
    options: tuple[str, ...] = ()

    @property
    def speakable(self) -> bool:
        return self.kind == "speak"

    @property
    def typed(self) -> bool:
        return self.kind in ("pick", "bool", "int")

    def instruction(self, note: bool = False) -> str:
        """What the model is asked for this slot; `note`: the slot is part of a note."""
        options = ", ".join(f'"{option}"' for option in self.options)
        wording = NOTE_INSTRUCTION if note and self.kind == "speak" else _INSTRUCTIONS[self.kind]
        return wording.format(name=self.name, options=options)

    def model(self) -> type[BaseModel]:
        """The one-field structured-output model of a typed slot."""
        return _slot_model(self)


@cache
def _slot_model(slot: Slot) -> type[BaseModel]:
    annotation: Any = {"bool": bool, "int": int}.get(slot.kind)
    if slot.kind == "pick":
        annotation = Literal[slot.options]
    return create_model(
        "Slot",
        __config__=ConfigDict(extra="forbid"),
        __doc__=slot.instruction(),
        value=(annotation, Field(description=slot.instruction())),
    )


def parse_slot(inner: str) -> Slot:
    """The slot a marker's inside describes; ValueError says what is wrong."""
    match = _SPEC.match(inner)
    if match is None:
        raise ValueError(
            f"[[{inner}]] is not a slot: write [[name]], [[think:name]], [[pick:name|a,b]], "
            "[[bool:name]] or [[int:name]] (names: letters, digits and _)"
        )
    kind, name, options = match[1] or "speak", match[2], match[3]
    if kind not in KINDS:
        raise ValueError(f"[[{inner}]]: unknown slot kind {kind!r}; known: {', '.join(KINDS)}")
    choices = tuple(part.strip() for part in (options or "").split(",") if part.strip())
    if kind == "pick" and len(choices) < 2:
        raise ValueError(f"[[{inner}]]: a pick slot needs two or more options: [[pick:{name}|a,b]]")
    if kind != "pick" and options is not None:
        raise ValueError(f"[[{inner}]]: only pick slots take options")
    return Slot(kind, name, choices)


def has_slots(source: str) -> bool:
    return SLOT_MARK.search(source) is not None


class RenderError(ValueError):
    """A template that rendered into something unusable (a slot twice, say)."""


@dataclass(frozen=True)
class Rendered:
    """A rendered template: literal text segments around its slots (one more text than slots).
    `texts[i]` comes before `slots[i]`; the last text follows the last slot."""

    texts: tuple[str, ...]
    slots: tuple[Slot, ...]

    @property
    def text(self) -> str:
        """The whole text of a template without slots."""
        return "".join(self.texts).strip()


class TemplateSet:
    """The templates of one intervention: one sandboxed environment, its partials by name, and
    the slots of every template it compiled (markers refer to them by number)."""

    def __init__(self, partials: Mapping[str, str]) -> None:
        self.slots: list[Slot] = []
        self.partial_errors: dict[str, SlotError] = {}
        marked: dict[str, str] = {}
        for name, source in partials.items():
            try:
                marked[name] = self.mark(source)
            except SlotError as exc:
                self.partial_errors[name] = exc
                marked[name] = ""
        self.env = ImmutableSandboxedEnvironment(
            undefined=jinja2.StrictUndefined,
            loader=jinja2.FunctionLoader(lambda name: _partial(marked, name)),
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,
        )

    def mark(self, source: str) -> str:
        """The source with each [[slot]] replaced by a sentinel call (lines are kept)."""

        def replace(match: re.Match[str]) -> str:
            try:
                slot = parse_slot(match[1])
            except ValueError as exc:
                raise SlotError(str(exc), source.count("\n", 0, match.start()) + 1) from None
            self.slots.append(slot)
            return "{{ " + f"{_CALL}({len(self.slots) - 1})" + " }}"

        return SLOT_MARK.sub(replace, source)

    def compile(self, source: str) -> jinja2.Template:
        """Raises SlotError or jinja2.TemplateSyntaxError (both with a line)."""
        return self.env.from_string(self.mark(source))

    def render(self, template: jinja2.Template, context: Mapping[str, Any]) -> Rendered:
        """Render once; raises jinja2 errors (unknown variable, ...) or RenderError."""
        secret = secrets.token_hex(8)
        sentinel = re.compile(f"\ue000{secret}:(\\d+)\ue001")
        out = template.render({**context, _CALL: _sentinel(secret)})
        pieces = sentinel.split(out)
        slots = tuple(self.slots[int(index)] for index in pieces[1::2])
        names = [slot.name for slot in slots]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise RenderError(f"slot(s) {', '.join(twice)} rendered more than once (in a loop?)")
        return Rendered(tuple(pieces[0::2]), slots)


def _sentinel(secret: str) -> Callable[[int], str]:
    def slot(index: int) -> str:
        return f"\ue000{secret}:{int(index)}\ue001"

    return slot


def _partial(marked: Mapping[str, str], name: str) -> tuple[str, str, Callable[[], bool]] | None:
    """A partial with a file name of its own, so errors inside it can be placed."""
    if name not in marked:
        return None
    return marked[name], _PARTIAL + name, lambda: True


_PARTIAL = "partial:"


def error_location(exc: BaseException) -> tuple[str | None, int | None]:
    """(partial name or None for the template itself, 1-based line) where jinja2 failed."""
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return exc.name, exc.lineno
    found: tuple[str | None, int | None] = (None, None)
    tb = exc.__traceback__
    while tb is not None:  # jinja2 rewrites tracebacks: template frames carry template lines
        filename = tb.tb_frame.f_code.co_filename
        if filename == "<template>":
            found = (None, tb.tb_lineno)
        elif filename.startswith(_PARTIAL):
            found = (filename[len(_PARTIAL) :], tb.tb_lineno)
        tb = tb.tb_next
    return found
