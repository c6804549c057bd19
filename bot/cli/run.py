"""`tandem serve` (the web app, and background work in a child process) and `tandem worker`."""

from __future__ import annotations

import faulthandler
import logging
import signal
import sys
import threading
from typing import TYPE_CHECKING

import click

from bot.cli.root import cli, database_errors

if TYPE_CHECKING:
    from bot.core.config import Settings
    from bot.runtime.background import Background
    from bot.runtime.stopping import StopRequest
    from bot.runtime.threads import Runtime, RuntimeOptions
    from bot.store.services import Services

WORKER_THREADS = 4  # `tandem worker`'s worker threads, unless told otherwise
# `tandem worker`'s nice increment, by database engine, unless told otherwise. On PostgreSQL a
# turn's commit locks one participant's row, which only that participant's next webhook waits
# for: the web processes can have the CPU first and the turns the rest (+19 answered more webhooks
# than +5: docs/performance.md, Webhook). On SQLite the worker holds the database's one writer lock
# for its commits, and far down the run queue it keeps every webhook waiting behind it, as `tandem
# serve`'s child did at +10 (bot.runtime.background.NICENESS).
# (SQLite's is bot.runtime.background.NICENESS, written out so that the options are built
# without importing the runtime; tests/cli/test_command_table.py holds the two equal.)
WORKER_NICENESS = {"postgresql": 19, "sqlite": 5}

log = logging.getLogger(__name__)
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _runtime(settings: Settings, services: Services, options: RuntimeOptions) -> Runtime:
    from bot.channel.factory import build_messenger
    from bot.runtime.routing import build_handler
    from bot.runtime.threads import Runtime

    messenger = build_messenger(settings)
    received = getattr(messenger, "received", None)
    if received is not None:  # the console messenger shows what participants send, too
        services.store.listeners.append(received)
    # The learned crisis line loads now, before the worker takes work (a model that cannot
    # load stops it here: ConfigError).
    return Runtime(services, build_handler(services, load_learned=True), messenger, options)


def _ready_to_run() -> StopRequest:
    """`serve`'s and `worker`'s last step before their threads start: Ctrl-C and SIGTERM ask
    it to stop, `kill -USR1` writes every thread's stack to stderr, and the startup heap is
    frozen out of the cyclic collector (bot.runtime.heap)."""
    from bot.runtime.background import STACKS_SIGNAL
    from bot.runtime.heap import freeze_startup_heap
    from bot.runtime.stopping import StopRequest

    stop = StopRequest()
    stop.on_signals(signal.SIGTERM, signal.SIGINT)
    faulthandler.register(STACKS_SIGNAL, all_threads=True)
    freeze_startup_heap()
    return stop


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(1, 65535),
    help="Port to listen on.",
)
@click.option(
    "--workers",
    default=2,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Worker threads handling conversations (in the background process).",
)
@click.option(
    "--migrate/--no-migrate",
    default=True,
    show_default=True,
    help="Upgrade the database schema first.",
)
@database_errors
def serve(host: str, port: int, workers: int, migrate: bool) -> None:
    """Run everything with one command: the web app, workers, the dispatcher and the scheduler.

    The web app serves in this process; the workers, the dispatcher and the scheduler run in
    a child process it starts at a lower CPU priority and stops with it (Ctrl-C stops both).
    This is the zero-configuration mode: SQLite and the console messenger by default, which
    prints the conversation here, one line per message (<-- received, --> sent). Post inbound
    messages to /webhooks/twilio/inbound (see the README); `tandem chat` is a self-contained
    sandbox that needs no server.
    """
    from bot.channel.factory import build_messenger
    from bot.core.config import ConfigError
    from bot.runtime.background import SWITCH_INTERVAL, Background
    from bot.runtime.bootstrap import build_services, configure_logging
    from bot.runtime.routing import intervention_catalogue
    from bot.runtime.startup import startup_settings
    from bot.runtime.threads import RuntimeOptions
    from bot.web import create_app
    from bot.web.server import embedded_server

    catalogue = intervention_catalogue()
    try:  # every problem of the settings and the interventions at once
        settings = startup_settings(catalogue)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if settings.insecure_local and host not in LOOPBACK:
        raise click.ClickException(
            f"TANDEM_INSECURE_LOCAL=true serves without authentication: only on a loopback "
            f"address (127.0.0.1, ::1), not {host}"
        )
    configure_logging(settings)
    # The web's writers go first for SQLite's writer lock; the child's yield (bot.store.database).
    services = build_services(settings, writer_priority="first")
    try:
        app = create_app(services, catalogue)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if migrate:
        from bot.store.migrate import upgrade

        upgrade(services.store.engine)
    server = embedded_server(app, host, port)
    sys.setswitchinterval(SWITCH_INTERVAL)  # a web thread holding the writer lock gets on
    # Turns, sends and timers run in a child process (bot.runtime.background): a turn's CPU
    # work would otherwise hold this process's GIL while webhooks wait.
    background = Background(settings, RuntimeOptions(workers=workers))
    if settings.messenger == "console":  # the conversation is shown here: what arrives...
        from bot.channel.console import ConsoleMessenger

        shown = build_messenger(settings)
        assert isinstance(shown, ConsoleMessenger)
        services.store.listeners.append(shown.received)
    services.store.listeners.append(background.committed)  # ...and wakes the child's threads
    stop = _ready_to_run()
    background.start()
    watching = threading.Thread(
        target=_stop_when_gone, args=(background, stop), name="background-watch", daemon=True
    )
    watching.start()
    serving = threading.Thread(target=server.serve_forever, name="web", daemon=True)
    serving.start()
    click.echo(
        f"Tandem listening on http://{host}:{port} (messenger: {settings.messenger}); "
        "Ctrl-C stops it"
    )
    stop.wait()
    click.echo("stopping…")
    try:
        server.shutdown()
    finally:  # the child stops and the database closes even if the web server's stop failed
        code = background.stop()
        services.close()
    if code:
        raise click.ClickException(f"the background process exited with code {code}")


def _stop_when_gone(background: Background, stop: StopRequest) -> None:
    """Serving without the background process would take messages nobody answers: stop."""
    background.wait_exit()
    if not stop.is_set():
        log.error(
            "the background process (workers, dispatcher, scheduler) exited (%s): stopping",
            background.process.exitcode,
        )
        stop.set()


@cli.command()
@click.option(
    "--workers",
    default=WORKER_THREADS,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Worker threads handling conversations.",
)
@click.option(
    "--dispatchers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 16),
    help="Threads sending outbound messages.",
)
@click.option(
    "--scheduler/--no-scheduler",
    default=True,
    show_default=True,
    help="Campaign to be the one scheduler (only the elected leader runs timers).",
)
@click.option(
    "--niceness",
    default=None,
    type=click.IntRange(0, 19),
    help="Lower this process's CPU priority by this much, so that web processes on the same "
    f"machine answer webhooks first (0: leave it). Default: {WORKER_NICENESS['postgresql']} "
    f"on PostgreSQL, {WORKER_NICENESS['sqlite']} on SQLite, whose one writer lock a worker far "
    "down the run queue would hold while every webhook waits.",
)
@database_errors
def worker(workers: int, dispatchers: int, scheduler: bool, niceness: int | None) -> None:
    """Run background work: conversations, sending, and (if elected) the timer scheduler.

    Run as many worker processes as needed; each participant is handled by one at a time.
    """
    from bot.core.config import ConfigError
    from bot.runtime.background import lower_priority
    from bot.runtime.bootstrap import build_services, configure_logging
    from bot.runtime.routing import intervention_catalogue
    from bot.runtime.startup import startup_settings
    from bot.runtime.threads import RuntimeOptions
    from bot.store.database import backend_name

    try:  # a worker would run participants' interventions: it refuses to start on a bad one,
        # and says every problem of the settings and the interventions at once
        settings = startup_settings(intervention_catalogue())
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if niceness is None:  # the settings refuse a DATABASE_URL of any other engine
        niceness = WORKER_NICENESS[backend_name(settings.database_url)]
    if niceness:
        # A turn is milliseconds of CPU that can wait; an ack that waits behind turns makes
        # Twilio time out and redeliver (bot.runtime.background, as `tandem serve`'s child).
        lower_priority(niceness)
    configure_logging(settings)
    services = build_services(settings)
    try:
        runtime = _runtime(
            settings,
            services,
            RuntimeOptions(workers=workers, dispatchers=dispatchers, scheduler=scheduler),
        )
    except ConfigError as exc:
        services.close()
        raise click.ClickException(str(exc)) from None
    stop = _ready_to_run()
    runtime.start()
    click.echo(f"Tandem worker running ({workers} workers, {dispatchers} dispatchers)")
    stop.wait()
    runtime.stop()
    services.close()
