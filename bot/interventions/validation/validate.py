"""The validator behind `tandem interventions validate`: everything that can be known before a
participant meets the intervention, reported as Problem(file, line, message).

It renders every template with a representative context (unknown names, missing partials,
misplaced slots), checks every condition against the allow-list and the names that exist,
every reference (steps, judgements, notes, questions, partials, tools, models), unique titles,
typed results, and the graph: steps that cannot be reached and dead ends.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

import jinja2

from bot.interventions.language.intervention import Intervention
from bot.interventions.language.loader import CONFIG, read_intervention
from bot.interventions.language.problems import Problem
from bot.interventions.language.templates import RenderError, error_location
from bot.interventions.language.types import name_types
from bot.interventions.validation import references
from bot.interventions.validation.judgement_runs import Level, judgement_run_problems
from bot.interventions.validation.samples import answer_sample, sample_context, sample_data
from bot.interventions.validation.template_tests import template_test_problems
from bot.interventions.validation.validate_config import config_problems, result_problems
from bot.interventions.validation.validate_decisions import decisions_problems
from bot.interventions.validation.validate_forms import form_problems
from bot.interventions.validation.validate_libraries import library_problems

_RENDER_ERRORS = (jinja2.TemplateError, RenderError, ValueError, TypeError, ArithmeticError)


Attach = Callable[[Intervention], tuple[Intervention, list[Problem]]]


def validate_folder(
    folder: Path | str,
    tools: Collection[str] | None = None,
    modules: Collection[str] | None = None,
    attach: Attach | None = None,
) -> list[Problem]:
    """Every problem of the intervention in `folder` (none: it can run). Tool names are
    checked against `tools` (bot.runtime.tool_registry.TOOLS) and `module:` against `modules`
    (the module-based conversation modules) if given. `attach` loads what layers above the
    language own (bot.instruments.administration.attach: its `instruments:`)."""
    intervention, problems = read_intervention(folder, keep_going=True)
    if intervention is not None and attach is not None:
        intervention, more = attach(intervention)
        problems = problems + more
    if intervention is not None:
        problems = problems + check(intervention, tools, modules)
    return sorted(set(problems), key=lambda p: (p.file, p.line or 0, p.message))


def intervention_folders(root: Path | str) -> list[Path]:
    """The interventions under `root` (each folder holding intervention.yaml), or `root`
    itself if it is one."""
    root = Path(root)
    if (root / CONFIG).is_file():
        return [root]
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def check(
    intervention: Intervention,
    tools: Collection[str] | None = None,
    modules: Collection[str] | None = None,
) -> list[Problem]:
    """The problems of a loaded intervention; tool names only if `tools` are given (modules
    may not import the tool registry: the flow checks their tools when it starts), module
    names only if `modules` are given (the composition root hands them to the step module)."""
    checker = _Checker(intervention, tools, modules)
    checker.run()
    return checker.problems


class _Checker:
    def __init__(
        self,
        intervention: Intervention,
        tools: Collection[str] | None,
        modules: Collection[str] | None,
    ) -> None:
        self.i, self.tools, self.modules = intervention, tools, modules
        self.problems: list[Problem] = []

    def add(
        self, key: str, path: Iterable[Any] | None, message: str, level: Level = "error"
    ) -> None:
        source = self.i.sources[key]
        line = source.line(*path) if path is not None else None
        self.problems.append(Problem(source.file, line, message, level))

    def run(self) -> None:
        path: tuple[Any, ...] | None
        if CONFIG not in self.i.unreadable:  # else its own problems are reported
            for path, message in config_problems(self.i, self.modules):
                self.add("config", path, message)
        for key, path, message in result_problems(self.i):
            self.add(key, path, message)
        for key, path, message in form_problems(self.i):
            self.add(key, path, message)
        for key, path, message in library_problems(self.i):
            self.add(key, path, message)
        self.problems += decisions_problems(self.i)
        for key, path, message, level in judgement_run_problems(self.i):
            self.add(key, path, message, level)
        self.titles()
        for slug in self.i.steps:
            self.step(slug)
        for key, path, action in self.i.actions():
            for message in references.action_problems(action, self.i):
                self.add(key, path, message)
        for key in self.i.compiled:
            self.template(key)
        self.template_tests()
        self.graph()

    def titles(self) -> None:
        seen: dict[str, str] = {}
        for key, model in self.primitives():
            title = " ".join(model.title.split()).casefold()
            if title in seen:
                first = self.i.sources[seen[title]].file
                self.add(key, ("title",), f"the title {model.title!r} is also used by {first}")
            seen.setdefault(title, key)

    def primitives(self) -> list[tuple[str, Any]]:
        kinds: tuple[tuple[str, Mapping[str, Any]], ...]
        kinds = (("step", self.i.steps), ("judgement", self.i.judgements))
        kinds += (("note", self.i.notes), ("question", self.i.questions))
        return [(f"{kind}:{slug}", model) for kind, found in kinds for slug, model in found.items()]

    def step(self, slug: str) -> None:
        step, key, i = self.i.steps[slug], f"step:{slug}", self.i
        has_body = i.sources[key].has_body
        if step.say is not None and has_body:
            self.add(key, ("say",), "a step either says fixed text (`say:`) or has a prompt")
        if step.say is None and not has_body:
            self.add(key, (), "a step needs `say:` (fixed text) or a prompt below the `---`")
        if self.tools is not None:
            self.refs(key, ("tools",), step.tools, self.tools, "tool")
        if CONFIG not in i.unreadable:  # the aliases are declared there
            model = [step.model] if step.model else []
            self.refs(key, ("model",), model, i.config.models, "model alias")
        self.refs(
            key, ("judgements",), [r.name for r in step.judgements], i.judgements, "judgement"
        )
        self.refs(key, ("notes",), step.notes, i.notes, "note")
        for n, transition in enumerate(step.transitions):
            where = ("transitions", n)
            self.refs(key, (*where, "to"), [transition.to], i.steps, "step")
            later = [
                t for t in step.transitions[n + 1 :] if t.after_reply == transition.after_reply
            ]
            if transition.when is None and later:
                self.add(key, where, "a transition without `when` always fires: later ones never")
            self.conditions(key, (*where, "when"), transition.when)
        self.conditions(key, ("return_when",), step.return_when)
        if step.return_when and not step.returns:
            self.add(key, ("return_when",), "`return_when` is for digressions and interrupts")
        if step.interrupt is not None:
            self.conditions(key, ("interrupt", "when"), step.interrupt.when)
            names = step.interrupt.judgements
            self.refs(key, ("interrupt", "judgements"), names, i.judgements, "judgement")
        if step.end and (step.transitions or step.returns):
            self.add(key, ("end",), "an end step has no transitions and does not return")
        if step.end and (step.max_turns or step.max_minutes):
            self.add(key, ("end",), "an end step has no budget: there is nowhere to go")
        if not (step.end or step.transitions or step.returns):
            self.add(
                key, ("title",), f"dead end: step {slug!r} has no transitions (or `end: true`)"
            )

    def refs(
        self, key: str, path: tuple[Any, ...], names: list[str], known: Any, kind: str
    ) -> None:
        """A problem for each name that is not one of `known`, at its line."""
        for n, name in enumerate(names):
            if name not in known and name not in self.i.unreadable:
                where = path if path[-1] in ("to", "model") else (*path, n)
                self.add(key, where, references.unknown(kind, name, known))

    def conditions(self, key: str, path: tuple[Any, ...], source: str | None) -> None:
        if source is not None:
            for message in references.condition_problems(source, self.i):
                self.add(key, path, message)

    def template(self, key: str) -> None:
        compiled = self.i.compiled[key]
        kind, slug, *part = key.split(":")
        context = sample_context(self.i, slug if kind == "step" else None)
        if kind == "question" and not part:
            question = self.i.questions[slug]
            answer = str(answer_sample(question))
            context = {**sample_data(self.i), "question": question.text, "answer": answer}
        try:
            rendered = self.i.templates.render(compiled.template, context)
        except _RENDER_ERRORS as exc:
            self.render_problem(key, compiled.line, exc, context)
            return
        source = self.i.sources[self.owner(key)]
        speakable = [slot for slot in rendered.slots if slot.speakable]
        trailing = rendered.texts[-1].strip() if rendered.slots else ""
        problem = None
        if part or kind in ("judgement", "question"):
            if rendered.slots:
                problem = "fixed text and judgement or question prompts take no [[slots]]"
        elif kind == "note" and not rendered.slots:
            problem = "a note needs at least one [[NAME]] slot: each completion is stored"
        elif kind == "step" and rendered.slots and not speakable:
            problem = "nothing to send: end the prompt with a [[reply]] slot"
        elif trailing:
            problem = f"text after the last slot is never read by the model: {trailing[:40]!r}"
        if problem:
            self.problems.append(Problem(source.file, compiled.line, problem))

    def template_tests(self) -> None:
        """The `{% if %}` tests of every template and partial, checked like conditions."""
        types, env = name_types(self.i), self.i.templates.env
        for key, compiled in self.i.compiled.items():
            source = self.i.sources[self.owner(key)]
            for line, message in template_test_problems(env, compiled.source, types):
                where = compiled.line + line - 1 if compiled.line else None
                self.problems.append(Problem(source.file, where, message))
        for name, text in self.i.partials.items():
            partial = self.i.sources[f"partial:{name}"]
            if partial.file.startswith(str(self.i.folder)):  # the shared ones are checked once
                for line, message in template_test_problems(env, text, types):
                    self.problems.append(Problem(partial.file, line, message))

    def render_problem(
        self, key: str, first: int | None, exc: BaseException, context: dict[str, Any]
    ) -> None:
        partial, line = error_location(exc)
        owner = self.owner(key)
        source = self.i.sources[f"partial:{partial}"] if partial else self.i.sources[owner]
        where = line if partial else (first + line - 1 if first and line else first)
        if isinstance(exc, jinja2.TemplateNotFound):
            message = f"no partial named {exc.name!r} (partials/ here, or prompts/partials/)"
        elif isinstance(exc, jinja2.UndefinedError):
            message = undefined(str(exc.message), source.line_text(where), context)
        elif isinstance(exc, jinja2.TemplateSyntaxError):
            message = f"template syntax: {exc.message}"
        elif isinstance(exc, jinja2.exceptions.SecurityError):
            message = f"not allowed in a template: {exc}"
        else:
            message = f"the template fails: {exc}"
        self.problems.append(Problem(source.file, where, message))

    def owner(self, key: str) -> str:
        """The source key of a compiled template (a form's prompt may be in intervention.yaml)."""
        kind, slug = key.split(":")[:2]
        return self.i.form_source(slug)[0] if kind == "form" else _owner(key)

    def graph(self) -> None:
        """Steps nothing leads to (from the root, the session start, an interrupt or a
        decision option's `start:`)."""
        config = self.i.config
        if self.i.unreadable or (config.root and config.root not in self.i.steps):
            return  # where an unreadable step leads is unknown; a wrong root is its own problem
        starts = [config.root, *self.i.interrupts()]
        starts += [o.start for d in self.i.decisions.values() for o in d.options if o.start]
        if config.sessions:
            starts.append(config.sessions.resume_at)
        reached: set[str] = set()
        frontier = [s for s in starts if s in self.i.steps]
        while frontier:
            slug = frontier.pop()
            if slug not in reached:
                reached.add(slug)
                frontier += [t.to for t in self.i.steps[slug].transitions if t.to in self.i.steps]
        for slug in self.i.steps:
            if slug not in reached:
                start = f"the root step {config.root!r}" if config.root else "anywhere (no `root`)"
                self.add(
                    f"step:{slug}", ("title",), f"step {slug!r} cannot be reached from {start}"
                )


def undefined(message: str, line: str, context: dict[str, Any]) -> str:
    """ "unknown name 'participant.nmae'; did you mean 'participant.name'?" from jinja2's
    "'dict object' has no attribute 'nmae'" and the line it happened on."""
    top = re.search(r"'([^']+)' is undefined", message)
    if top:
        return "template: " + references.unknown("variable", top[1], context)
    attribute = re.search(r"has no attribute '([^']+)'", message)
    if attribute is None:
        return f"template: unknown variable ({message})"
    name = attribute[1]
    found = re.search(r"([A-Za-z_][\w.]*)\." + re.escape(name) + r"\b", line)
    if found is None:
        return f"template: unknown variable {name!r}"
    parent: Any = context
    for key in found[1].split("."):
        parent = parent.get(key) if isinstance(parent, dict) else None
    known = [f"{found[1]}.{key}" for key in parent] if isinstance(parent, dict) else []
    return "template: " + references.unknown("variable", f"{found[1]}.{name}", known)


def _owner(key: str) -> str:
    """The source key of a compiled template key ("step:a:say:0" -> "step:a")."""
    return ":".join(key.split(":")[:2])
