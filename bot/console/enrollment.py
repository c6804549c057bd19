"""Enrolling from the console: one participant by form, many from a CSV with a dry run first.

Each row, the form's and every CSV line's, is checked by `bot.services.enrollment.check`, the
rule set of the API and `tandem enroll`; the dry run shows what that check decided and the
confirmed run records exactly those enrollments.
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
from typing import Any

from flask import current_app, redirect, render_template, request, url_for

from bot.console import enrollment_rules
from bot.console.blueprint import console, services
from bot.console.guard import actor, requires
from bot.instruments.administration import attach
from bot.interventions.validation.catalogue import Catalogue
from bot.services import enrollment
from bot.services.refusal import Refused
from bot.store.event_types import ParticipantEnrolled

log = logging.getLogger(__name__)
MAX_CSV_BYTES = 1_000_000
MAX_ROWS = 5000


@console.route("/enroll", methods=["GET", "POST"])
@requires("enroll")
def enroll() -> Any:
    if request.method == "GET":
        return render_template("console/enroll.html", given={}, errors={})
    given = {name: request.form.get(name, "") for name in enrollment_rules.FIELDS}
    try:
        enrolled = enrollment.enroll(
            services().store,
            services().settings,
            _catalogue(),
            enrollment_rules.asked(given),
            source="console",
            actor=actor(),
        )
    except Refused as exc:
        errors = enrollment_rules.in_console_words(exc.problems)
        code = 409 if exc.kind == "conflict" else 400
        return render_template("console/enroll.html", given=given, errors=errors), code
    log.info("console: participant %s enrolled", enrolled.participant_id)
    return redirect(url_for("console.participant", participant_id=enrolled.participant_id))


@console.route("/enroll/csv", methods=["GET", "POST"])
@requires("enroll")
def enroll_csv() -> Any:
    if request.method == "GET":
        return render_template("console/enroll_csv.html", rows=None, problem=None)
    content, problem = _content()
    if problem:
        return render_template("console/enroll_csv.html", rows=None, problem=problem), 400
    rows, problem = _check_rows(content)
    good = [r["enrolled"] for r in rows if r["enrolled"] is not None]
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
        enrollment.record(services().store, good, actor=actor())
    except Refused as exc:
        return render_template("console/enroll_csv.html", rows=None, problem=exc.message), 409
    log.info("console: %d participants enrolled from a CSV", len(good))
    return render_template("console/enroll_csv.html", rows=None, problem=None, done=len(good))


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
    unknown = [c for c in columns if c not in enrollment_rules.FIELDS]
    if "phone" not in columns:
        return [], "The first line must name the columns and include phone."
    if unknown:
        known = ", ".join(enrollment_rules.FIELDS)
        return [], f"Unknown column(s) {', '.join(unknown)}; the columns are {known}."
    check = enrollment.checker(services().store, services().settings, _catalogue(), "console")
    rows: list[dict[str, Any]] = []
    for number, record in enumerate(reader, start=2):
        if len(rows) >= MAX_ROWS:
            return rows, f"More than {MAX_ROWS} rows; split the file."
        given = {(k or "").strip().lower(): (v or "") for k, v in record.items() if k}
        enrolled: ParticipantEnrolled | None = None
        errors: dict[str, str] = {}
        try:
            enrolled = check(enrollment_rules.asked(given))
        except Refused as exc:
            errors = enrollment_rules.in_console_words(exc.problems)
        rows.append({"line": number, "given": given, "enrolled": enrolled, "errors": errors})
    if not rows:
        return rows, "The file has no rows under its header."
    return rows, None


def _fingerprint(good: list[ParticipantEnrolled]) -> str:
    """What the dry run promised to write: the phones and their other fields."""
    digest = hashlib.sha256()
    for e in good:
        digest.update(f"{e.phone}|{e.channel}|{e.timezone}|{e.intervention}|{e.name}\n".encode())
    return digest.hexdigest()


def _catalogue() -> Catalogue:
    """The interventions this app enrolls in: the API's catalogue, or the console's folder."""
    found = current_app.extensions.get("tandem.interventions")
    if isinstance(found, Catalogue):
        return found
    return Catalogue(current_app.extensions["tandem_console"]["interventions"], attach=attach)
