"""`tandem broadcast`: a dry run records nothing; create, list, show and cancel go through
the same service as the API."""

from __future__ import annotations

from click.testing import CliRunner

from bot.cli.main import cli
from bot.store.event_store import EventStore
from tests.conftest import TEST_MASTER_KEY
from tests.services.broadcasting import enroll


def test_create_dry_run_list_show_and_cancel(database_url: str, store: EventStore) -> None:
    enroll(store, 1, name="Ada")
    enroll(store, 2, name="Bo")
    env = {"DATABASE_URL": database_url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    run = CliRunner()

    dry = run.invoke(
        cli, ["broadcast", "create", "--message", "Hi {{ participant.name }}", "--dry-run"], env=env
    )
    assert dry.exit_code == 0, dry.output
    assert "dry run: 2 recipients" in dry.output and "Hi Ada" in dry.output
    assert run.invoke(cli, ["broadcast", "list"], env=env).output == ""

    made = run.invoke(cli, ["broadcast", "create", "--message", "Walk!", "--at", "18:00"], env=env)
    assert made.exit_code == 0, made.output
    bid = made.output.split()[1].rstrip(":")
    listed = run.invoke(cli, ["broadcast", "list"], env=env).output
    assert bid in listed and "pending 2" in listed
    shown = run.invoke(cli, ["broadcast", "show", bid], env=env)
    assert '"recipients": 2' in shown.output
    assert run.invoke(cli, ["broadcast", "cancel", bid], env=env).exit_code == 0
    again = run.invoke(cli, ["broadcast", "cancel", bid], env=env)
    assert again.exit_code == 1 and "cancelled already" in again.output


def test_a_bad_condition_is_refused_by_name(database_url: str, store: EventStore) -> None:
    enroll(store, 1)
    args = ["broadcast", "create", "--message", "x", "--condition", "profile.nope == 1"]
    refused = CliRunner().invoke(
        cli, args, env={"DATABASE_URL": database_url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    )
    assert refused.exit_code == 1 and "unknown name" in refused.output


def test_a_step_broadcast_is_dry_run_and_an_unknown_step_refused(
    database_url: str, store: EventStore
) -> None:
    enroll(store, 1, name="Ada", intervention="walk-control")
    env = {"DATABASE_URL": database_url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    dry = CliRunner().invoke(
        cli, ["broadcast", "create", "--step", "welcome", "--dry-run"], env=env
    )
    assert dry.exit_code == 0, dry.output
    assert "dry run: 1 recipients" in dry.output and "Hi Ada, welcome" in dry.output
    refused = CliRunner().invoke(cli, ["broadcast", "create", "--step", "tips"], env=env)
    assert refused.exit_code == 1 and "no step 'tips' in walk-control" in refused.output
