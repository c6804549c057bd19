"""`tandem serve` runs its workers, dispatcher and scheduler in a child process it starts and
stops: the real command in a subprocess, on SQLite, with the console messenger."""

from __future__ import annotations

import contextlib
import fcntl
import json
import multiprocessing
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from bot.core.config import ENV_NAMES, load_settings
from bot.core.signals import Signals
from bot.runtime.background import STACKS_SIGNAL, Background, _wake_from, wake_bytes
from bot.runtime.threads import RuntimeOptions
from tests.cli.local_http import free_port, post

PHONE = "+14155552671"
DEADLINE = 120  # seconds a step may take on a loaded machine before the test gives up


def _until(condition, what: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def _children(pid: int) -> list[int]:
    """The processes multiprocessing spawned for `pid` (not its resource tracker)."""
    path = Path(f"/proc/{pid}/task/{pid}/children")
    children = [int(p) for p in path.read_text().split()] if path.exists() else []
    return [c for c in children if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for its parent to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def _scheduler_holder(db: Path) -> str | None:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT holder FROM leases WHERE name = 'scheduler'").fetchone()
    return row[0] if row else None


def _stop_between_writes(db: Path, pid: int) -> None:
    """SIGSTOP `pid` while it holds no writer lock of `db`: stopped inside a write transaction
    (or between passing the writer gate and letting it go), it would hold up every other
    writer until it ran again. The test takes the gate and the writer lock as a first writer
    does (bot/store/database.py), stops the process, waits until every thread of it has
    stopped (a signal is delivered later than kill returns: a thread woken by our unlock could
    take the lock first), and lets both go."""
    with contextlib.ExitStack() as held:
        for path in (f"{db}-writer-gate", f"{db}-writer"):
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            held.callback(os.close, fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.kill(pid, signal.SIGSTOP)
        _until(lambda: _all_stopped(pid), "the background process did not stop")


def _all_stopped(pid: int) -> bool:
    states = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):  # a thread that ended meanwhile
            states.append((task / "stat").read_text().rsplit(")", 1)[1].split()[0])
    return all(state in "tT" for state in states)


class Serve:
    """`tandem serve --port P` in a subprocess, with TANDEM_INSECURE_LOCAL and a file database."""

    def __init__(self, tmp_path: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.db = tmp_path / "tandem.db"
        self.out, self.err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
        clean = {k: v for k, v in os.environ.items() if k not in ENV_NAMES}
        env = {**clean, "TANDEM_INSECURE_LOCAL": "true", "DATABASE_URL": f"sqlite:///{self.db}"}
        with self.out.open("w") as stdout, self.err.open("w") as stderr:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", "from bot.cli.main import main; main()", "serve"]
                + ["--port", str(self.port)],
                cwd=tmp_path,
                env=env,
                stdout=stdout,
                stderr=stderr,
            )

    def up(self) -> None:
        def answers() -> bool:
            assert self.proc.poll() is None, self.err.read_text()
            try:
                urllib.request.urlopen(self.base + "/health", timeout=5).close()
            except OSError:
                return False
            return True

        _until(answers, "serve did not answer /health")

    def child(self) -> int:
        _until(lambda: len(_children(self.proc.pid)) == 1, "no background process")
        (pid,) = _children(self.proc.pid)
        return pid

    def text(self, body: str, sid: str) -> int:
        form = {"From": PHONE, "To": "+15005550006", "MessageSid": sid, "Body": body}
        inbound = urllib.parse.urlencode(form).encode()
        url = self.base + "/webhooks/twilio/inbound"
        return post(url, inbound, "application/x-www-form-urlencoded")

    def enroll(self) -> None:
        body = json.dumps({"phone_number": PHONE, "timezone": "America/Toronto"}).encode()
        assert post(self.base + "/conversation/participants", body, "application/json") == 201

    def stop(self, sig: int = signal.SIGINT) -> int:
        """Its exit code once `sig` stopped it. If it does not stop, the test fails with the
        stacks of its threads and its child's (SIGUSR1: `faulthandler`) and its stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            for pid in (*_children(self.proc.pid), self.proc.pid):
                with contextlib.suppress(ProcessLookupError):  # one of them ended meanwhile
                    os.kill(pid, STACKS_SIGNAL)
            time.sleep(2)
            pytest.fail(f"serve did not stop on signal {sig}; its stderr:\n{self.err.read_text()}")


@pytest.fixture
def serve(tmp_path: Path):  # noqa: ANN201
    running = Serve(tmp_path)
    yield running
    if running.proc.poll() is None:
        running.proc.kill()
        running.proc.wait()


def test_turns_run_in_a_child_at_lower_priority_and_ctrl_c_stops_both(serve: Serve) -> None:
    if os.getpriority(os.PRIO_PROCESS, 0) >= 19:
        pytest.skip("run at the lowest priority already: the child cannot go lower")
    serve.up()
    child = serve.child()
    # The child lowers its own priority as it starts.
    _until(lambda: _nice(child) > _nice(serve.proc.pid), "the child is not at a lower priority")
    for thread in Path(f"/proc/{child}/task").iterdir():  # every thread of it
        assert _nice(int(thread.name)) == _nice(child), thread.name
    # The scheduler campaigns from the child: its lease names the child's pid, not serve's.
    _until(lambda: _scheduler_holder(serve.db) is not None, "no scheduler lease")
    holder = _scheduler_holder(serve.db)
    assert f":{child}:" in holder and f":{serve.proc.pid}:" not in holder

    serve.enroll()
    # A webhook is recorded while the background process cannot run at all.
    _stop_between_writes(serve.db, child)
    try:
        assert serve.text("hello", "SM0001") == 200
        assert f"<-- {PHONE} (sms): hello" in serve.out.read_text()  # shown by the web process
    finally:
        os.kill(child, signal.SIGCONT)
    # The child's worker took the message and its dispatcher printed the reply.
    _until(lambda: "Reply with a number" in serve.out.read_text(), serve.out.read_text())

    assert serve.stop(signal.SIGINT) == 0, serve.err.read_text()  # with any stacks: why
    assert not _alive(child)
    assert "stopping…" in serve.out.read_text().splitlines()
    assert "did not stop" not in serve.err.read_text()  # it stopped when asked, not killed


def test_serve_and_its_child_write_their_threads_stacks_on_sigusr1_and_go_on(serve: Serve) -> None:
    """What `Background.stop` asks of a child that does not stop, before it terminates it."""
    serve.up()
    child = serve.child()
    _until(lambda: _scheduler_holder(serve.db) is not None, "the child has not started")
    os.kill(child, STACKS_SIGNAL)
    _until(lambda: "_wake_from" in serve.err.read_text(), "no stacks on stderr")
    assert "most recent call first" in serve.err.read_text()
    assert _alive(child)  # SIGUSR1's default action would have ended it
    # serve's own process answers it too.
    os.kill(serve.proc.pid, STACKS_SIGNAL)
    _until(lambda: "_stop_when_gone" in serve.err.read_text(), "no stacks of serve's threads")
    assert serve.proc.poll() is None
    assert serve.stop(signal.SIGINT) == 0, serve.err.read_text()  # with any stacks: why


def test_serve_and_its_child_freeze_their_startup_heap_before_they_serve(serve: Serve) -> None:
    """bot.runtime.heap: the web process before it serves, the child before its threads start
    (the scheduler's lease is taken by one of them)."""
    serve.up()
    serve.child()
    _until(lambda: _scheduler_holder(serve.db) is not None, "the child has not started")
    found = re.findall(r"froze (\d+) startup objects", serve.err.read_text())
    assert len(found) == 2 and min(int(n) for n in found) > 10_000, serve.err.read_text()
    assert serve.stop(signal.SIGINT) == 0, serve.err.read_text()


def _background(tmp_path: Path) -> Background:
    """A `Background` of one worker on a SQLite file in `tmp_path`, not started."""
    settings = load_settings({"DATABASE_URL": f"sqlite:///{tmp_path / 'tandem.db'}"}, None)
    return Background(settings, RuntimeOptions(workers=1))


def test_a_child_that_does_not_stop_is_terminated_then_killed(tmp_path: Path) -> None:
    """A stopped child neither reads the pipe's end nor acts on SIGTERM: `stop()` kills it
    rather than leave `tandem serve` waiting for it for ever."""
    background = _background(tmp_path)
    background.start()
    child = background.process.pid
    assert child is not None
    try:
        os.kill(child, signal.SIGSTOP)
        assert background.stop(timeout=0.5, grace=0.5) == -signal.SIGKILL
        assert not _alive(child)
    finally:
        if background.process.is_alive():
            background.process.kill()
            background.process.join()


def test_the_child_stops_when_serve_is_killed(serve: Serve) -> None:
    serve.up()
    child = serve.child()
    serve.proc.kill()  # no chance to stop the child: it sees its pipe close
    serve.proc.wait()
    _until(lambda: not _alive(child), "the background process outlived serve")


def test_serve_stops_when_its_child_dies(serve: Serve) -> None:
    serve.up()
    os.kill(serve.child(), signal.SIGKILL)
    code = serve.proc.wait(timeout=DEADLINE)
    assert code != 0
    assert "the background process" in serve.err.read_text()


def test_a_commit_wakes_the_child_threads_that_wait_for_what_it_made() -> None:
    def typed(*names: str) -> list[SimpleNamespace]:
        return [SimpleNamespace(event_type=n) for n in names]

    assert wake_bytes(typed("message.received")) == b"w"
    assert wake_bytes(typed("message.queued", "timer.scheduled")) == b"ot"
    assert wake_bytes(typed("message.status")) == b""


def test_the_child_wakes_on_each_byte_and_stops_when_the_pipe_closes() -> None:
    reader, writer = multiprocessing.Pipe(duplex=False)
    signals, stop = Signals(), threading.Event()
    os.write(writer.fileno(), b"wt")
    writer.close()
    _wake_from(reader, signals, stop)  # returns at the pipe's end
    assert stop.is_set()
    assert signals.work.wait(0) and signals.timers.wait(0)
    assert not signals.outbox.wait(0)


def test_a_wake_up_that_finds_the_pipe_broken_closes_its_end(tmp_path: Path) -> None:
    background = _background(tmp_path)  # not started: no child
    background._reader.close()  # as a child that died would leave it  # noqa: SLF001
    background._open = True  # noqa: SLF001
    background.committed([SimpleNamespace(event_type="message.received")])
    assert background._writer.closed  # noqa: SLF001
