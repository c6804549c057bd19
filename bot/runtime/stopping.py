"""How a long-running command's main thread waits to be told to stop: by a signal (Ctrl-C,
SIGTERM) or by one of its own threads.

Not `threading.Event.wait()` with a handler that sets the event, which is how `tandem serve`,
`tandem worker` and serve's background child waited before. It has two flaws:

- Python runs signal handlers in the main thread only, when that thread next runs bytecode.
  The kernel hands a signal sent to the process to any thread that does not block it. When
  that is not the main thread, a main thread blocked in an untimed wait is never woken. The
  handler never runs, and the process ignores Ctrl-C for good. (Linux picks another thread only
  when the main thread already has a signal pending: rare, not impossible. CI once saw
  `tandem serve` not end within 120 s of a SIGINT; that was not reproduced, so which flaw, if
  either, was the cause is not known: `Background.stop` ends a stuck child as well, and
  `Scheduler.stop` no longer deadlocks with APScheduler, which could leave the child stuck.)
- `Event.set()` takes the lock that `Event.wait()` holds around its checks. A handler that runs
  inside that window, on the same thread, waits for itself.

So the handler here only notes the signal (no lock), and the main thread waits in short slices.
Between slices it runs bytecode, so a noted signal is seen within `SLICE` seconds whichever
thread the kernel chose.
"""

from __future__ import annotations

import signal
import threading
import time

SLICE = 0.2  # seconds the main thread waits before it looks at the signals again


class StopRequest:
    """A stop asked for by a signal or by any thread; `wait()` is for the main thread."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.signal: int | None = None  # the signal that asked, if one did

    def on_signals(self, *signals: int) -> None:
        """Stop on each of `signals` (only from the main thread, as `signal.signal` is)."""
        for sig in signals:
            signal.signal(sig, self._noted)

    def _noted(self, signum: int, _frame: object) -> None:
        self.signal = signum  # an assignment: no lock, whatever the main thread was holding

    def set(self) -> None:
        """Ask for the stop (from any thread but a signal handler)."""
        self._event.set()

    def is_set(self) -> bool:
        return self.signal is not None or self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a stop is asked for (True) or `timeout` seconds pass (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.is_set():
            left = SLICE if deadline is None else min(SLICE, deadline - time.monotonic())
            if left <= 0:
                return False
            self._event.wait(left)
        return True
