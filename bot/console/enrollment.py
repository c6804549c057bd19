"""Enrolling from the console: one participant by form, many from a CSV with a dry run first.

Each row, the form's and every CSV line's, is checked by `bot.services.enrollment.check`, the
rule set of the API and `tandem enroll`; the dry run shows what that check decided and the
confirmed run records exactly those enrollments. In a study the form shows the study's
baseline fields (bot.console.study_forms) and a CSV has a column for each; the arm is drawn
only when an enrollment is recorded, so neither the form nor the dry run can show the next one.
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
from typing import Any

from flask import g, redirect, render_template, request, url_for

from bot.console import enrollment_rules, study_forms
from bot.console.blueprint import console, services
from bot.console.guard import actor, requires
from bot.interventions.validation.catalogue import Catalogue
from bot.services import enrollment, welcome
from bot.services.blinding import shown_arm
from bot.services.enrollment import Checked, Enrolled
from bot.services.refusal import Refused
from bot.studies.catalogue import StudyCatalogue

log = logging.getLogger(__name__)
MAX_CSV_BYTES = 1_000_000
MAX_ROWS = 5000


@console.route("/enroll", methods=["GET", "POST"])
@requires("enroll")
def enroll() -> Any:
    catalogue = _studies()
    source = request.args if request.method == "GET" else request.form
    slug = source.get("study", services().settings.study or "").strip()
    study = catalogue.study(slug) if slug in study_forms.usable(catalogue) else None
    page: dict[str, Any] = {"studies": study_forms.usable(catalogue), "study": slug}
    page["inputs"] = study_forms.inputs(study) if study else []
    page["interventions"] = _catalogue().valid()  # a list to choose from, not a name to type
    page["default_intervention"] = services().settings.intervention
    if request.method == "GET":
        return render_template("console/enroll.html", given={"study": slug}, errors={}, **page)
    given = {name: request.form.get(name, "") for name in enrollment_rules.FIELDS}
    baseline = study_forms.given_baseline(study, request.form)
    given |= {study_forms.PREFIX + name: value for name, value in baseline.items()}
    try:
        done = enrollment.enroll(
            services().store,
            services().settings,
            _catalogue(),
            enrollment_rules.asked(given, baseline),
            source="console",
            actor=actor(),
            studies=catalogue,
        )
    except Refused as exc:
        errors = enrollment_rules.in_console_words(exc.problems)
        code = 409 if exc.kind == "conflict" else 400
        return render_template("console/enroll.html", given=given, errors=errors, **page), code
    log.info("console: participant %s enrolled", done.participant_id)
    return redirect(url_for("console.participant", participant_id=done.participant_id))


@console.route("/enroll/csv", methods=["GET", "POST"])
@requires("enroll")
def enroll_csv() -> Any:
    if request.method == "GET":
        return render_template("console/enroll_csv.html", rows=None, problem=None)
    content, problem = _content()
    if problem:
        return render_template("console/enroll_csv.html", rows=None, problem=problem), 400
    rows, problem = _check_rows(content)
    good = [r["checked"] for r in rows if r["checked"] is not None]
    fingerprint = _fingerprint(good)
    if request.form.get("confirm") != "yes" or problem:
        code = 400 if problem else 200
        return render_template(
            "console/enroll_csv.html",
            rows=rows,
            problem=problem,
            content=content,
            fingerprint=fingerprint,
            good=len(good),
        ), code
    if request.form.get("fingerprint") != fingerprint:
        stale = "The participants changed since the dry run; nothing was written. Check again."
        return render_template(
            "console/enroll_csv.html",
            rows=rows,
            problem=stale,
            content=content,
            fingerprint=fingerprint,
            good=len(good),
        ), 409
    try:
        quiet = welcome.rules(services().settings, _catalogue())
        done = enrollment.record(services().store, good, actor=actor(), quiet=quiet)
    except Refused as exc:
        return render_template("console/enroll_csv.html", rows=None, problem=exc.message), 409
    log.info("console: %d participants enrolled from a CSV", len(done))
    return render_template(
        "console/enroll_csv.html", rows=None, problem=None, done=len(done), who=_who(done)
    )


def _who(done: list[Enrolled]) -> list[dict[str, Any]]:
    """Who was enrolled, each with their arm as this staff member's role may see it."""
    settings, catalogue = services().settings, _studies()
    made = []
    for one in done:
        study = one.allocation.study if one.allocation else None
        arm = one.allocation.arm if one.allocation else None
        role = g.staff["role"]
        shown = shown_arm(role, study, arm, catalogue, settings.master_key)
        made.append({"id": one.participant_id, "phone": one.enrolled.phone, "study": study})
        made[-1]["arm"] = shown
    return made


def _content() -> tuple[str, str | None]:
    upload = request.files.get("file")
    raw = upload.read(MAX_CSV_BYTES + 1) if upload else request.form.get("content", "").encode()
    if not raw.strip():
        return "", "Choose a CSV file (its first line names the columns, e.g. phone,name)."
    if len(raw) > MAX_CSV_BYTES:
        return "", f"The file is larger than {MAX_CSV_BYTES // 1000} kB; split it."
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        return "", "The file is not UTF-8 text; save it as CSV UTF-8."


def _check_rows(content: str) -> tuple[list[dict[str, Any]], str | None]:
    reader = csv.DictReader(io.StringIO(content))
    columns = [c.strip().lower() for c in reader.fieldnames or []]
    catalogue = _studies()
    baseline = {
        name for slug in study_forms.usable(catalogue) for name in catalogue.study(slug).baseline
    }
    unknown = [c for c in columns if c not in enrollment_rules.FIELDS and c not in baseline]
    if "phone" not in columns:
        return [], "The first line must name the columns and include phone."
    if unknown:
        known = ", ".join(enrollment_rules.FIELDS)
        also = (
            f"; and a study's baseline fields ({', '.join(sorted(baseline))})" if baseline else ""
        )
        return [], f"Unknown column(s) {', '.join(unknown)}; the columns are {known}{also}."
    check = enrollment.checker(
        services().store, services().settings, _catalogue(), "console", catalogue
    )
    rows: list[dict[str, Any]] = []
    for number, record in enumerate(reader, start=2):
        if len(rows) >= MAX_ROWS:
            return rows, f"More than {MAX_ROWS} rows; split the file."
        given = {(k or "").strip().lower(): (v or "") for k, v in record.items() if k}
        checked: Checked | None = None
        errors: dict[str, str] = {}
        try:
            checked = check(enrollment_rules.asked(given))
        except Refused as exc:
            errors = enrollment_rules.in_console_words(exc.problems)
        rows.append({"line": number, "given": given, "checked": checked, "errors": errors})
    if not rows:
        return rows, "The file has no rows under its header."
    return rows, None


def _fingerprint(good: list[Checked]) -> str:
    """What the dry run promised to write: the phones and their other fields."""
    digest = hashlib.sha256()
    for c in good:
        e = c.enrolled
        digest.update(f"{e.phone}|{e.channel}|{e.timezone}|{e.intervention}|{e.name}|".encode())
        digest.update(f"{c.study}|{sorted(c.baseline.items())}\n".encode())
    return digest.hexdigest()


def _studies() -> StudyCatalogue:
    return study_forms.studies(_catalogue())


def _catalogue() -> Catalogue:
    return study_forms.interventions()
