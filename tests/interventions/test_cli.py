"""`tandem interventions validate` and `graph` on the command line."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from bot.cli import interventions as _commands  # noqa: F401  (registers the commands)
from bot.cli.root import cli
from tests.interventions.variants import FIXTURES, GOOD

NEEDS_AN_LLM = (
    "  needs an LLM — not configured: set OPENAI_API_KEY (or OPENAI_BASE_URL for an "
    "OpenAI-compatible server)\n"
)


def test_validate_says_ok_and_exits_0_for_a_good_intervention() -> None:
    result = CliRunner().invoke(cli, ["interventions", "validate", str(GOOD)])

    assert result.exit_code == 0
    # then what it needs, unmet here (no LLM configured), which does not fail validation
    assert result.output == f"{GOOD}: ok\n" + NEEDS_AN_LLM


def test_validate_prints_file_line_message_and_exits_1_on_problems() -> None:
    broken = FIXTURES / "broken"

    result = CliRunner().invoke(cli, ["interventions", "validate", str(broken)])

    assert result.exit_code == 1
    assert f"{broken}/steps/start.md:5: no step 'finsh'; did you mean 'finish'?\n" in result.output
    assert result.output.endswith(f"{broken}: 9 problem(s)\n")


def test_validate_checks_every_intervention_under_a_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["interventions", "validate", str(FIXTURES)])

    assert result.exit_code == 1
    assert f"{GOOD}: ok\n" in result.output and f"{FIXTURES / 'broken'}: 9 problem(s)" in (
        result.output
    )


def test_graph_prints_the_mermaid_flowchart() -> None:
    result = CliRunner().invoke(cli, ["interventions", "graph", str(GOOD)])

    assert result.exit_code == 0
    assert result.output.splitlines()[1] == "flowchart TD"


def test_graph_refuses_a_folder_that_is_not_an_intervention() -> None:
    result = CliRunner().invoke(cli, ["interventions", "graph", str(FIXTURES)])

    assert result.exit_code == 2
    assert "neither a folder holding intervention.yaml nor a slug" in result.output


def test_graph_takes_a_slug() -> None:
    result = CliRunner().invoke(cli, ["interventions", "graph", "demo"])

    assert result.exit_code == 0
    assert "flowchart TD" in result.output


def test_graph_of_an_invalid_folder_prints_its_problems_and_exits_1() -> None:
    result = CliRunner().invoke(cli, ["interventions", "graph", str(FIXTURES / "broken")])

    assert result.exit_code == 1
    assert "steps/start.md:5: no step 'finsh'; did you mean 'finish'?" in result.output
    assert "flowchart" not in result.output
