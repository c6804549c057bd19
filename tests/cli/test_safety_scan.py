"""`tandem safety scan`: one JSON verdict per input line, in order."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from bot.cli import safety as _commands  # noqa: F401  (registers the command)
from bot.cli.root import cli


def scan(text: str, *args: str) -> list[dict]:
    result = CliRunner().invoke(cli, ["safety", "scan", *args], input=text)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines()]


def test_each_line_gets_a_verdict_in_order_blank_lines_included() -> None:
    verdicts = scan("I want to kill myself\n\nthis workout is killing me\nquiero morirme\n")

    none = {"crisis": False, "rule": None, "category": None, "language": None}
    assert verdicts == [
        {
            "text": "I want to kill myself",
            "crisis": True,
            "rule": "en.suicide.direct",
            "category": "suicide",
            "language": "en",
        },
        {"text": "", **none},
        {"text": "this workout is killing me", **none},
        {
            "text": "quiero morirme",
            "crisis": True,
            "rule": verdicts[3]["rule"],
            "category": "suicide",
            "language": "es",
        },
    ]
    assert verdicts[3]["rule"].startswith("es.")


def test_an_intervention_screens_with_its_own_phrases_as_well() -> None:
    text = "I'll just stop eating altogether\nI want to die\n"

    assert [v["rule"] for v in scan(text)] == [None, "en.suicide.direct"]
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

    assert scan(text)[0]["crisis"] is True
    assert scan(text, "--intervention", str(tmp_path))[0]["crisis"] is False


def test_an_unknown_intervention_is_refused_naming_the_known_ones() -> None:
    result = CliRunner().invoke(cli, ["safety", "scan", "--intervention", "sleep"], input="x\n")

    assert result.exit_code == 2
    assert "no intervention 'sleep' (known: cbt-reframe, demo, fit-motivation" in result.output
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
        [sys.executable, "-c", "from bot.cli.main import main; main()", "safety", "scan"],
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
