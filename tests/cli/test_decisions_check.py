"""`tandem decisions check [NAME]`: every draw recomputed from the seed on a real database; a
point whose logged option was changed is found (exit 1), and named."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from click.testing import CliRunner, Result

from bot.cli.main import cli
from bot.interventions.interpreter.decision_audit import check_points
from bot.interventions.interpreter.decision_draws import choose, uniform_draw
from bot.interventions.interpreter.decision_timers import draw_seed
from bot.store.event_store import EventStore
from bot.store.event_types.decisions import DecisionMade
from bot.store.events import participant_stream
from tests.conftest import TEST_MASTER_KEY
from tests.factories import enrolled

T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)
P = {"nothing": 0.4, "suggest": 0.6}
SEED = draw_seed(TEST_MASTER_KEY)


def tandem(*args: str, url: str) -> Result:
    """The command in this process (a subprocess costs seconds to start)."""
    env = {"DATABASE_URL": url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    return CliRunner().invoke(cli, list(args), env=env)


def honest(pid: str, index: int, decision: str = "walk_prompt") -> DecisionMade:
    """The point as the engine logs it, drawn with the deployment's seed."""
    u = uniform_draw(SEED.key, pid, decision, index)
    return DecisionMade(
        intervention="walk-mrt", decision=decision, index=index,
        scheduled_for=T0 + timedelta(hours=index), available=True, probabilities=P,
        option=choose(P, u), u=u, moderators={"stress": 3}, seed=SEED.fingerprint,
    )  # fmt: skip


def test_check_passes_honest_draws_and_names_the_point_whose_option_was_changed(
    store: EventStore, database_url: str
) -> None:
    people = [enrolled(phone=f"+1415555{n:04d}") for n in range(3)]
    for person in people:
        pid = person.participant_id
        points = [honest(pid, i) for i in range(8)]
        away = DecisionMade(
            decision="walk_prompt", index=8, scheduled_for=T0, available=False,
            unavailable_reason="quiet_hours", seed=SEED.fingerprint,
        )  # fmt: skip
        store.append(participant_stream(pid), [person, *points, away])
    clean = tandem("decisions", "check", url=database_url)
    assert clean.exit_code == 0, clean.output
    assert "0 mismatch(es) in 27 decision point(s) (24 available" in clean.output

    pid = people[1].participant_id
    point = honest(pid, 9)
    flipped = "nothing" if point.option == "suggest" else "suggest"
    store.append(participant_stream(pid), [point.model_copy(update={"option": flipped})])
    found = tandem("decisions", "check", "walk_prompt", url=database_url)
    assert found.exit_code == 1
    assert f"{pid} walk_prompt #9: option '{flipped}' logged" in found.output
    assert "1 mismatch(es) in 28 decision point(s)" in found.output
    other = tandem("decisions", "check", "another", url=database_url)
    assert other.exit_code == 0 and "in 0 decision point(s)" in other.output


def test_a_changed_draw_another_seed_and_an_unavailable_point_with_an_option_are_mismatches() -> (
    None
):
    pid = "p1"
    moved = honest(pid, 0).model_copy(update={"u": 0.999})
    foreign = honest(pid, 1).model_copy(update={"seed": "sha256:0000"})
    drawn = DecisionMade(
        decision="walk_prompt", index=2, scheduled_for=T0, available=False,
        unavailable_reason="takeover", option="suggest", u=0.2,
    )  # fmt: skip
    found = check_points(SEED, [(pid, moved), (pid, foreign), (pid, drawn), (pid, honest(pid, 3))])
    assert [(m.index, m.problem.split(" ")[0]) for m in found] == [
        (0, "the"), (1, "drawn"), (2, "unavailable")
    ]  # fmt: skip
    assert "the draw logged is 0.999" in str(found[0])


def test_the_draw_is_checked_in_declared_order_whatever_order_the_database_gives_the_keys() -> None:
    """PostgreSQL's jsonb gives {"tip": 0.7, "nothing": 0.3} back shorter keys first."""
    declared = {"nothing": 0.3, "tip": 0.7}
    pid = next(f"p{n}" for n in range(100) if uniform_draw(SEED.key, f"p{n}", "d", 0) < 0.3)
    u = uniform_draw(SEED.key, pid, "d", 0)
    logged = DecisionMade(
        decision="d", index=0, scheduled_for=T0, available=True, option=choose(declared, u),
        u=u, seed=SEED.fingerprint, probabilities={"tip": 0.7, "nothing": 0.3},
    )  # fmt: skip
    assert logged.option == "nothing"
    assert (
        check_points(SEED, [(pid, logged.model_copy(update={"options": ["nothing", "tip"]}))]) == []
    )
    assert len(check_points(SEED, [(pid, logged)])) == 1  # an event without the order
