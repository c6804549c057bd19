"""The composition root: builds the real adapters from settings and wires them together."""

from __future__ import annotations

import logging

from bot.conversation import memory
from bot.core.clock import Clock, clock_for, is_simulated
from bot.core.config import ConfigError, Settings
from bot.core.log_config import LOG_FORMAT
from bot.keys.rotation import index_missing_phones
from bot.store import key_check
from bot.store.database import WriterPriority, make_engine
from bot.store.event_store import EventStore
from bot.store.projections import columns
from bot.store.sealing import Sealer
from bot.store.services import Services

log = logging.getLogger(__name__)


def configure_logging(settings: Settings) -> None:
    logging.basicConfig(
        level=settings.log_level,
        format=LOG_FORMAT,
    )


def register_column_folds() -> None:
    """Hand the store the folds of the participants-row columns a layer above it owns (the
    conversation's `memory`), before any store of this process folds an event (again: no
    change). Every store is built after it: here, and in the tests' and benches' setup."""
    columns.register(memory.COLUMN_FOLD)


def build_store(
    settings: Settings,
    clock: Clock | None = None,
    *,
    writer_priority: WriterPriority | None = None,
) -> EventStore:
    """The event store on the configured database, with every projection, sealing personal
    data under TANDEM_MASTER_KEY (required with MESSENGER=twilio: real participants); on
    SQLite its writers wait for the writer lock with `writer_priority` (`tandem serve`)."""
    check_master_key(settings)
    register_column_folds()
    store = EventStore(
        make_engine(settings.database_url, writer_priority=writer_priority),
        clock=clock or clock_for(settings.clock_file),
        sealer=Sealer(settings.master_key),
    )
    try:
        verify_keys(store)
    except BaseException:
        store.engine.dispose()
        raise
    return store


def verify_keys(store: EventStore) -> None:
    """Refuse (`KeyCheckFailed`, one line naming the key ids) a TANDEM_MASTER_KEY that is not
    the database's, or none where data is sealed (bot.store.key_check)."""
    key_check.verify(store.engine, store.sealer, store.clock.now())


def check_master_key(settings: Settings) -> None:
    """Refuse a production start without a master key."""
    if not settings.master_key and settings.messenger == "twilio":
        raise ConfigError(
            [
                "TANDEM_MASTER_KEY: MESSENGER=twilio needs a master key to seal participants' "
                "personal data (generate one with `tandem keys generate`; docs/operations.md)"
            ]
        )


def settings_clock(settings: Settings) -> Clock:
    """The process's clock: the wall clock, or TANDEM_CLOCK's simulated one (the settings
    allow it only with TANDEM_SIMULATION), said loudly at start."""
    clock = clock_for(settings.clock_file)
    if is_simulated(clock):
        log.warning(
            "the clock is SIMULATED: the time is read from TANDEM_CLOCK=%s (TANDEM_SIMULATION; "
            "a benchmark, never production); now %s",
            settings.clock_file,
            clock.now().isoformat(),
        )
    return clock


def build_services(
    settings: Settings,
    *,
    clock: Clock | None = None,
    store: EventStore | None = None,
    sandbox: bool = False,
    writer_priority: WriterPriority | None = None,
) -> Services:
    """Wire the store, the clock and this process's wake-ups; a serving process without a
    master key says at start that it stores personal data unsealed (not `sandbox`, the
    throwaway database of `tandem chat`)."""
    clock = clock or settings_clock(settings)
    register_column_folds()
    if store is None:
        store = build_store(settings, clock, writer_priority=writer_priority)
        index_missing_phones(store)
        if not settings.master_key and not sandbox:
            log.warning(
                "TANDEM_MASTER_KEY is not set: personal data is stored unsealed and cannot be "
                "erased (development only; `make run` writes one into .env)"
            )
    services = Services(settings=settings, store=store, clock=clock)
    store.listeners.append(services.signals.committed)
    return services
