"""The codebook of an export: every variable an intervention declares (questions, judgement
result fields, profile and intake fields, notes, form fields), with its type, options, unit and
range, the file and line that defines it, and where it appears in the export; and the columns
of every file (participants, allocations, messages, results, retrievals, forms, events), typed
and described. Written as codebook.json and codebook.md; an export puts in the files' columns as
it wrote them (`with_files`: a pseudonymised export's, and each study's per-arm and baseline
columns).

Extension point: a *source* is a function `(Intervention) -> Iterable[Variable]`; `SOURCES`
lists them in the order they are written, and `register(source)` adds one (forms add their
fields this way). Analysis files add their columns to `FILES`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bot.instruments.administration import attach
from bot.interventions.language.format import FieldSpec
from bot.interventions.language.intervention import Intervention, Source
from bot.interventions.language.loader import read_intervention
from bot.reporting.columns import (
    ALLOCATION_FILE,
    BROADCAST_FILE,
    EVENT_FILE,
    MESSAGE_FILE,
    PARTICIPANT_FILE,
    described,
)
from bot.reporting.decision_file import DECISION_COLUMNS, UNDECLARED
from bot.reporting.evaluation_rows import EVALUATION_COLUMNS
from bot.reporting.form_results import FORM_COLUMNS
from bot.reporting.instrument_rows import INSTRUMENT_COLUMNS
from bot.reporting.results import RESULT_COLUMNS, RETRIEVAL_COLUMNS, Column


@dataclass(frozen=True)
class Variable:
    """One variable: `name` as conditions and templates write it (`measurements.mood`),
    `kind` (question, judgement, profile, intake, note, ...), the typed language's `type`,
    `options` (value -> meaning), `unit`, `min`/`max`, the defining `file` (relative to the
    interventions folder) and `line`, and `appears_in` (the export file and column)."""

    intervention: str
    name: str
    kind: str
    type: str
    description: str = ""
    options: Mapping[str, str] = field(default_factory=dict)
    unit: str | None = None
    min: float | None = None
    max: float | None = None
    optional: bool = False
    file: str = ""
    line: int | None = None
    appears_in: str = ""


Source_ = Callable[[Intervention], Iterable[Variable]]


def where(intervention: Intervention, source: Source, *path: Any) -> tuple[str, int | None]:
    """The file (relative to the interventions folder, e.g. `demo/questions/mood.md`) and the
    line of `path` in it."""
    file = source.file
    folder = str(intervention.folder).rstrip("/") + "/"
    relative = file[len(folder) :] if file.startswith(folder) else file
    return f"{intervention.slug}/{relative}", source.line(*path)


def typed(
    intervention: Intervention,
    name: str,
    kind: str,
    spec: FieldSpec,
    place: tuple[str, int | None],
    appears_in: str,
) -> Variable:
    """A variable declared with the typed language's field declaration."""
    return Variable(
        intervention=intervention.slug,
        name=name,
        kind=kind,
        type=spec.type,
        description=spec.description or "",
        options=spec.choices() if spec.type == "choice" else {},
        unit=spec.unit,
        min=spec.min,
        max=spec.max,
        optional=spec.optional,
        file=place[0],
        line=place[1],
        appears_in=appears_in,
    )


def questions(intervention: Intervention) -> Iterable[Variable]:
    for slug, question in intervention.questions.items():
        source = intervention.source("question", slug)
        file, line = where(intervention, source, "text")
        kind = {"options": "choice", "scale": "int", "text": "text", "yesno": "bool"}[
            question.answer
        ]
        yield Variable(
            intervention=intervention.slug,
            name=f"measurements.{slug}",
            kind="question",
            type=kind,
            description=question.description or _untemplated(question.text, intervention.partials),
            options={str(o): "" for o in question.options},
            min=question.min if question.answer == "scale" else None,
            max=question.max if question.answer == "scale" else None,
            file=file,
            line=line,
            appears_in=f"results.csv value, value_code, value_label (question == {slug})",
        )


def _untemplated(text: str, partials: Mapping[str, str]) -> str:
    """A question's text for a question that has no `description`: each `{% include %}`
    replaced by its partial's text, other template markup (`{{ name }}`) left out."""

    def included(match: re.Match[str]) -> str:
        return _untemplated(partials.get(match[1], ""), {}) if partials else ""

    return " ".join(_MARKUP.sub(" ", _INCLUDE.sub(included, text)).split())


_INCLUDE = re.compile(r"\{%-?\s*include\s+['\"]([^'\"]+)['\"]\s*-?%\}")
_MARKUP = re.compile(r"\{%.*?%\}|\{\{.*?\}\}|\{#.*?#\}", re.S)


def judgements(intervention: Intervention) -> Iterable[Variable]:
    for slug, judgement in intervention.judgements.items():
        source = intervention.source("judgement", slug)
        for name, spec in (judgement.result or {}).items():
            place = where(intervention, source, "result", name)
            column = f"participants.csv judgements ({slug}.{name}, the latest)"
            yield typed(intervention, f"judgements.{slug}.{name}", "judgement", spec, place, column)


def profile(intervention: Intervention) -> Iterable[Variable]:
    config = intervention.sources.get("config")
    if config is None:
        return
    intake = intervention.config.intake.fields if intervention.config.intake else {}
    for name, spec in intake.items():
        place = where(intervention, config, "intake", "fields", name)
        yield typed(intervention, f"profile.{name}", "intake", spec, place, _profile(name))
    for name, spec in intervention.config.profile.items():
        if name not in intake:
            place = where(intervention, config, "profile", name)
            yield typed(intervention, f"profile.{name}", "profile", spec, place, _profile(name))


def _profile(name: str) -> str:
    return f"participants.csv profile ({name})"


NOTE_TYPES = {"pick": "choice", "bool": "bool", "int": "int"}


def notes(intervention: Intervention) -> Iterable[Variable]:
    """Each note slot: text, or the type of a `[[pick:…]]`, `[[bool:…]]`, `[[int:…]]` slot."""
    for slug in intervention.notes:
        source = intervention.source("note", slug)
        compiled = intervention.template(f"note:{slug}")
        file, line = where(intervention, source)
        for slot in compiled.slots if compiled else ():
            yield Variable(
                intervention=intervention.slug,
                name=f"notes.{slot.name}",
                kind="note",
                type=NOTE_TYPES.get(slot.kind, "text"),
                description=intervention.notes[slug].title,
                options={option: "" for option in slot.options},
                file=file,
                line=compiled.line if compiled and compiled.line else line,
                appears_in=f"participants.csv notes ({slot.name}, the latest)",
            )


def forms(intervention: Intervention) -> Iterable[Variable]:
    """Each declared field of each form (fields the model adds at run time are in forms.csv,
    with `added` true and their type)."""
    for name, form in intervention.forms.items():
        key, prefix = intervention.form_source(name)
        source = intervention.sources[key]
        for field_key, spec in form.fields.items():
            place = where(intervention, source, *prefix, "fields", field_key)
            column = f"forms.csv value (form == {name}, field == {field_key})"
            variable = typed(
                intervention, f"forms.{name}.answers.{field_key}", "form", spec, place, column
            )
            extra = [f"domain {spec.domain}"] if spec.domain else []
            extra += ["critical"] if spec.critical else []
            described = "; ".join([variable.description, *extra]).strip("; ")
            yield Variable(**{**_plain(variable), "description": described})


def decisions(intervention: Intervention) -> Iterable[Variable]:
    """Each decision's options (their probabilities: `p_<option>` in decisions.csv), its
    moderators (`mod_<name>`) and its proximal outcome (`outcome_value`)."""
    for name, decision in intervention.decisions.items():
        source = intervention.sources[f"decision:{name}"]
        rows = f"(decision == {name})"
        for n, option in enumerate(decision.options):
            does = f"sends {option.send!r}" if option.send else "does nothing"
            does = f"starts step {option.start}" if option.start else does
            yield Variable(
                intervention=intervention.slug,
                name=f"decisions.{name}.{option.name}",
                kind="decision option",
                type="number",
                description=f"the probability of option {option.name}, which {does}",
                min=decision.bounds[0],
                max=decision.bounds[1],
                file=(place := where(intervention, source, "options", n, "probability"))[0],
                line=place[1],
                appears_in=f"decisions.csv p_{option.name} {rows}",
            )
        for moderator, spec in decision.moderators.items():
            yield Variable(
                intervention=intervention.slug,
                name=f"decisions.{name}.{moderator}",
                kind="moderator",
                type=spec.type,
                description=spec.description or f"`{spec.value}` at the point",
                file=(place := where(intervention, source, "moderators", moderator))[0],
                line=place[1],
                appears_in=f"decisions.csv mod_{moderator} {rows}",
            )
        outcome = decision.outcome
        yield Variable(
            intervention=intervention.slug,
            name=f"decisions.{name}.outcome",
            kind="outcome",
            type="bool" if outcome.kind() == "yes/no" else "number",
            description=f"the proximal outcome ({outcome.measure}: "
            f"{getattr(outcome, outcome.measure or 'reply')})",
            file=(place := where(intervention, source, "outcome"))[0],
            line=place[1],
            appears_in=f"decisions.csv outcome_value {rows}",
        )


_KINDS = {"integer": "int", "yes/no": "bool"}


def instruments(intervention: Intervention) -> Iterable[Variable]:
    """`instruments.<name>.last.*` (the last completed administration) and `.week.*`, each with
    the instruments.csv column that holds it (rows of that instrument)."""
    config = intervention.sources.get("config")
    if intervention.instruments is None or config is None:
        return
    names = intervention.config.instruments
    for name, spec in intervention.instruments.types().items():
        instrument = name.split(".")[1]
        file, line = where(intervention, config, "instruments", names.index(instrument))
        low, high = spec.bounds
        yield Variable(
            intervention=intervention.slug,
            name=name,
            kind="instrument",
            type=_KINDS.get(spec.kind, spec.kind),
            description=_result_description(name),
            options={option: "" for option in spec.options},
            min=low,
            max=high,
            optional=spec.optional,
            file=file,
            line=line,
            appears_in=_result_column(name, instrument),
        )


def _result_column(name: str, instrument: str) -> str:
    """Where `instruments.<instrument>.last.<rest>` is in the export."""
    rest = name.split(".", 3)[3]
    rows = f"(instrument == {instrument}, status == completed"
    if name.split(".")[2] == "week":
        return f"not a column: from instruments.csv total {rows}, ended in the 7 days before)"
    rows += "; `last` is the latest such row)"
    column = {"administered_at": "ended_utc"}.get(rest, rest)
    if rest.startswith("items."):
        column = f'answers["{rest[6:]}"]'
    elif rest.startswith("subscales."):
        column = f'subscales["{rest.split(".")[1]}"]["{rest.split(".")[2]}"]'
    return f"instruments.csv {column} {rows}"


def _result_description(name: str) -> str:
    parts = name.split(".")
    what, rest = parts[2], ".".join(parts[3:])
    if what == "week":
        figure = {"count": "how many", "mean": "the mean total of", "min": "the lowest total of"}
        return (
            f"{figure.get(rest, 'the highest total of')} the administrations completed in the 7 "
            "days before it is read"
        )
    column = next((c for c in INSTRUMENT_COLUMNS if c.name == rest), None)
    if column is not None:
        return f"the last completed administration: {column.description}"
    if rest == "administered_at":
        return "when the last administration was completed (ISO 8601 with the UTC offset)"
    if rest.startswith("items."):
        return (
            f"the last completed administration's answer to item {rest[6:]}, as recorded "
            "(a scale code or number, yes/no, a choice's code; none if skipped)"
        )
    return f"the last completed administration: subscale {rest.split('.')[1]}'s {parts[-1]}"


def checklist(intervention: Intervention) -> Iterable[Variable]:
    """Each item of the fidelity review checklist (`review_checklist:`): evaluations.csv's
    `check_<key>`, 1 when the reviewer ticked it."""
    source = intervention.sources["config"]
    for n, item in enumerate(intervention.config.review_checklist):
        yield Variable(
            intervention=intervention.slug,
            name=f"evaluations.{item.key}",
            kind="checklist item",
            type="bool",
            description=f"{item.label} (1: ticked by the reviewer, 0: not)",
            file=(place := where(intervention, source, "review_checklist", n))[0],
            line=place[1],
            appears_in=f"evaluations.csv check_{item.key}",
        )


SOURCES: list[Source_] = [questions, judgements, profile, notes, forms, decisions, instruments]
SOURCES.append(checklist)
FILES: dict[str, Sequence[Column]] = {
    "participants.csv": PARTICIPANT_FILE,
    "allocations.csv": ALLOCATION_FILE,
    "broadcasts.csv": BROADCAST_FILE,
    "messages.csv": MESSAGE_FILE,
    "results.csv": RESULT_COLUMNS,
    "retrievals.csv": RETRIEVAL_COLUMNS,
    "forms.csv": FORM_COLUMNS,
    "decisions.csv": (*DECISION_COLUMNS, UNDECLARED),
    "instruments.csv": INSTRUMENT_COLUMNS,
    "evaluations.csv": EVALUATION_COLUMNS,
    "events.csv": EVENT_FILE,
}


def register(source: Source_) -> Source_:
    """Add a source of variables (usable as a decorator)."""
    if source not in SOURCES:
        SOURCES.append(source)
    return source


def codebook(interventions: Sequence[Intervention]) -> dict[str, Any]:
    """The codebook as plain data (what codebook.json holds)."""
    variables = [
        _plain(variable)
        for intervention in interventions
        for source in SOURCES
        for variable in source(intervention)
    ]
    files = {name: _columns(columns) for name, columns in FILES.items()}
    return {
        "interventions": [
            {"slug": i.slug, "title": i.config.title, "revision": i.revision} for i in interventions
        ],
        "files": files,
        "variables": variables,
    }


def _columns(columns: Iterable[Column]) -> list[dict[str, Any]]:
    return [
        {
            "name": c.name,
            "type": c.type,
            "description": c.description,
            **({"options": list(c.options)} if c.options else {}),
        }
        for c in columns
    ]


def with_files(documents: Mapping[str, str], files: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """`documents` with codebook.json and codebook.md (if among them) describing `files`
    (file name -> its columns, as an export wrote them) in place of FILES."""
    if "codebook.json" not in documents:
        return dict(documents)
    book = json.loads(documents["codebook.json"])
    known = {Path(name).stem: columns for name, columns in FILES.items()}
    book["files"] = {
        name: _columns(described(name, columns, known.get(Path(name).stem, ())))
        for name, columns in files.items()
    }
    written = {"codebook.json": as_json(book)}
    if "codebook.md" in documents:
        written["codebook.md"] = as_markdown(book)
    return {**documents, **written}


def question_options(documents: Mapping[str, str]) -> dict[str, dict[str, tuple[str, ...]]]:
    """Each options question's options, in order (intervention -> question slug -> options),
    from the codebook among `documents` (none without one): results.csv's `value_code` is an
    answer's place among them, as the codebook lists them."""
    if "codebook.json" not in documents:
        return {}
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    for v in json.loads(documents["codebook.json"]).get("variables", []):
        if v.get("kind") == "question" and v.get("type") == "choice":
            slug = str(v["name"]).removeprefix("measurements.")
            found.setdefault(v["intervention"], {})[slug] = tuple(v.get("options") or {})
    return found


def decision_names(documents: Mapping[str, str]) -> list[str]:
    """decisions.csv's per-decision columns from the codebook among `documents` (none
    without one): each option's `p_<option>`, then each moderator's `mod_<name>`, in the
    order the decision files declare them."""
    if "codebook.json" not in documents:
        return []
    variables = json.loads(documents["codebook.json"]).get("variables", [])
    prefix = {"decision option": "p_", "moderator": "mod_"}
    names = [
        prefix[v["kind"]] + str(v["name"]).rsplit(".", 1)[1]
        for kind in prefix
        for v in variables
        if v.get("kind") == kind
    ]
    return list(dict.fromkeys(names))


def checklist_names(documents: Mapping[str, str]) -> list[str]:
    """evaluations.csv's `check_<key>` columns from the codebook among `documents` (none
    without one), in the order the interventions declare them."""
    if "codebook.json" not in documents:
        return []
    variables = json.loads(documents["codebook.json"]).get("variables", [])
    names = [
        "check_" + str(v["name"]).removeprefix("evaluations.")
        for v in variables
        if v.get("kind") == "checklist item"
    ]
    return list(dict.fromkeys(names))


def documents(root: Path, slugs: Iterable[str]) -> dict[str, str]:
    """codebook.json and codebook.md for the interventions `slugs` under `root` (those of the
    participants exported). One that cannot be read is listed as unavailable, with why."""
    loaded: list[Intervention] = []
    unavailable: dict[str, str] = {}
    for slug in sorted(set(slugs)):
        intervention, problems = read_intervention(root / slug)
        if intervention is not None and not problems:
            intervention, problems = attach(intervention)  # its instruments' result names
        if intervention is None or problems:
            unavailable[slug] = str(problems[0]) if problems else "cannot be read"
        else:
            loaded.append(intervention)
    book = {**codebook(loaded), "unavailable": unavailable}
    return {"codebook.json": as_json(book), "codebook.md": as_markdown(book)}


def _plain(variable: Variable) -> dict[str, Any]:
    found = asdict(variable)
    found["options"] = dict(variable.options)
    return found


def as_json(book: Mapping[str, Any]) -> str:
    return json.dumps(book, ensure_ascii=False, indent=2) + "\n"


def as_markdown(book: Mapping[str, Any]) -> str:
    """codebook.md: the files' columns, then each intervention's variables, one table each."""
    lines = ["# Codebook", ""]
    lines += [
        "Types: text, int, number, bool (true/false), choice (one of the options), list (JSON "
        "list of text), date (YYYY-MM-DD), time (HH:MM), datetime (ISO 8601 with UTC offset), "
        "naive datetime (the participant's wall clock, YYYY-MM-DDTHH:MM:SS, no offset: one "
        "format in every row), json (an object or list). A blank cell is no value.",
        "",
        "Times: each `<x>_local` (with the participant's offset then) comes with `<x>_utc` "
        "and `<x>_local_naive`; read `_utc` columns with `pd.to_datetime(column, utc=True, "
        'format="ISO8601")` (a fraction of a second is written only when there is one).',
        "",
        "Formulas: in CSV files a text cell that starts with `=`, `+`, `-`, `@`, a tab or a "
        "carriage return, and is not a number, is written after a `'` so that a spreadsheet "
        "shows it rather than running it (OWASP's rule); strip a leading `'` from such text "
        "cells to read them as typed. Numbers (`-3`) and JSON Lines files are as they are.",
        "",
        "Pseudonymised exports: `study_code` stands for `participant_id`; phone numbers, names, "
        "message and provider ids are left out; names, phone numbers and e-mail addresses in "
        "free text read `[name]`, `[phone]`, `[email]`; media URLs read `[media]`.",
        "",
        "Studies: `arm` columns name the arm (arm codes for blinded studies are not applied here).",
        "",
    ]
    for name, columns in book["files"].items():
        lines += [f"## {name}", "", "| column | type | description |", "|---|---|---|"]
        for column in columns:
            kind = column["type"]
            if column.get("options"):
                kind += ": " + ", ".join(column["options"])
            lines.append(f"| `{column['name']}` | {kind} | {_cell(column['description'])} |")
        lines.append("")
    for intervention in book["interventions"]:
        slug = intervention["slug"]
        lines += [
            f"## {intervention['title']} (`{slug}`, revision {intervention['revision']})",
            "",
            "| variable | kind | type | options | unit / range | defined at | in the export |",
            "|---|---|---|---|---|---|---|",
        ]
        for v in (v for v in book["variables"] if v["intervention"] == slug):
            options = "; ".join(f"`{k}`" + (f" {m}" if m else "") for k, m in v["options"].items())
            lines.append(
                f"| `{v['name']}` | {v['kind']} | {v['type']} | {_cell(options)} | "
                f"{_range(v)} | {v['file']}:{v['line'] or ''} | {_cell(v['appears_in'])} |"
            )
        lines.append("")
    for slug, why in (book.get("unavailable") or {}).items():
        lines += [f"## `{slug}`: not described", "", f"It could not be read: {_cell(why)}", ""]
    return "\n".join(lines)


def _range(variable: Mapping[str, Any]) -> str:
    low, high = variable.get("min"), variable.get("max")
    span = f"{_num(low)}–{_num(high)}" if low is not None or high is not None else ""
    return " ".join(part for part in (variable.get("unit") or "", span) if part)


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")
