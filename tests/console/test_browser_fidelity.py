"""Fidelity review in Chromium: the demo answers a participant through the signed webhook; a
reviewer signs in, lands on the blind review, rates two bot turns (score, checklist, comment),
and the export holds both ratings in evaluations.csv, described by the codebook."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from playwright.sync_api import Browser, expect

from bot.console import accounts
from bot.core.clock import SystemClock
from bot.interventions.interpreter.applied import INTERVENTIONS
from bot.reporting.codebook import documents
from bot.reporting.export import export
from bot.store.events import participant_stream
from bot.store.reads.ratings import review_code
from tests.console.test_browser import (  # noqa: F401  (the module's browser and study fixtures)
    ADA,
    PASSWORD,
    Study,
    _sign_in,
    browser,
    study,
)
from tests.factories import enrolled

pytestmark = __import__("pytest").mark.slow


def test_a_reviewer_rates_two_turns_and_the_export_holds_them(
    browser: Browser,  # noqa: F811
    study: Study,  # noqa: F811
    tmp_path: Path,
) -> None:
    store = study.services.store
    person = enrolled(phone=ADA, name="Ada")
    pid = person.participant_id
    store.append(participant_stream(pid), [person], expected_version=0)
    study.text_in("Hello, Ada here", ADA)
    study.run_bot()
    study.text_in("1", ADA)
    study.run_bot()
    code = accounts.add(store, "rev@example.org", "reviewer", "cli", SystemClock().now())
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _sign_in(page, study, "rev@example.org", code)
    page.fill("#password", PASSWORD)
    page.fill("#repeated", PASSWORD)
    page.click("main button[type=submit]")
    expect(page.locator("h1")).to_have_text("Fidelity review")

    page.click(f"text={review_code(pid)}")
    expect(page.locator("h1")).to_have_text(f"Transcript {review_code(pid)}")
    expect(page.locator("#turns")).to_contain_text("Hello, [name] here")
    forms = page.locator("form.rate")
    assert forms.count() >= 2
    first, second = forms.nth(0), forms.nth(1)
    first.locator('input[name=score][value="5"]').check()
    first.locator('input[name=check][value="on_manual"]').check()
    first.locator('input[name=check][value="empathic"]').check()
    first.locator("textarea[name=comment]").fill("a warm welcome")
    first.locator("button.rate-turn").click()
    expect(page.locator(".rated")).to_have_count(1)
    page.locator("form.rate").nth(1).locator('input[name=score][value="2"]').check()
    page.locator("form.rate").nth(1).locator('input[name=check][value="unsafe_advice"]').check()
    page.locator("form.rate").nth(1).locator("button.rate-turn").click()
    expect(page.locator(".rated")).to_have_count(2)
    expect(page.locator(".rated").first).to_contain_text(
        "You rated it 5/5: Stayed on the treatment manual, Empathic."
    )
    assert second is not None

    out = tmp_path / "export"
    export(store, out, "csv", documents=documents(INTERVENTIONS, ["demo"]))

    with (out / "evaluations.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    got = [
        (r["participant_id"], r["rater"], r["score"], r["check_on_manual"], r["check_empathic"])
        + (r["check_unsafe_advice"], r["comment"])
        for r in rows
    ]
    assert got == [
        (pid, "staff:rev@example.org", "5", "1", "1", "0", "a warm welcome"),
        (pid, "staff:rev@example.org", "2", "0", "0", "1", ""),
    ]
    with (out / "messages.csv").open(newline="", encoding="utf-8") as f:
        bot_turns = [r["message_id"] for r in csv.DictReader(f) if r["direction"] == "outbound"]
    assert [r["message_id"] for r in rows] == bot_turns[:2]
    book = json.loads((out / "codebook.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in book["files"]["evaluations.csv"]] == list(rows[0])
