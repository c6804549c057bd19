"""`tandem chat` as a developer runs it: lines piped to the real command in a subprocess, with no
LLM configured, and nothing reaching an LLM for fixed wording."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bot.core.config import ENV_NAMES
from tests.fakes.openai_api import FakeOpenAI

PRACTICE = Path(__file__).resolve().parents[1] / "sandbox" / "fixtures" / "practice"
FALLBACK = "bot> Sorry, that did not work on our side. We'll be in touch."


def chat(stdin: str, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `tandem chat` with none of Tandem's settings from this environment, in an empty
    folder (so no .env is read), and `env` on top."""
    clean = {k: v for k, v in os.environ.items() if k not in ENV_NAMES}
    return subprocess.run(
        [sys.executable, "-c", "from bot.cli.main import main; main()", "chat", *args],
        input=stdin,
        cwd=cwd,
        # Scripted in FIFO order; the second-line classifier is covered in tests/conversation.
        env={
            **clean,
            "DEFAULT_TIMEZONE": "Europe/London",
            "SAFETY_CLASSIFIER": "off",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_piped_chat_echoes_each_participant_line_before_the_replies(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        result = chat(
            "yes\nI walked\n/wait 2h\n",
            "--intervention",
            str(PRACTICE),
            cwd=tmp_path,
            OPENAI_BASE_URL=fake.url + "/v1",
        )

        assert result.returncode == 0, result.stderr
        bot_lines = [line for line in result.stdout.splitlines() if line.startswith("bot> ")]
        assert bot_lines[:3] == [
            "bot> Hi there! This is a practice run. Ready?",
            "bot> Tell me one small thing you did today.",
            "bot> Thanks! Tell me one more.",
        ]
        # The clock starts at the real time: the 20:00 mood question may come due as well.
        assert "bot> A nudge from the practice step." in bot_lines[3:]
        lines = result.stdout.splitlines()
        assert [line for line in lines if line.startswith("you> ")] == [
            "you> yes",
            "you> I walked",
            "you> /wait 2h",
        ]
        assert lines.index("you> yes") < lines.index("bot> Tell me one small thing you did today.")
        assert fake.requests == []  # fixed wording never reaches the LLM
        assert result.stderr == ""


def test_the_shipped_demo_can_be_chatted_through_with_no_llm(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        result = chat(
            "1\nok\nok\n/wait\n1\nok\n",
            "--intervention",
            "demo",
            cwd=tmp_path,
            OPENAI_BASE_URL=fake.url + "/v1",
        )

        assert result.returncode == 0, result.stderr
        assert "intervention demo: Tandem demo" in result.stdout
        assert "measurement.recorded" in result.stdout
        assert "turn.failed" not in result.stdout
        assert fake.requests == []


def test_without_an_llm_an_llm_step_sends_the_fallback_and_says_so_once(tmp_path: Path) -> None:
    result = chat(
        "/jump coach\nhello\n/jump coach\nhello again\n/quit\nnot read\n",
        "--intervention",
        str(PRACTICE),
        cwd=tmp_path,
    )

    assert result.returncode == 0, result.stderr
    assert "LLM: none configured" in result.stdout
    assert result.stdout.count(FALLBACK) == 2
    assert result.stdout.count("no LLM is configured") == 1
    assert "not read" not in result.stdout


def test_commands_answer_in_the_chat(tmp_path: Path) -> None:
    result = chat(
        "/state\n/events 2\n/notes\n/jump nowhere\n/shout\n/reset\n",
        "--intervention",
        str(PRACTICE),
        "--timezone",
        "America/Toronto",
        cwd=tmp_path,
    )

    out = result.stdout
    assert "participant +15550100 · America/Toronto" in out
    assert "step         welcome (Welcome)" in out
    assert "work.completed" in out and "message.sent" in out
    assert "(no notes taken yet)" in out
    assert "error: no step 'nowhere' in practice" in out
    assert "unknown command /shout" in out
    assert out.count("bot> Hi there! This is a practice run. Ready?") == 2  # again after /reset


def test_a_folder_that_is_not_an_intervention_is_a_clear_error(tmp_path: Path) -> None:
    result = chat("", "--intervention", str(tmp_path), cwd=tmp_path)

    assert result.returncode == 1
    assert f"{tmp_path}: no intervention.yaml there, so not an intervention folder" in (
        result.stderr
    )


def test_an_unknown_slug_is_refused_with_exit_1(tmp_path: Path) -> None:
    result = chat("hello\n", "--intervention", "nosuch", cwd=tmp_path)

    assert result.returncode == 1
    assert "intervention 'nosuch' cannot be used:" in result.stderr
    assert (
        "no such intervention; known: cbt-reframe, demo, ema-craving, fit-motivation, habit-coach"
        in (result.stderr)
    )
    assert "bot>" not in result.stdout


def test_a_folder_that_does_not_validate_is_refused_with_its_problems(tmp_path: Path) -> None:
    broken = Path(__file__).resolve().parents[1] / "interventions" / "fixtures" / "broken"

    result = chat("hello\n", "--intervention", str(broken), cwd=tmp_path)

    assert result.returncode == 1
    assert "intervention 'broken' cannot be used:" in result.stderr
    assert "steps/start.md:5: no step 'finsh'; did you mean 'finish'?" in result.stderr
    assert "bot>" not in result.stdout
