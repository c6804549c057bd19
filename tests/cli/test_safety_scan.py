"""`tandem safety scan`: one JSON verdict per input line, in order."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import safety as _commands  # noqa: F401  (registers the command)
from bot.cli.root import cli
from bot.conversation.learned import LearnedVerdict, Thresholds
from bot.conversation.safety import ScreenResult
from bot.conversation.safety_learned_eval import scan_verdict


def scan(text: str, *args: str) -> list[dict]:
    result = CliRunner().invoke(cli, ["safety", "scan", *args], input=text)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines()]


def test_each_line_gets_a_verdict_in_order_blank_lines_included() -> None:
    verdicts = scan(
        "I want to kill myself\n\nthis workout is killing me\nquiero morirme\n", "--phrase-only"
    )

    none = {"crisis": False, "review": False, "rule": None, "category": None, "language": None}
    unscored = {"score": None, "review_score": None}
    assert verdicts == [
        {
            "text": "I want to kill myself",
            "crisis": True,
            "review": False,
            "rule": "en.suicide.direct",
            "category": "suicide",
            "language": "en",
            "line": "phrase",
            **unscored,
        },
        {"text": "", **none, "line": None, **unscored},
        {"text": "this workout is killing me", **none, "line": None, **unscored},
        {
            "text": "quiero morirme",
            "crisis": True,
            "review": False,
            "rule": verdicts[3]["rule"],
            "category": "suicide",
            "language": "es",
            "line": "phrase",
            **unscored,
        },
    ]
    assert verdicts[3]["rule"].startswith("es.")


def test_an_intervention_screens_with_its_own_phrases_as_well() -> None:
    text = "I'll just stop eating altogether\nI want to die\n"

    # The phrase catalogue alone has no phrase for the first (the learned line may flag it).
    assert [v["rule"] for v in scan(text, "--phrase-only")] == [None, "en.suicide.direct"]
    assert [v["rule"] for v in scan(text, "--intervention", "fit-motivation")] == [
        "intervention.extra",
        "en.suicide.direct",
    ]


def test_an_intervention_folder_given_by_path_adds_its_exclusions(tmp_path: Path) -> None:
    (tmp_path / "intervention.yaml").write_text(
        "title: Draft\nversion: 1\nmodule: intake\n"
        "safety: {extra_exclusions: ['killed {self} laughing']}\n"
    )
    text = "I nearly killed myself laughing\n"

    # The phrase screen alone (with the learned line, an unconfirmed hit is a review item).
    assert scan(text, "--phrase-only")[0]["crisis"] is True
    assert scan(text, "--phrase-only", "--intervention", str(tmp_path))[0]["crisis"] is False


def test_an_unknown_intervention_is_refused_naming_the_known_ones() -> None:
    result = CliRunner().invoke(cli, ["safety", "scan", "--intervention", "sleep"], input="x\n")

    assert result.exit_code == 2
    assert (
        "no intervention 'sleep' (known: cbt-reframe, demo, ema-craving, fit-motivation"
        in result.output
    )
    assert result.output.count("{") == 0  # no verdicts: nothing was screened


def test_an_intervention_whose_settings_cannot_be_read_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "intervention.yaml").write_text(
        "title: Draft\nversion: 1\nmodule: intake\nsafe: {}\n"
    )

    result = CliRunner().invoke(
        cli, ["safety", "scan", "--intervention", str(tmp_path)], input="x\n"
    )

    assert result.exit_code == 1
    assert "cannot be read" in result.output and "unknown key `safe`" in result.output


def test_the_installed_command_reads_stdin_and_writes_json_lines() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from bot.cli.main import main; main()",
            "safety",
            "scan",
            "--phrase-only",
        ],
        input="I feel suicidal today\nok\n",
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )

    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(v["text"], v["crisis"]) for v in lines] == [
        ("I feel suicidal today", True),
        ("ok", False),
    ]


def test_the_learned_line_scores_every_non_blank_line_beside_the_screen() -> None:
    verdicts = scan("I want to kill myself\n\nwalked the dog today\n")

    assert verdicts[0]["line"] == "phrase" and 0.5 < verdicts[0]["score"] <= 1.0
    assert verdicts[1]["score"] is None and verdicts[1]["line"] is None
    assert 0.0 <= verdicts[2]["score"] < 0.5
    assert verdicts[2]["crisis"] is verdicts[2]["review"] is False
    # The review score (1 - P(everyday)) is never below the crisis score (1 - P(none or everyday))
    assert all(v["review_score"] >= v["score"] for v in (verdicts[0], verdicts[2]))


@pytest.mark.parametrize(
    ("score", "crisis", "review", "line"),
    [(0.9, True, False, "learned"), (0.6, False, True, "learned"), (0.1, False, False, None)],
)
def test_a_silent_screen_leaves_the_verdict_to_the_learned_band(
    score: float, crisis: bool, review: bool, line: str | None
) -> None:
    scored = LearnedVerdict(score, "abuse", "es", "v")

    verdict = scan_verdict("x", ScreenResult(crisis=False), scored, Thresholds(0.8, 0.5))

    assert (verdict["crisis"], verdict["review"], verdict["line"]) == (crisis, review, line)
    assert verdict["category"] == ("abuse" if line else None)


@pytest.mark.parametrize(
    ("score", "review_score", "crisis", "review"),
    [(0.9, 0.95, True, False), (0.2, 0.95, False, True), (0.6, 0.85, False, False)],
)
def test_with_a_review_score_the_band_is_read_from_it(
    score: float, review_score: float, crisis: bool, review: bool
) -> None:
    scored = LearnedVerdict(score, "suicide", "en", "v", review_score)

    verdict = scan_verdict("x", ScreenResult(crisis=False), scored, Thresholds(0.8, 0.9))

    assert (verdict["crisis"], verdict["review"], verdict["review_score"]) == (
        crisis,
        review,
        review_score,
    )


@pytest.mark.parametrize(
    ("score", "crisis", "review"), [(0.2, False, True), (0.5, True, False), (0.9, True, False)]
)
def test_a_phrase_hit_alerts_when_the_learned_score_confirms_it_else_is_reviewed(
    score: float, crisis: bool, review: bool
) -> None:
    hit = ScreenResult(True, "en.suicide.die", "suicide", "en", "could die")
    scored = LearnedVerdict(score, "suicide", "en", "v")

    verdict = scan_verdict("x", hit, scored, Thresholds(0.8, 0.6, confirm=0.4))

    assert (verdict["crisis"], verdict["review"], verdict["line"]) == (crisis, review, "phrase")
    assert verdict["rule"] == "en.suicide.die"
    assert scan_verdict("x", hit, None, Thresholds(0.8, 0.6, confirm=0.4))["crisis"]
