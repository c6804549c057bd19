"""The docs name only what exists: `tandem` commands, environment variables, `bot/…py` files."""

from __future__ import annotations

import re
from pathlib import Path

import click

from bot.cli.main import cli
from bot.core.config import ENV_NAMES

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([*ROOT.glob("docs/*.md"), ROOT / "README.md"])

# DESIGN.md §10 plans these; a doc may name one only with this marker on the same line.
PLANNED = frozenset({"study", "broadcast", "soak", "analyze", "maintenance"})
PLANNED_MARKER = "(planned)"

# docs/promptpipe.md maps PromptPipe's own variables onto Tandem's: those are not Tandem's.
OTHER_SYSTEMS_VARIABLES = frozenset({"promptpipe.md"})

# `tandem serve` written as a command; not `db/tandem` in a URL, nor `tandem.db`.
COMMAND = re.compile(r"(?<![\w/.:@-])tandem ((?:[a-z][a-z0-9-]*)(?: [a-z][a-z0-9-]*)?)")
# An environment variable written as one: assigned (`NAME=`), expanded (`$NAME`) or Tandem's own.
VARIABLE = re.compile(
    r"(?<![\w.-])(?:\$\{?([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"
    r"|([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)="
    r"|(TANDEM_[A-Z0-9_]*[A-Z0-9]))"
)
BOT_FILE = re.compile(r"(?<![\w/.-])(bot/[\w/]+\.py)\b")


def lines_of_docs() -> list[tuple[str, int, str]]:
    """(file name, line number, line) of every line of docs/*.md and README.md."""
    return [
        (path.name, number, line)
        for path in DOCS
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
    ]


def unknown_commands(lines: list[tuple[str, int, str]], group: click.Group) -> list[str]:
    """`file:line: tandem X` for each command named that the group lacks (a planned one
    counts only with PLANNED_MARKER on its line; a subcommand is checked under its group)."""
    problems = []
    for name, number, line in lines:
        for match in COMMAND.finditer(line):
            words = match.group(1).split(" ")
            # get_command: `tandem`'s group imports a command's module when it is asked for it
            command = group.get_command(click.Context(group), words[0])
            if command is None:
                if words[0] in PLANNED and PLANNED_MARKER in line:
                    continue
                problems.append(f"{name}:{number}: tandem {words[0]}")
            elif isinstance(command, click.Group) and len(words) == 2:
                if words[1] not in command.commands:
                    problems.append(f"{name}:{number}: tandem {words[0]} {words[1]}")
    return problems


def environment_names() -> set[str]:
    """Every variable Tandem reads: Settings' aliases, .env.example's, and those read by name
    in the code, the tests, the benchmarks and the Makefile (this file's examples left out)."""
    names = set(ENV_NAMES)
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    names |= set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", example, re.MULTILINE))
    sources = [*ROOT.glob("bot/**/*.py"), *ROOT.glob("bench/*.py"), *ROOT.glob("tests/**/*.py")]
    sources = [path for path in sources if path != Path(__file__).resolve()] + [ROOT / "Makefile"]
    for source in sources:
        names |= set(re.findall(r"[\"'$(]\{?([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)", source.read_text()))
    return names


def unknown_variables(lines: list[tuple[str, int, str]], known: set[str]) -> list[str]:
    """`file:line: NAME` for each environment variable named that Tandem does not read."""
    problems = []
    for name, number, line in lines:
        if name in OTHER_SYSTEMS_VARIABLES:
            continue
        for match in VARIABLE.finditer(line):
            variable = next(group for group in match.groups() if group)
            if variable not in known:
                problems.append(f"{name}:{number}: {variable}")
    return problems


def missing_files(lines: list[tuple[str, int, str]]) -> list[str]:
    """`file:line: bot/…py` for each source file named that does not exist."""
    return [
        f"{name}:{number}: {match.group(1)}"
        for name, number, line in lines
        for match in BOT_FILE.finditer(line)
        if not (ROOT / match.group(1)).is_file()
    ]


def test_every_tandem_command_named_in_the_docs_exists() -> None:
    assert unknown_commands(lines_of_docs(), cli) == []


def test_an_unbuilt_command_is_refused_unless_marked_planned() -> None:
    lines = [("x.md", 1, "run `tandem soak interventions/demo`"), ("x.md", 2, "`tandem web`")]
    lines.append(("x.md", 3, "`tandem soak interventions/demo` (planned)"))
    assert unknown_commands(lines, cli) == ["x.md:1: tandem soak", "x.md:2: tandem web"]


def test_a_subcommand_named_in_the_docs_is_checked_under_its_group() -> None:
    lines = [("x.md", 1, "`tandem keys rotate`, `tandem keys burn`")]
    lines.append(("x.md", 2, "`tandem users reset-2fa EMAIL`, `tandem users reset-3fa`"))
    assert unknown_commands(lines, cli) == [
        "x.md:1: tandem keys burn",
        "x.md:2: tandem users reset-3fa",
    ]


def test_every_environment_variable_named_in_the_docs_is_read_by_tandem() -> None:
    assert unknown_variables(lines_of_docs(), environment_names()) == []


def test_a_misspelt_environment_variable_is_caught() -> None:
    lines = [("x.md", 1, "set `TANDEM_MASTERKEY` and `DATABSE_URL=sqlite://`")]
    found = unknown_variables(lines, environment_names())
    assert found == ["x.md:1: TANDEM_MASTERKEY", "x.md:1: DATABSE_URL"]


def test_every_bot_source_file_named_in_the_docs_exists() -> None:
    assert missing_files(lines_of_docs()) == []


def test_a_source_file_that_moved_is_caught() -> None:
    assert missing_files([("x.md", 7, "see `bot/store/memory.py`")]) == [
        "x.md:7: bot/store/memory.py"
    ]
