"""The main thread's wait for a stop (bot.runtime.stopping): a signal stops it whichever thread
the kernel hands the signal to."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator

import pytest

from bot.runtime.stopping import StopRequest

ASKED = signal.SIGUSR2  # a signal nothing else in the suite handles


@pytest.fixture
def request_on_signal() -> Iterator[StopRequest]:
    previous = signal.getsignal(ASKED)
    stop = StopRequest()
    stop.on_signals(ASKED)
    try:
        yield stop
    finally:
        signal.signal(ASKED, previous)


def _in_thread(target) -> threading.Thread:  # noqa: ANN001
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_a_signal_delivered_to_another_thread_stops_the_wait(
    request_on_signal: StopRequest,
) -> None:
    """A thread-directed signal, as the kernel may deliver a process-directed one: the main
    thread's untimed `Event.wait()` was never woken by it."""
    released = threading.Event()
    other = _in_thread(lambda: released.wait(30))

    def send() -> None:
        time.sleep(0.2)  # the main thread is waiting by then
        assert other.ident is not None
        signal.pthread_kill(other.ident, ASKED)

    _in_thread(send)
    try:
        assert request_on_signal.wait(timeout=10)
    finally:
        released.set()
    assert request_on_signal.signal == ASKED
    assert request_on_signal.is_set()


def test_a_signal_to_the_waiting_main_thread_stops_the_wait(
    request_on_signal: StopRequest,
) -> None:
    main = threading.main_thread().ident
    assert main is not None

    def send() -> None:
        time.sleep(0.2)
        signal.pthread_kill(main, ASKED)

    _in_thread(send)
    assert request_on_signal.wait(timeout=10)
    assert request_on_signal.signal == ASKED


def test_another_thread_can_ask_for_the_stop() -> None:
    stop = StopRequest()

    def ask() -> None:
        time.sleep(0.2)
        stop.set()

    _in_thread(ask)
    assert stop.wait(timeout=10)
    assert stop.signal is None


def test_the_wait_ends_at_its_timeout_when_nobody_asks() -> None:
    stop = StopRequest()
    assert not stop.wait(timeout=0.3)
    assert not stop.is_set()
