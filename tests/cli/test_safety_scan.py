"""`tandem safety scan`: one JSON verdict per input line, in order."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from bot.cli import cli
from bot.cli import safety as _commands  # noqa: F401  (registers the command)


def scan(text: str, *args: str) -> list[dict]:
    result = CliRunner().invoke(cli, ["safety", "scan", *args], input=text)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines()]


def test_each_line_gets_a_verdict_in_order_blank_lines_included() -> None:
    verdicts = scan("I want to kill myself\n\nthis workout is killing me\nquiero morirme\n")

    assert verdicts == [
        {"text": "I want to kill myself", "crisis": True, "rule": "en.suicide.direct"},
        {"text": "", "crisis": False, "rule": None},
        {"text": "this workout is killing me", "crisis": False, "rule": None},
        {"text": "quiero morirme", "crisis": True, "rule": verdicts[3]["rule"]},
    ]
    assert verdicts[3]["rule"].startswith("es.")


def test_the_default_intervention_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INTERVENTION", "demo")

    assert scan("hello\n", "--intervention", "demo") == [
        {"text": "hello", "crisis": False, "rule": None}
    ]


def test_another_intervention_is_refused_until_interventions_can_extend_the_screen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("INTERVENTION", "demo")

    result = CliRunner().invoke(cli, ["safety", "scan", "--intervention", "sleep"], input="x\n")

    assert result.exit_code == 2
    assert "intervention 'sleep': interventions cannot extend the crisis screen yet" in (
        result.output
    )


def test_the_installed_command_reads_stdin_and_writes_json_lines() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from bot.cli import main; main()", "safety", "scan"],
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
