"""The soak's processes in the Procfile's layout (gunicorn + 2 `tandem worker`), started,
killed (SIGKILL) and restarted, with their resident memory read from /proc (Linux)."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import text

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def procfile(process: str) -> list[str]:
    """The words of the Procfile's line for `process`: the layout soaked is the one deployed."""
    line = next(
        line
        for line in (ROOT / "Procfile").read_text().splitlines()
        if line.startswith(f"{process}:")
    )
    return shlex.split(line.removeprefix(f"{process}:"))


def web_command(port: int) -> list[str]:
    """The Procfile's web line (gunicorn, its options) on loopback at `port`, from this venv."""
    words = procfile("web")
    at = words.index("--bind")
    words[at + 1] = f"127.0.0.1:{port}"
    return [str(BIN / words[0]), *words[1:]]


def worker_command() -> list[str]:
    command, *options = procfile("worker")
    return [str(BIN / command), *options]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_kib(pid: int) -> int | None:
    """The resident set size of `pid` in KiB, or None if it has ended."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (gunicorn's workers under its master)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as found:
            return [int(p) for p in found.read().split()]
    except OSError:
        return []


@dataclass
class Proc:
    """One role's process (web or worker-N), restarted after each kill."""

    role: str
    command: list[str]
    env: dict[str, str]
    log: Path
    popen: subprocess.Popen | None = None
    started_at: datetime | None = None  # simulated
    warm: dict[int, int] = field(default_factory=dict)  # pid -> RSS (KiB) after its warm-up
    since: dict[int, datetime] = field(default_factory=dict)  # pid -> (simulated) warm-up start
    generation: int = 0

    def start(self, now: datetime) -> None:
        self.generation += 1
        with self.log.open("a") as out:
            out.write(f"--- {self.role} #{self.generation} started at simulated {now}\n")
            out.flush()
            self.popen = subprocess.Popen(
                self.command,
                env={**self.env, "PGAPPNAME": f"soak-{self.role}"},
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.started_at = now
        self.warm, self.since = {}, {}

    def warm_again(self, now: datetime) -> None:
        """Start its warm-up anew (it took over a leader's work: the scheduler's)."""
        self.warm = {}
        self.since = {pid: now for pid in self.pids()}

    def pids(self) -> list[int]:
        """The process and, for gunicorn, its workers."""
        if self.popen is None or self.popen.poll() is not None:
            return []
        return [self.popen.pid, *children(self.popen.pid)]

    def kill(self) -> None:
        """SIGKILL the process (for gunicorn: the master alone, as a crash would), reap it,
        and wait until what it started has gone too (gunicorn's workers leave when they see
        their master gone), so that its port is free again."""
        assert self.popen is not None
        orphans = children(self.popen.pid)
        os.kill(self.popen.pid, signal.SIGKILL)
        self.popen.wait()
        deadline = time.monotonic() + 30
        while any(rss_kib(p) is not None for p in orphans) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in orphans:  # still there after 30 s: a crash takes them too
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(20)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


LEADERS = """
SELECT k.name, a.application_name
FROM (VALUES ('scheduler'), ('broadcaster')) AS k(name)
JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted
  AND l.objid::bigint = (hashtextextended('tandem:' || k.name, 0) & 4294967295)
  AND l.classid::bigint = ((hashtextextended('tandem:' || k.name, 0) >> 32) & 4294967295)
JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""


def leaders(conn: Any) -> dict[str, str]:
    """Which process (its PGAPPNAME: soak-<role>) holds each leadership's advisory lock."""
    return {name: app for name, app in conn.execute(text(LEADERS)).all()}


def _cluster() -> tuple[str, str] | str:
    """(version, name) of the local PostgreSQL cluster (the newest), or why there is none."""
    clusters = Path("/etc/postgresql")
    versions = sorted(p.name for p in clusters.iterdir()) if clusters.is_dir() else []
    if not versions:
        return "no cluster under /etc/postgresql"
    names = sorted(p.name for p in (clusters / versions[-1]).iterdir() if p.is_dir())
    if not names:
        return f"no cluster under /etc/postgresql/{versions[-1]}"
    return versions[-1], names[0]


def can_restart_postgres() -> str | None:
    """None if this process can restart the local cluster, else why not."""
    if shutil.which("pg_ctlcluster") is None:
        return "no pg_ctlcluster on PATH"
    if os.geteuid() != 0:
        return "pg_ctlcluster restart needs root (or the postgres user)"
    found = _cluster()
    return found if isinstance(found, str) else None


def restart_postgres() -> str | None:
    """Restart the local PostgreSQL cluster (pg_ctlcluster); None if done, else why not."""
    cannot = can_restart_postgres()
    found = _cluster()
    if cannot is not None or isinstance(found, str):
        return cannot or str(found)
    version, name = found
    done = subprocess.run(
        ["pg_ctlcluster", version, name, "restart"], capture_output=True, text=True
    )
    if done.returncode != 0:
        return f"pg_ctlcluster {version} {name} restart: {done.stderr.strip()[:200]}"
    return None
