"""Reading an intervention folder: intervention.yaml, one markdown file per primitive (YAML
front matter over a Jinja2 body), and shared partials. The only part that touches files.

Layout: `intervention.yaml`; `steps/`, `judgements/`, `notes/`, `questions/` (the folder gives
the kind; elsewhere a `kind:` key does); `decisions/` (decision points, docs/decisions.md);
`partials/` for `{% include %}`. A file's slug is its name without `.md`. Problems are
collected, with file and line, rather than raised one by one.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import jinja2
import yaml
from frontmatter.default_handlers import YAMLHandler
from pydantic import ValidationError

from bot.core.author_errors import closest_branches, worded
from bot.interventions.language.decisions_format import Decision
from bot.interventions.language.decisions_read import decision_from
from bot.interventions.language.format import KINDS, Configuration, Form, Strict
from bot.interventions.language.intervention import Compiled, Intervention, Source
from bot.interventions.language.libraries import (
    Document,
    Library,
    document_problems,
    folder_documents,
)
from bot.interventions.language.problems import InterventionError, Problem
from bot.interventions.language.templates import SlotError, TemplateSet
from bot.interventions.language.yaml_slips import repair, syntax_problem

CONFIG = "intervention.yaml"
FOLDERS = {"steps": "step", "judgements": "judgement", "notes": "note", "questions": "question"}
PARTIALS = "partials"
DECISIONS = "decisions"
FORMS = "forms"
SHARED_PARTIALS = Path(__file__).resolve().parents[3] / "prompts" / "partials"
STEP_SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
NAME_SLUG = re.compile(r"^[a-z][a-z0-9_]*$")  # judgements and questions appear in conditions


def load_intervention(folder: Path | str) -> Intervention:
    """The intervention in `folder`; InterventionError lists every problem found reading it."""
    intervention, problems = read_intervention(folder)
    if problems or intervention is None:
        raise InterventionError(problems)
    return intervention


def read_intervention(
    folder: Path | str, keep_going: bool = False
) -> tuple[Intervention | None, list[Problem]]:
    """The intervention (None if it cannot be built) and the problems found reading it. With
    `keep_going` (the validator), an unreadable intervention.yaml is replaced by an empty one
    (and CONFIG is in `unreadable`) so that every other file is still checked."""
    reader = _Reader(Path(folder), keep_going)
    intervention = reader.read()
    slips = [Problem(file, line, said) for file, found in reader.slipped for line, said in found]
    return intervention, reader.problems + slips


def parse_file(
    text: str, file: str, slips: list[tuple[int, str]] | None = None
) -> tuple[dict[str, Any], Source, str]:
    """Front matter, where things are, and the body; _Unreadable(line) if it cannot be read.
    With `slips`, the slips YAML lets through (yaml_slips) are repaired and listed there."""
    handler = YAMLHandler()
    if not handler.detect(text):
        return {}, Source(file, {}, 1), text
    front, body = handler.split(text)
    front_start = text.find(front, 3)
    meta, lines = parse_yaml(front, text.count("\n", 0, front_start) + 1, slips)
    body_start = text.find(body, front_start + len(front))
    return meta, Source(file, lines, text.count("\n", 0, body_start) + 1), body


def parse_yaml(
    text: str, first: int, slips: list[tuple[int, str]] | None = None
) -> tuple[dict[str, Any], dict[tuple[Any, ...], int]]:
    """A YAML mapping and the file line of each key, for text whose line 0 is file line
    `first`. With `slips`, the slips YAML lets through (yaml_slips) are repaired and listed
    there as (file line, message)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if slips is not None:
            slips += repair(node, first)
        meta = yaml.SafeLoader("").construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first + mark.line if mark else first
        if isinstance(exc, yaml.MarkedYAMLError):
            raise _Unreadable(line, syntax_problem(exc, text)) from None
        raise _Unreadable(line, f"invalid YAML: {exc}") from None
    if meta is None:
        return {}, {}
    if not isinstance(meta, dict):
        raise _Unreadable(first, "expected `key: value` lines")
    return meta, key_lines(node, first)


class _Unreadable(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


def key_lines(node: yaml.Node | None, first: int, path: tuple[Any, ...] = ()) -> dict:
    """The file line of every key and list item under `node`, by key path."""
    lines: dict[tuple[Any, ...], int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            here = (*path, key.value)
            lines[here] = first + key.start_mark.line
            lines.update(key_lines(value, first, here))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            here = (*path, index)
            lines[here] = first + item.start_mark.line
            lines.update(key_lines(item, first, here))
    return lines


class _Reader:
    def __init__(self, folder: Path, keep_going: bool = False) -> None:
        self.folder, self.keep_going = folder, keep_going
        self.problems: list[Problem] = []
        self.sources: dict[str, Source] = {}
        self.found: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}
        self.bodies: dict[str, str] = {}
        self.unreadable: set[str] = set()
        self.decisions: dict[str, Decision] = {}
        self.digest = hashlib.sha256()
        self.slipped: list[tuple[str, list[tuple[int, str]]]] = []

    def problem(self, source: Source | str, line: int | None, message: str) -> None:
        file = source.file if isinstance(source, Source) else source
        self.problems.append(Problem(file, line, message))

    def slips(self, file: str) -> list[tuple[int, str]]:
        """A list the YAML slips of `file` go into, each reported as a problem of its own."""
        found: list[tuple[int, str]] = []
        self.slipped.append((file, found))
        return found

    def read(self) -> Intervention | None:
        config_path = self.folder / CONFIG
        if not self.folder.is_dir():
            self.problem(str(self.folder), None, "no such folder")
            return None
        if not config_path.is_file():
            self.problem(str(self.folder), None, f"no {CONFIG} in this folder")
            return None
        config = self.read_config(config_path)
        forms = self.read_forms(config)
        partials = self.read_partials()
        libraries = self.read_libraries(config)
        shelves = [(self.folder / lib.spec.path).resolve() for lib in libraries.values()]
        for path in sorted(self.folder.rglob("*.md")):
            relative = path.relative_to(self.folder)
            readme = path.name.lower() == "readme.md"
            shelved = any(path.resolve().is_relative_to(shelf) for shelf in shelves)
            if not path.is_file() or relative.parts[0] == PARTIALS or readme or shelved:
                continue
            if relative.parts[0] == DECISIONS and len(relative.parts) > 1:
                self.read_decision(path)
            else:
                self.read_primitive(path, relative)
        if config is None and not self.keep_going:
            return None
        if config is None:
            config = Configuration.model_construct(title="", version="")
            self.unreadable.add(CONFIG)
        templates = TemplateSet(partials)
        for name, error in templates.partial_errors.items():
            self.problem(self.partial_file(name), error.line, str(error))
        compiled = self.compile_all(templates)
        intervention = Intervention(
            slug=self.folder.resolve().name,
            folder=self.folder,
            config=config,
            steps=self.found["step"],
            judgements=self.found["judgement"],
            notes=self.found["note"],
            questions=self.found["question"],
            partials=partials,
            sources=self.sources,
            templates=templates,
            compiled=compiled,
            digest=self.digest.hexdigest(),
            unreadable=self.unreadable,
            forms=forms,
            libraries=libraries,
            decisions=self.decisions,
        )
        for name, decision in self.decisions.items():
            source = self.sources[f"decision:{name}"]
            for n, option in enumerate(decision.options):
                if option.send is not None:  # rendered when the option is drawn
                    key, line = (
                        f"decision:{name}:send:options.{n}",
                        source.line("options", n, "send"),
                    )
                    self.compile(templates, compiled, key, option.send, source, line)
        for name, form in forms.items():
            if form.prompt is not None:
                key, prefix = intervention.form_source(name)
                source = self.sources[key]
                line = source.line(*prefix, "prompt")
                self.compile(templates, compiled, f"form:{name}:prompt", form.prompt, source, line)
        for key, keys, action in intervention.actions():
            source = self.sources[key]
            where = ".".join(str(part) for part in keys)
            if action.send is not None:  # a template like any other, rendered when it runs
                line = source.line(*keys, "send")
                self.compile(templates, compiled, f"{key}:send:{where}", action.send, source, line)
            if action.retrieve is not None and action.query is not None:
                line = source.line(*keys, "query")
                self.compile(
                    templates, compiled, f"{key}:query:{where}", action.query, source, line
                )
        for slug, step in self.found["step"].items():
            source = self.sources[f"step:{slug}"]
            for n, retrieve in enumerate(step.retrieve):
                line = source.line("retrieve", n, "query")
                key = f"step:{slug}:query:retrieve.{n}"
                self.compile(templates, compiled, key, retrieve.query, source, line)
        return intervention

    def read_libraries(self, config: Configuration | None) -> dict[str, Library]:
        """Each declared library's documents, in id order; a missing or empty folder, and a
        document without an id or title, or with an id used before, is a problem."""
        libraries: dict[str, Library] = {}
        config_source = self.sources["config"]
        for name, spec in (config.libraries if config else {}).items():
            folder = self.folder / spec.path
            line = config_source.line("libraries", name, "path")
            files = folder_documents(folder)
            if not folder.resolve().is_relative_to(self.folder.resolve()):
                message = f"library {name!r}: {spec.path} is outside the intervention's folder"
                self.problem(config_source, line, message)
                files = []
            elif not folder.is_dir():
                self.problem(config_source, line, f"library {name!r}: no folder {spec.path}")
            elif not files:
                self.problem(config_source, line, f"library {name!r}: {spec.path} has no documents")
            documents: list[Document] = []
            seen: dict[str, str] = {}
            for path in files:
                document = self.read_document(path, seen)
                if document is not None:
                    seen[document.id] = document.file
                    documents.append(document)
            documents.sort(key=lambda doc: doc.id)
            model = config.models.get(spec.model, spec.model) if config and spec.model else None
            libraries[name] = Library(name, spec, documents, model)
        return libraries

    def read_document(self, path: Path, seen: dict[str, str]) -> Document | None:
        file = str(path)
        try:
            meta, source, body = parse_file(self.text(path), file, self.slips(file))
        except _Unreadable as exc:
            self.problem(file, exc.line, str(exc))
            return None
        problems = document_problems(meta, seen)
        for key, message in problems:
            self.problem(source, source.line(key) if key else source.line("id"), message)
        if problems:
            return None
        extra = {k: v for k, v in meta.items() if k not in ("id", "title")}
        extra["tags"] = [str(tag) for tag in meta.get("tags") or []]
        title = str(meta["title"]).strip()
        return Document(
            str(meta["id"]).strip(), title, body.strip(), extra, file, source.line("id")
        )

    def text(self, path: Path) -> str:
        """The file's text; _Unreadable if it cannot be read or is not UTF-8."""
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise _Unreadable(1, f"cannot read the file: {exc.strerror or exc}") from None
        self.digest.update(str(path.relative_to(self.folder)).encode() + b"\0" + data + b"\0")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise _Unreadable(line, "not UTF-8 text (save the file as UTF-8)") from None

    def read_config(self, path: Path) -> Configuration | None:
        file = str(path)
        self.sources["config"] = Source(file, {}, 1)
        try:
            meta, lines = parse_yaml(self.text(path), 1, self.slips(file))
        except _Unreadable as exc:
            self.problem(file, exc.line, str(exc))
            return None
        source = Source(file, lines, 1)
        self.sources["config"] = source
        return self.validated(Configuration, meta, source)

    def read_forms(self, config: Configuration | None) -> dict[str, Form]:
        """Forms under `forms:` in intervention.yaml, then one per forms/<name>.yaml file."""
        forms = dict(config.forms) if config is not None else {}
        base = self.folder / FORMS
        for path in sorted(base.glob("*.y*ml")) if base.is_dir() else ():
            file, name = str(path), path.stem
            if not NAME_SLUG.match(name):
                self.problem(file, None, f"the file name {name!r} must use a-z, 0-9 and _")
            if name in forms:
                self.problem(file, None, f"form {name!r} is also declared in {CONFIG}")
                continue
            try:
                meta, lines = parse_yaml(self.text(path), 1, self.slips(file))
            except _Unreadable as exc:
                self.problem(file, exc.line, str(exc))
                self.unreadable.add(name)
                continue
            source = Source(file, lines, 1)
            self.sources[f"form:{name}"] = source
            form = self.validated(Form, meta, source)
            if form is None:
                self.unreadable.add(name)
            else:
                forms[name] = form
        return forms

    def read_partials(self) -> dict[str, str]:
        """Shared partials (prompts/partials/), then the intervention's own, which win."""
        partials: dict[str, str] = {}
        for base in (SHARED_PARTIALS, self.folder / PARTIALS):
            for path in sorted(base.rglob("*")) if base.is_dir() else ():
                if path.is_file():
                    name = path.relative_to(base).as_posix()
                    try:
                        own = base == self.folder / PARTIALS
                        text = self.text(path) if own else path.read_text()
                    except _Unreadable as exc:
                        self.problem(str(path), exc.line, str(exc))
                        continue
                    partials[name] = text
                    self.sources[f"partial:{name}"] = Source(str(path), {}, 1, True, text)
        return partials

    def partial_file(self, name: str) -> str:
        return self.sources[f"partial:{name}"].file

    def read_primitive(self, path: Path, relative: Path) -> None:
        file = str(path)
        try:
            text = self.text(path)
            meta, source, body = parse_file(text, file, self.slips(file))
        except _Unreadable as exc:
            self.problem(file, exc.line, str(exc))
            self.unreadable.add(path.stem)  # its references are not "unknown": it has a problem
            return
        kind = meta.get("kind") or FOLDERS.get(relative.parts[0] if len(relative.parts) > 1 else "")
        if kind not in KINDS:
            known = ", ".join(KINDS)
            self.problem(source, source.line("kind"), f"unknown kind {kind!r}; known: {known}")
            return
        slug = path.stem
        pattern = STEP_SLUG if kind == "step" else NAME_SLUG
        if not pattern.match(slug):
            allowed = "a-z, 0-9, - and _" if kind == "step" else "a-z, 0-9 and _ (it is a name)"
            self.problem(source, None, f"the file name {slug!r} must use {allowed}")
        other = next((k for k in KINDS if slug in self.found[k]), None)
        if other is not None:
            first = self.sources[f"{other}:{slug}"].file
            self.problem(source, None, f"the slug {slug!r} is also used by {first}")
            return
        model = self.validated(KINDS[kind], meta, source)
        source = replace(source, has_body=bool(body.strip()), text=text)
        self.sources[f"{kind}:{slug}"] = source
        self.bodies[f"{kind}:{slug}"] = body
        if model is not None:
            self.found[kind][slug] = model
        else:
            self.unreadable.add(slug)

    def read_decision(self, path: Path) -> None:
        """A decision file (docs/decisions.md): its body is for the researchers, not read."""
        file = str(path)
        try:
            text = self.text(path)
            meta, source, _ = parse_file(text, file, self.slips(file))
        except _Unreadable as exc:
            self.problem(file, exc.line, str(exc))
            self.unreadable.add(path.stem)
            return
        source = replace(source, text=text)
        self.sources[f"decision:{path.stem}"] = source
        decision, problems = decision_from(file, meta, source)
        self.problems += problems
        if decision is not None:
            self.decisions[path.stem] = decision
        else:
            self.unreadable.add(path.stem)

    def validated(self, model: type[Strict], meta: dict[str, Any], source: Source) -> Any:
        try:
            return model.model_validate(meta)
        except ValidationError as exc:
            for error in closest_branches(exc.errors(include_url=False, include_input=False)):
                loc, message = worded(error)
                self.problem(source, source.line(*loc), message)
            return None

    def compile_all(self, templates: TemplateSet) -> dict[str, Compiled]:
        compiled: dict[str, Compiled] = {}
        for key, body in self.bodies.items():
            kind, slug = key.split(":", 1)
            source = self.sources[key]
            model = self.found[kind].get(slug)
            if body.strip():
                self.compile(templates, compiled, key, body, source, source.body_line)
            if kind == "step" and model is not None and model.say is not None:
                items = [model.say] if isinstance(model.say, str) else model.say
                for index, text in enumerate(items):
                    line = source.line("say", index) if len(items) > 1 else source.line("say")
                    self.compile(templates, compiled, f"{key}:say:{index}", text, source, line)
            if kind == "question" and model is not None:
                for part in ("text", "clarify", "thanks"):
                    text = getattr(model, part)
                    if text:
                        line = source.line(part)
                        self.compile(templates, compiled, f"{key}:{part}", text, source, line)
        return compiled

    def compile(
        self,
        templates: TemplateSet,
        compiled: dict[str, Compiled],
        key: str,
        text: str,
        source: Source,
        first_line: int | None,
    ) -> None:
        """Compile one template; problems point at the file line (a partial's own, if there)."""
        start = len(templates.slots)
        try:
            template = templates.compile(text)
        except SlotError as exc:
            self.problem(source, _at(first_line, exc.line), str(exc))
            return
        except jinja2.TemplateSyntaxError as exc:
            self.problem(source, _at(first_line, exc.lineno), f"template syntax: {exc.message}")
            return
        compiled[key] = Compiled(template, tuple(templates.slots[start:]), first_line, text)


def _at(first_line: int | None, line: int | None) -> int | None:
    """The file line of line `line` of a template that starts at file line `first_line`."""
    if first_line is None or line is None:
        return first_line
    return first_line + line - 1


__all__ = ["InterventionError", "load_intervention", "read_intervention", "parse_file"]
