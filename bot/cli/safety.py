"""`tandem safety scan`: run the crisis screen over lines of text, one JSON verdict per line.

For checking the screen on a corpus before a study ("does it flag these? does it leave those
alone?"): `tandem safety scan < messages.txt`. Every input line gives one output line, in order,
blank lines included: {"text": ..., "crisis": true|false (an alert from the phrase screen or the
learned line), "review": true|false (the learned line's review band, no alert), "rule": id or
null, "category": name or null, "language": the rule's (or the model's) language or null,
"score": the learned line's crisis score or null, "review_score": its review score (what the
review threshold applies to) or null, "line": `phrase`, `learned` or null, the line that
decided}. `--phrase-only` leaves the learned line out (its score is then null).

`tandem safety eval` also scores the learned line (bot.conversation.learned) alone and together
with the screen, for alerts only and for alerts plus the review band (`--phrase-only` skips it);
`--everyday FILE` (one unlabelled message per line) adds the review-band and alert rates there.

`tandem safety eval FILE` scores the screen on a labelled corpus (`text<TAB>category<TAB>language`
per line, category `none` for a control): recall per category and language, false alarms per
language, and with `--show-misses` every line it got wrong. `--with-llm` also runs the second
line, the LLM classifier (prompts/safety/classifier.md), with the configured LLM
(OPENAI_API_KEY / OPENAI_BASE_URL, TANDEM_MODEL) on every line, and prints the figures for the
classifier alone and for both lines together (flagged when either fires), beside the screen's;
a classifier call that fails counts as not flagged, and the number of such lines is printed.

`--intervention SLUG` screens as that intervention's participants are screened: the maintained
catalogue plus the intervention's `safety.extra_phrases` and `extra_exclusions` (rule
`intervention.extra` for its own phrases). SLUG names a folder under interventions/, or is the
path of an intervention folder. An unknown intervention, or one whose settings cannot be read,
is an error: no one should believe a study's own phrases were checked when they were not.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from bot.cli.root import cli, settings_from_env

if TYPE_CHECKING:
    from bot.conversation.learned import LinearLine
    from bot.conversation.safety import CrisisScreen
    from bot.conversation.safety_eval import Labelled


@cli.group(name="safety")
def safety_group() -> None:
    """The crisis screen run on every inbound message (and the LLM classifier beside it)."""


@safety_group.command(name="scan")
@click.option(
    "--intervention",
    "slug",
    help="Screen as this intervention does (a folder under interventions/, or a path).",
)
@click.option("--phrase-only", is_flag=True, help="Leave the learned line out.")
def scan(slug: str | None, phrase_only: bool) -> None:
    """Read messages on stdin, one per line; print one JSON verdict per line."""
    from bot.conversation.learned import load_line, read_card
    from bot.conversation.safety import CrisisScreen
    from bot.conversation.safety_learned_eval import scan_verdict

    screen = intervention_screen(slug) if slug is not None else CrisisScreen.from_default()
    learned = None if phrase_only else load_line()
    thresholds = read_card().thresholds
    for line in sys.stdin:
        text = line.rstrip("\r\n")
        scored = learned.score(text) if learned is not None and text.strip() else None
        verdict = scan_verdict(text, screen.check(text), scored, thresholds)
        click.echo(json.dumps(verdict, ensure_ascii=False))


@safety_group.command(name="eval")
@click.argument("corpus", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--intervention", "slug", help="Screen as this intervention does.")
@click.option("--show-misses", is_flag=True, help="Also list every line the screen got wrong.")
@click.option(
    "--with-llm",
    is_flag=True,
    help="Also run the LLM classifier (the second line) with the configured LLM, and print "
    "its figures and both lines' together.",
)
@click.option("--phrase-only", is_flag=True, help="Leave the learned line out.")
@click.option(
    "--everyday",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Unlabelled everyday messages (one per line): also print the review-band rate there.",
)
def eval_command(  # noqa: PLR0913 - one parameter per command-line option
    corpus: Path,
    slug: str | None,
    show_misses: bool,
    with_llm: bool,
    phrase_only: bool,
    everyday: Path | None,
) -> None:
    """Recall and false-alarm rate per category and language on a labelled CORPUS file."""
    from bot.conversation.learned import load_line
    from bot.conversation.safety import CrisisScreen
    from bot.conversation.safety_eval import CorpusError, evaluate, read_corpus, table

    screen = intervention_screen(slug) if slug is not None else CrisisScreen.from_default()
    try:
        labelled = read_corpus(corpus.read_text(encoding="utf-8").splitlines(), str(corpus))
    except CorpusError as exc:
        raise click.ClickException(str(exc)) from None
    scores = evaluate(labelled, lambda text: screen.check(text).category)
    click.echo(f"screen: deterministic phrase catalogue; corpus: {corpus} ({len(labelled)} lines)")
    for row in table(scores):
        click.echo(row)
    if show_misses:
        click.echo("")
        for item in sorted({m for s in scores.values() for m in s.missed}, key=_line):
            found = screen.check(item.text)
            click.echo(f"{item.line}: expected {item.category}, got {found.category}: {item.text}")
    learned = None if phrase_only else load_line()
    if learned is not None:
        _learned(learned, labelled, screen, everyday)
    if with_llm:
        _both_lines(labelled, screen)


def _learned(
    learned: LinearLine, labelled: list[Labelled], screen: CrisisScreen, everyday: Path | None
) -> None:
    """The learned line alone and with the screen, alert only and alert + review."""
    from bot.conversation.learned import read_card
    from bot.conversation.safety_eval import table
    from bot.conversation.safety_learned_eval import everyday_rates, learned_sections

    thresholds = read_card().thresholds
    for title, scores in learned_sections(learned, thresholds, labelled, screen):
        click.echo("")
        click.echo(title)
        for row in table(scores):
            click.echo(row)
    if everyday is not None:
        click.echo("")
        lines = everyday.read_text(encoding="utf-8").splitlines()
        messages = [m.strip() for m in lines if m.strip() and not m.startswith("#")]
        click.echo(f"everyday: {everyday} ({len(messages)} messages)")
        for row in everyday_rates(learned, thresholds, screen, messages):
            click.echo(row)


def _both_lines(labelled: list[Labelled], screen: CrisisScreen) -> None:
    """The classifier alone and both lines together, on the same corpus."""
    from bot.conversation.classifier import SafetyClassifier, load_prompt
    from bot.conversation.llm import ChatClient
    from bot.conversation.safety_eval import evaluate, table

    settings = settings_from_env()
    client = ChatClient.from_settings(settings)
    if not client.configured:
        raise click.ClickException(
            "--with-llm needs an LLM: set OPENAI_API_KEY or OPENAI_BASE_URL (and TANDEM_MODEL)"
        )
    classifier = SafetyClassifier(client, settings.safety_classifier_timeout_seconds, load_prompt())
    verdicts = {}
    try:
        for item in labelled:
            verdicts[item.text] = classifier.classify(item.text, f"corpus:{item.line}").event
    finally:
        client.close()
    failed = sum(v.verdict == "no_verdict" for v in verdicts.values())
    for title, detect in (
        ("classifier alone", lambda text: verdicts[text].category),
        (
            "both lines (either fires)",
            lambda text: screen.check(text).category or verdicts[text].category,
        ),
    ):
        click.echo("")
        click.echo(f"{title}: model {client.model}; {failed} line(s) without a verdict")
        for row in table(evaluate(labelled, detect)):
            click.echo(row)


def _line(item: Labelled) -> int:
    return item.line


def intervention_screen(slug: str, root: Path | None = None) -> CrisisScreen:
    """The crisis screen of intervention `slug` (or of the folder at that path); `root` holds
    the intervention folders (default: the project's interventions/)."""
    from bot.conversation.safety import PhraseError
    from bot.interventions.interpreter.applied import INTERVENTIONS
    from bot.interventions.language.loader import CONFIG, read_intervention

    root = INTERVENTIONS if root is None else root
    folder = Path(slug) if (Path(slug) / CONFIG).is_file() else root / slug
    if not (folder / CONFIG).is_file():
        known = ", ".join(sorted(p.parent.name for p in root.glob(f"*/{CONFIG}"))) or "none"
        raise click.UsageError(f"no intervention {slug!r} (known: {known})")
    intervention, problems = read_intervention(folder)
    if intervention is None:
        details = "; ".join(str(problem) for problem in problems[:3])
        raise click.ClickException(f"intervention {slug!r} cannot be read: {details}")
    try:
        return intervention.crisis_screen()
    except PhraseError as exc:
        raise click.ClickException(f"intervention {slug!r}: crisis phrases: {exc}") from None
