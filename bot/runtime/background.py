"""`tandem serve`'s background process: its workers, dispatcher and scheduler, in a child.

A turn is CPU work in Python (deciding, rendering, decoding, the store's append). In the web's
process, worker threads held the GIL while webhooks waited for it, and under load the embedded
server answered far fewer webhooks than a no-op endpoint (docs/performance.md, Webhook). So
`tandem serve` runs what `tandem worker` runs in a child process it starts itself, at a lower
CPU priority (`NICENESS`), and keeps only the web app in its own: the web threads have a GIL to
themselves and the first claim on the CPU, the turns take the rest. The child runs at most
`workers` turns at a time, as `tandem worker` does.

Wake-ups cross the process boundary through a pipe: each commit in the web process that creates
work, outbound messages or timers writes a byte (`w`, `o`, `t`) and the child wakes the threads
that wait for it (`bot.core.signals`), so a message is taken at once rather than at the next
poll. A full pipe drops the byte: the child has wake-ups of that kind still to read.

Stopping: the child ignores SIGINT (Ctrl-C reaches the whole process group, and the web must
stop accepting first); `stop()` closes the pipe, the child finishes its current items and exits.
A child whose parent died sees the pipe close too, and stops. SIGTERM to the child stops it.
A child that has not stopped after `stop()`'s timeout is asked for its threads' stacks (SIGUSR1:
`faulthandler` writes them to stderr, where `tandem serve` shows them), then sent SIGTERM, then
killed: `tandem serve` always ends, and says why it took long.
"""

from __future__ import annotations

import faulthandler
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bot.core.config import ConfigError, Settings
from bot.core.signals import OUTBOX_TYPES, TIMER_TYPES, WORK_TYPES, Signals, Typed
from bot.runtime.heap import freeze_startup_heap
from bot.runtime.stopping import StopRequest
from bot.runtime.threads import RuntimeOptions

log = logging.getLogger(__name__)

# The child's nice increment: the web's threads come first when both want the CPU. Not more:
# the child holds the SQLite writer lock for its commits, and a child too far down the run
# queue keeps every webhook waiting behind it (+0, +5 and +10 compared: docs/performance.md).
NICENESS = 5
# How long a thread may keep the GIL while another waits for it (Python's default: 5 ms), in
# both processes of `tandem serve`. A thread back from SQLite with the writer lock held waited
# up to that long for the GIL after each statement while a turn (or another request) computed,
# and every writer queued behind it; a shorter interval cut both the lock waits and the acks'
# tail (docs/performance.md, Webhook).
SWITCH_INTERVAL = 0.0005
# The signal on which the child writes every thread's stack to stderr (`faulthandler`, from C:
# it works while the child's Python threads are stuck), as `stop()` asks before terminating it.
STACKS_SIGNAL = signal.SIGUSR1
CANNOT_START = 3  # the child's exit code when its handler cannot be built (its log says why)
WAKE_WORK, WAKE_OUTBOX, WAKE_TIMERS = b"w", b"o", b"t"
_KINDS = ((WORK_TYPES, WAKE_WORK), (OUTBOX_TYPES, WAKE_OUTBOX), (TIMER_TYPES, WAKE_TIMERS))


def wake_bytes(events: Iterable[Typed]) -> bytes:
    """The wake-up bytes a commit of `events` sends to the background process."""
    types = {e.event_type for e in events}
    return b"".join(byte for kinds, byte in _KINDS if types & kinds)


class Background:
    """The child process that runs `tandem serve`'s background work, seen from the parent."""

    def __init__(
        self, settings: Settings, options: RuntimeOptions, *, niceness: int = NICENESS
    ) -> None:
        context = multiprocessing.get_context("spawn")  # a fresh interpreter: no forked threads
        reader, self._writer = context.Pipe(duplex=False)
        self._reader = reader
        self.process = context.Process(
            target=_run, args=(settings, options, reader, niceness), name="tandem-background"
        )
        self._lock = threading.Lock()
        self._open = False

    def start(self) -> None:
        """Start the child; it ignores Ctrl-C (SIGINT), and stops when `stop()` says so."""
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited across exec
        try:
            self.process.start()
        finally:
            signal.signal(signal.SIGINT, previous)
        self._reader.close()
        os.set_blocking(self._writer.fileno(), False)
        self._open = True

    def committed(self, events: Iterable[Typed]) -> None:
        """A store listener: wake the child's threads that wait for what was committed."""
        wake = wake_bytes(events)
        if not wake:
            return
        with self._lock:
            if not self._open:
                return
            try:
                os.write(self._writer.fileno(), wake)
            except BlockingIOError:
                pass  # the pipe is full: the child has wake-ups of these kinds still to read
            except OSError:
                log.warning("the background process does not take wake-ups any more")
                self._open = False
                self._writer.close()  # as stop() would: the pipe's end, were the child reading

    def wait_exit(self) -> None:
        """Block until the child has exited, without reaping it (`stop()` alone does: two
        threads waiting for one child race, and the loser sees it still alive)."""
        multiprocessing.connection.wait([self.process.sentinel])

    def stop(self, timeout: float = 30.0, grace: float = 10.0) -> int | None:
        """Close the pipe (the child finishes its current items and exits) and wait for it.
        Past `timeout`: have it write its threads' stacks to stderr, terminate it, and kill it
        if it has not ended `grace` seconds later. Its exit code (negative: the signal that
        ended it)."""
        with self._lock:
            if self._open:
                self._open = False
                self._writer.close()
        self.process.join(timeout)
        if not self.process.is_alive():
            return self.process.exitcode
        log.warning(
            "the background process did not stop within %.0f s: its threads' stacks follow "
            "on stderr; terminating it",
            timeout,
        )
        pid = self.process.pid
        assert pid is not None  # started
        try:
            os.kill(pid, STACKS_SIGNAL)
        except ProcessLookupError:  # it ended meanwhile
            pass
        self.process.terminate()
        self.process.join(grace)
        if self.process.is_alive():
            log.error("the background process did not end on SIGTERM either: killing it")
            self.process.kill()
            self.process.join()
        return self.process.exitcode


def lower_priority(by: int) -> None:
    """Lower this process's CPU priority by `by` (its nice value, up to 19): every thread's.
    Linux keeps a nice value per thread, and `os.nice` sets the caller's alone; a thread that
    a library started before (numpy starts OpenBLAS's on import) would keep its own."""
    os.nice(by)
    tasks = Path("/proc/self/task")  # Linux; elsewhere a process has one nice value
    if not tasks.is_dir():
        return
    me = threading.get_native_id()
    for task in tasks.iterdir():
        thread = int(task.name)
        if thread == me:
            continue
        try:
            nice = os.getpriority(os.PRIO_PROCESS, thread)
            os.setpriority(os.PRIO_PROCESS, thread, min(nice + by, 19))
        except ProcessLookupError:  # it ended meanwhile
            continue


def _run(settings: Settings, options: RuntimeOptions, reader: Any, niceness: int) -> None:
    """The child: a `tandem worker` with the parent's settings, stopped by the pipe's end."""
    stop = StopRequest()
    stop.on_signals(signal.SIGTERM)
    faulthandler.register(STACKS_SIGNAL, all_threads=True)
    if niceness:
        lower_priority(niceness)
    sys.setswitchinterval(SWITCH_INTERVAL)
    from bot.channel.factory import build_messenger
    from bot.runtime.bootstrap import build_store, configure_logging, settings_clock
    from bot.runtime.routing import build_handler
    from bot.runtime.threads import Runtime
    from bot.store.services import Services

    configure_logging(settings)
    # The parent built the same store first (it warned about a missing master key and indexed
    # phones): the child only opens it.
    clock = settings_clock(settings)
    store = build_store(settings, clock, writer_priority="yield")  # the web's writes go first
    services = Services(settings=settings, store=store, clock=clock)
    store.listeners.append(services.signals.committed)
    # The learned crisis line loads before the heap is frozen and work is taken; a model that
    # cannot load ends this process with the reason, and the parent stops serving (bot.cli.run).
    try:
        handler = build_handler(services, load_learned=True)
    except ConfigError as exc:
        log.error("%s", exc)
        services.close()
        sys.exit(CANNOT_START)
    runtime = Runtime(services, handler, build_messenger(settings), options)
    waking = threading.Thread(
        target=_wake_from, args=(reader, services.signals, stop), name="wake-ups", daemon=True
    )
    freeze_startup_heap()  # no collection walks it again (bot.runtime.heap)
    runtime.start()
    waking.start()
    stop.wait()
    runtime.stop()
    services.close()


def _wake_from(reader: Any, signals: Signals, stop: StopRequest | threading.Event) -> None:
    """Turn the parent's bytes into wake-ups until the pipe closes, then stop the child."""
    wakeups = {WAKE_WORK: signals.work, WAKE_OUTBOX: signals.outbox, WAKE_TIMERS: signals.timers}
    fd = reader.fileno()
    while True:
        try:
            data = os.read(fd, 256)
        except OSError:
            data = b""
        if not data:
            break
        for byte, wakeup in wakeups.items():
            if byte in data:
                wakeup.notify()
    stop.set()
