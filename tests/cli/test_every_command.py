"""Every `tandem` command's typical invocation, on the default setup: no LLM, no Twilio, no
master key, a fresh SQLite file. Each one works or refuses with a message, never a traceback
(`tandem chat --intervention demo` with the safety classifier left as shipped, `auto`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bot.cli.main import cli
from bot.core.config import ENV_NAMES

ROOT = Path(__file__).resolve().parents[2]
ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class Tandem:
    """`tandem` in an empty folder with none of this machine's Tandem settings."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        # None unsets: nothing of the developer's own environment (an LLM, Twilio) leaks in.
        self.env: dict[str, str | None] = {name: None for name in ENV_NAMES}
        self.env["DATABASE_URL"] = f"sqlite:///{folder / 'tandem.db'}"

    def __call__(
        self, *args: str, stdin: str | None = None, codes: tuple[int, ...] = (0,)
    ) -> Result:
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(self.folder)  # no .env is read from the repository
            result = CliRunner().invoke(cli, list(args), env=self.env, input=stdin)
        output = result.output
        shown = f"tandem {' '.join(args)} -> {result.exit_code}:\n{output}"
        assert result.exception is None or isinstance(result.exception, SystemExit), shown + repr(
            result.exception
        )
        assert "Traceback" not in output, shown
        assert result.exit_code in codes, shown
        if result.exit_code:
            assert output.strip(), f"{shown}(a refusal says why)"
        return result


@pytest.fixture
def tandem(tmp_path: Path) -> Tandem:
    return Tandem(tmp_path)


def test_every_command_works_or_refuses_clearly_with_no_llm_and_no_twilio(
    tandem: Tandem, tmp_path: Path
) -> None:
    tandem("--help")
    tandem("migrate")
    tandem("keys", "generate")
    tandem("interventions", "validate", str(ROOT / "interventions"))
    assert (
        "needs an LLM — not configured"
        in tandem("interventions", "validate", str(ROOT / "interventions" / "ot-mentor")).output
    )
    tandem("interventions", "graph", "demo")
    tandem("interventions", "schema", str(tmp_path / "schema"))
    enrolled = tandem("enroll", "+14155552671")
    pid = ID.search(enrolled.output).group(0)
    refused = tandem("enroll", "+14155552672", "--intervention", "ot-mentor", codes=(2,))
    assert "needs an LLM — not configured" in refused.output
    tandem("events", "--limit", "5")
    tandem("timers", "list")
    tandem("replay", "--check")
    scanned = tandem("safety", "scan", stdin="I had a lovely walk today\n")
    assert '"crisis": false' in scanned.output
    tandem("users", "add", "ada@example.org", "--role", "researcher", codes=(0, 1))
    tandem("users", "list", codes=(0, 1))
    tandem("export", "--out", str(tmp_path / "export"), codes=(0, 1))
    assert "walk-pilot: ok" in tandem("study", "validate").output
    tandem("study", "check", "walk-pilot", codes=(0, 1))
    tandem("study", "allocations", "walk-pilot", "--reason", "checking", codes=(0, 1))
    tandem("analyze", "decisions", "walk_prompt", codes=(0, 1))
    tandem("keys", "rotate", codes=(0, 1))
    tandem("withdraw", pid, "--reason", "moved", "--requested-by", "participant", codes=(0, 1))
    tandem(
        "erase", pid, "--reason", "asked", "--requested-by", "participant", "--yes", codes=(0, 1)
    )
    no_personas = tandem("simulate", "demo", "--report", str(tmp_path / "nobody"), codes=(1,))
    assert "no such personas folder" in no_personas.output
    simulated = tandem(
        "simulate",
        str(ROOT / "interventions" / "demo"),
        "--personas",
        str(ROOT / "personas"),
        "--participants",
        "3",
        "--days",
        "1",
        "--report",
        str(tmp_path / "sim"),
    )
    assert "quiet-hours violations: 0" in simulated.output
    tandem("serve", "--help")
    tandem("worker", "--help")


def test_chat_with_the_demo_runs_with_the_safety_classifier_as_shipped(tandem: Tandem) -> None:
    assert tandem.env["SAFETY_CLASSIFIER"] is None  # "auto": on only when an LLM is configured

    chatted = tandem("chat", "--intervention", "demo", stdin="1\n/quit\n")

    assert "bot> Hi there! This is the Tandem demo." in chatted.output
    assert "Sleep" in chatted.output
