"""Benchmark the inbound webhook beside a no-op endpoint under the same server, open-loop.

Two layouts (a third on request), each beside its baseline served the same way:
- `tandem serve` (SQLite; the web app in its process, workers in the child it starts) beside
  `bench/noop.py` on the same embedded server, with the same GIL switch interval;
- gunicorn + `tandem worker` (PostgreSQL, the Procfile: its web line's gunicorn options, read
  from it) beside `gunicorn bench.noop:app` with the same options;
- `web` (not run unless asked): the same gunicorn with no worker at all, so that the acks alone
  have the machine (the turns wait in the queue, unread): what the web path costs without the
  conversation work beside it on the same cores.
A separate load process sends signed Twilio inbound requests over loopback at 50, 200 and 500
requests/s, open-loop: every request is built and signed before the clock starts, is sent at its
scheduled time, and its ack latency runs from that scheduled time (so time spent queueing, in
the client or the server, counts). Tandem and the no-op alternate round by round; after each
Tandem round the bench waits for the worker to drain the queue, so the next round starts quiet.
Personal data is sealed under a master key, as in production. Participants are enrolled in
habit-coach, whose intake module calls the LLM (a scripted OpenAI-compatible server that
replies at once, in a process of its own at the lowest CPU priority: it stands in for a remote
service), so every message is a real turn. Each row also gives how busy the machine's CPU was
while the load ran (every process's: servers, database, worker, the load itself): near 100 %, a
layout's latency is the machine's capacity, not waits in Tandem. And the CPU that a layout's
own processes spent, read from /proc (Linux): its web processes' during the round, per request
answered ("web CPU", the no-op's too), and its conversation workers' from the round's start
until the queue drained, per message answered ("worker CPU ... ms/turn"). One web process
answers at most 1,000 / (its web CPU in ms) requests a second, whatever its threads.
On PostgreSQL each Tandem round also samples pg_stat_activity every LOCK_SAMPLE seconds for
the web's sessions waiting on a lock, and who holds it (`pg_blocking_pids`; each process names
its sessions by PGAPPNAME): "web waits on locks" is the mean number of the web's sessions
waiting at a sample (the rounds pooled), behind a worker's session and behind another web
session, and the share of those waits whose holder was idle in its transaction: its process,
not the database, had to run before the lock could go (a worker at nice 19 on a busy machine,
holding a participant's row lock, is a priority inversion this shows). The no-op's rounds run
the same sampling (finding nothing), so that both pay for its queries.
Run by hand: `python bench/webhook.py [--seconds 10] [--rounds 2] [--rates 50,200,500]
[--layouts serve,production,web]`.
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing as mp
import os
import shlex
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import requests  # noqa: E402
from sqlalchemy import create_engine, func, select  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402
from twilio.request_validator import RequestValidator  # noqa: E402

from bench.common import database, percentile, scripted_llm, wait_up  # noqa: E402
from bot.store.schema import work_items  # noqa: E402
from tests.fakes.openai_api import ScriptedReply  # noqa: E402

TOKEN, AUTH = "bench-api-token-" + "x" * 32, "bench-auth-token"  # API tokens: 32+ characters
MASTER_KEY = "YmVuY2gtbWFzdGVyLWtleS0wMTIzNDU2Nzg5YWJjZGVm"  # 32+ characters, a bench's own
PARTICIPANTS = 200
# How often a Tandem round on PostgreSQL samples the web's lock waits (`_LockWaits`).
LOCK_SAMPLE = 0.05
BIN = Path(sys.executable).parent
PATH = "/webhooks/twilio/inbound"
LAYOUTS = {"serve", "production", "web"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _requests(url: str, total: int, phones: list[str], tag: str) -> list[tuple[bytes, str]]:
    """Every request body and its signature, made before the run."""
    validator = RequestValidator(AUTH)
    out = []
    for n in range(total):
        form = {
            "MessageSid": f"SM{tag}{os.getpid():06x}{n:020x}"[:34],
            "From": phones[n % len(phones)],
            "To": "+15005550006",
            "Body": f"message {n}",
            "NumMedia": "0",
        }
        out.append((urlencode(form).encode(), validator.compute_signature(url + PATH, form)))
    return out


def _load(url: str, rate: int, seconds: float, phones: list[str], tag: str, out: mp.Queue) -> None:
    """Open-loop load: request n is due at start + n/rate; latency counts from then."""
    prepared = _requests(url, int(rate * seconds), phones, tag)
    host, port = url.removeprefix("http://").split(":")
    local = threading.local()
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()

    def send(due: float, body: bytes, signature: str) -> None:
        conn = getattr(local, "conn", None)
        ok = False
        for _ in range(2):  # a kept-alive connection the server closed: reconnect once
            try:
                if conn is None:
                    conn = local.conn = http.client.HTTPConnection(host, int(port), timeout=15)
                conn.request(
                    "POST",
                    PATH,
                    body,
                    {
                        "Content-Type": "application/x-www-form-urlencoded",
                        "X-Twilio-Signature": signature,
                    },
                )
                response = conn.getresponse()
                response.read()
                ok = response.status == 200
                break
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = local.conn = None
        done = time.perf_counter()
        with lock:
            if ok:
                latencies.append(done - due)
            else:
                errors[0] += 1

    before = _cpu_times()
    with ThreadPoolExecutor(max_workers=128) as pool:
        start = time.perf_counter() + 0.1
        for n, (body, signature) in enumerate(prepared):
            due = start + n / rate
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            pool.submit(send, due, body, signature)
    out.put((latencies, errors[0], time.perf_counter() - start, _busy(before, _cpu_times())))


def _cpu_times() -> tuple[int, int] | None:
    """(all, idle) CPU time of the whole machine so far, in ticks (/proc/stat: Linux), or
    None where there is no /proc/stat."""
    try:
        with open("/proc/stat") as stat:
            ticks = [int(t) for t in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return sum(ticks), ticks[3] + ticks[4]  # idle and iowait


def _busy(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float:
    """The share of the machine's CPU time that was busy between two `_cpu_times` (every
    process's: the servers, the database, the load itself), in %; NaN if unknown."""
    if before is None or after is None or after[0] == before[0]:
        return float("nan")
    return 100 * (1 - (after[1] - before[1]) / (after[0] - before[0]))


def _tree_cpu(roots: list[int]) -> dict[str, float] | None:
    """CPU seconds so far (user and system) of the processes started (`roots`) and of every
    process under them, by role: "worker" for conversation workers (`tandem worker`, or the
    process `tandem serve` starts for them, a multiprocessing spawn, and theirs), "web" for
    the rest (the server, gunicorn's worker processes, multiprocessing's resource tracker);
    None where there is no /proc (not Linux). A process that ended since is not in it."""
    procs: dict[int, tuple[int, float, bytes]] = {}  # pid -> (parent, CPU seconds, command line)
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return None
    tick = os.sysconf("SC_CLK_TCK")  # /proc's CPU times are in clock ticks
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read()
        except OSError:
            continue  # ended meanwhile
        procs[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick, command)
    children: dict[int, list[int]] = {}
    for pid, (parent, _cpu, _cmd) in procs.items():
        children.setdefault(parent, []).append(pid)
    found = {"web": 0.0, "worker": 0.0}
    todo = [(pid, "web") for pid in roots if pid in procs]
    while todo:
        pid, role = todo.pop()
        _parent, cpu, command = procs[pid]
        if b"tandem\x00worker" in command or b"multiprocessing.spawn" in command:
            role = "worker"
        found[role] += cpu
        todo += [(child, role) for child in children.get(pid, [])]
    return found


def _per(before: dict | None, after: dict | None, role: str, count: int) -> float:
    """The CPU ms of `role` between two `_tree_cpu`, per one of `count`; NaN if unknown."""
    if before is None or after is None or not count:
        return float("nan")
    return (after[role] - before[role]) * 1000 / count


def _measure(url: str, rate: int, seconds: float, phones: list[str], tag: str) -> dict:
    out: mp.Queue = mp.Queue()
    proc = mp.Process(target=_load, args=(url, rate, seconds, phones, tag, out))
    proc.start()
    latencies, errors, elapsed, busy = out.get()
    proc.join()
    ms = sorted(x * 1000 for x in latencies) or [float("nan")]
    return {
        "count": len(latencies),
        "answered": len(latencies) / elapsed,
        "p50": percentile(ms, 50),
        "p99": percentile(ms, 99),
        "errors": errors,
        "busy": busy,
    }


class _LockWaits:
    """While entered, on PostgreSQL, every LOCK_SAMPLE s: the sessions of the web's processes
    (application_name "tandem-web") waiting on a lock, each counted by who holds it (a worker's
    session, another web session) and whether the holder was idle in its transaction. On
    SQLite, nothing (its one writer lock is not in any view). The holder's last statement is
    tallied too, by its first words (`_statement`), to say which of its transactions it was."""

    _QUERY = """
        SELECT holder.application_name, holder.state, holder.query
        FROM pg_stat_activity AS waiter
        JOIN pg_stat_activity AS holder ON holder.pid = ANY (pg_blocking_pids(waiter.pid))
        WHERE waiter.datname = current_database() AND waiter.wait_event_type = 'Lock'
          AND waiter.application_name = 'tandem-web'
    """

    def __init__(self, database_url: str) -> None:
        postgresql = make_url(database_url).get_backend_name() == "postgresql"
        self.url = database_url if postgresql else None
        self.samples = 0
        self.behind: dict[str, int] = {"tandem-worker": 0, "tandem-web": 0}
        self.idle = 0  # waits whose holder was idle in its transaction
        self.statements: dict[str, int] = {}  # waits by the holder's last statement
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> _LockWaits:
        if self.url is not None:
            self._thread = threading.Thread(target=self._sample, name="lock-waits", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _sample(self) -> None:
        engine = create_engine(self.url, isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                while not self._stop.wait(LOCK_SAMPLE):
                    for holder, state, query in conn.exec_driver_sql(self._QUERY):
                        if holder in self.behind:
                            self.behind[holder] += 1
                            self.idle += state == "idle in transaction"
                            said = f"{holder.removeprefix('tandem-')}: {_statement(query)}"
                            self.statements[said] = self.statements.get(said, 0) + 1
                    self.samples += 1
        finally:
            engine.dispose()

    def figures(self) -> dict[str, int]:
        """The counts: samples taken, web waits behind a worker and behind the web, and those
        whose holder was idle in its transaction; {} on SQLite."""
        if self.url is None:
            return {}
        return {
            "samples": self.samples,
            "idle": self.idle,
            **self.behind,
            "statements": self.statements,
        }


def _statement(query: str) -> str:
    """A statement's first words, enough to tell which transaction ran it (`WITH head AS
    (SELECT work_items`, `UPDATE outbox SET claimed_by`)."""
    words = query.replace("(", " ( ").split()
    return " ".join(words[:6]).replace(" ( ", " (").replace("( ", "(")


def _drain(database_url: str, limit: float) -> float:
    """Wait until no work item is pending (at most `limit` s); the seconds it took."""
    engine = create_engine(database_url)
    pending = select(func.count()).select_from(work_items).where(work_items.c.status == "pending")
    began = time.perf_counter()
    try:
        while time.perf_counter() - began < limit:
            with engine.connect() as conn:
                if not conn.execute(pending).scalar():
                    break
            time.sleep(0.5)
    finally:
        engine.dispose()
    return time.perf_counter() - began


def _enroll(url: str) -> list[str]:
    phones = [f"+1415555{n:04d}" for n in range(3000, 3000 + PARTICIPANTS)]
    for phone in phones:
        response = requests.post(
            url + "/conversation/participants",
            timeout=10,
            json={"phone_number": phone},
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        response.raise_for_status()
    return phones


def _answer(request: dict) -> ScriptedReply:
    """The safety classifier's call (on by default) gets a verdict, the module's a reply."""
    schema = (request.get("response_format") or {}).get("json_schema") or {}
    if schema.get("name") == "SafetyVerdict":
        return ScriptedReply.structured({"category": "none", "severity": "none", "reason": "-"})
    return ScriptedReply.text("Thanks, noted!")


def _env(url: str, database_url: str, llm: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "TANDEM_API_TOKENS": TOKEN,
        "TWILIO_AUTH_TOKEN": AUTH,
        "PUBLIC_BASE_URL": url,
        "MESSENGER": "console",
        "OPENAI_BASE_URL": llm + "/v1",
        "OPENAI_API_KEY": "bench",
        "INTERVENTION": "habit-coach",
        "LOG_LEVEL": "WARNING",
        # Sealed as in production: the webhook seals the message body and the phone number.
        "TANDEM_MASTER_KEY": MASTER_KEY,
    }


def _start(commands: list[list[str]], env: dict[str, str]) -> list[subprocess.Popen]:
    """Each command's process, its database sessions named by role (PGAPPNAME, which libpq
    reads: "tandem-worker" for a `tandem worker`, else "tandem-web") for `_LockWaits`."""
    quiet = subprocess.DEVNULL
    return [
        subprocess.Popen(
            c, env={**env, "PGAPPNAME": _role(c)}, cwd=ROOT, stdout=quiet, stderr=quiet
        )
        for c in commands
    ]


def _role(command: list[str]) -> str:
    worker = Path(command[0]).name == "tandem" and command[1:2] == ["worker"]
    return "tandem-worker" if worker else "tandem-web"


def _row(name: str, rate: int, figures: list[dict]) -> str:
    def med(key: str) -> float:
        return statistics.median(f[key] for f in figures)

    answered = [f["answered"] for f in figures]
    return (
        f"{name:<9}{rate:>5}/s  answered best {max(answered):>6.1f} med {med('answered'):>6.1f}/s"
        f"  p50 {med('p50'):>7.1f} ms  p99 min {min(f['p99'] for f in figures):>7.1f} "
        f"med {med('p99'):>7.1f} ms  errors {sum(f['errors'] for f in figures)}"
        f"  CPU busy {med('busy'):>3.0f} %  web CPU {med('web'):>4.1f} ms/request"
    )


def _locks(figures: list[dict]) -> str:
    """The rounds' `_LockWaits` counts, pooled: the mean web sessions waiting on a lock at a
    sample, behind the worker and behind the web, and the share of those waits whose holder was
    idle in its transaction (PostgreSQL; '' on SQLite)."""
    found = [f["locks"] for f in figures if f.get("locks")]
    samples = sum(f["samples"] for f in found)
    if not samples:
        return ""
    worker, web = (sum(f[role] for f in found) for role in ("tandem-worker", "tandem-web"))
    idle = f"{100 * sum(f['idle'] for f in found) / (worker + web):.0f} %" if worker + web else "-"
    tally: dict[str, int] = {}
    for f in found:
        for said, count in f["statements"].items():
            tally[said] = tally.get(said, 0) + count
    top = sorted(tally.items(), key=lambda item: -item[1])[:4]
    holders = "; ".join(f"{said} {count / samples:.2f}" for said, count in top)
    return (
        f"  web waits on locks: {worker / samples:.2f} behind the worker, "
        f"{web / samples:.2f} behind the web (holder idle in transaction {idle})"
        + (f"; by the holder's last statement: {holders}" if holders else "")
    )


def run_layout(  # noqa: ANN001
    label: str, kind: str, tandem, noop, args, llm: str, *, turns: bool = True
) -> None:
    """Each rate's rounds of `tandem` beside `noop`, alternating; without `turns` (no
    worker runs) the queue is not waited for and no worker CPU is reported."""
    ports = _free_port(), _free_port()
    urls = [f"http://127.0.0.1:{p}" for p in ports]
    with database(kind) as database_url:
        procs = _start(tandem(ports[0]), _env(urls[0], database_url, llm))
        ours_pids = [proc.pid for proc in procs]
        procs += _start(noop(ports[1]), _env(urls[1], database_url, llm))
        base_pids = [proc.pid for proc in procs if proc.pid not in ours_pids]
        try:
            for url in urls:
                wait_up(url, 60)
            phones = _enroll(urls[0])
            if turns:
                _drain(database_url, args.drain)
            print(f"== {label}", flush=True)
            for rate in (int(r) for r in args.rates.split(",")):
                ours: list[dict] = []
                base: list[dict] = []
                drained: list[float] = []
                for k in range(args.rounds):
                    began = _tree_cpu(base_pids)
                    with _LockWaits(database_url):  # its queries' cost, as in Tandem's rounds
                        base.append(_measure(urls[1], rate, args.seconds, phones, f"n{rate}{k}"))
                    base[-1]["web"] = _per(began, _tree_cpu(base_pids), "web", base[-1]["count"])
                    began = _tree_cpu(ours_pids)
                    with _LockWaits(database_url) as waits:
                        ours.append(_measure(urls[0], rate, args.seconds, phones, f"t{rate}{k}"))
                    ours[-1]["locks"] = waits.figures()
                    acked = _tree_cpu(ours_pids)
                    drained.append(_drain(database_url, args.drain) if turns else 0.0)
                    count = ours[-1]["count"]
                    ours[-1]["web"] = _per(began, acked, "web", count)
                    ours[-1]["worker"] = _per(began, _tree_cpu(ours_pids), "worker", count)
                ratio = statistics.median(f["answered"] for f in ours) / statistics.median(
                    f["answered"] for f in base
                )
                print(_row("no-op", rate, base), flush=True)
                worker = statistics.median(f["worker"] for f in ours)
                turned = (
                    f"queue drained in {max(drained):.0f} s  worker CPU {worker:.1f} ms/turn"
                    if turns
                    else "no worker: turns left queued"
                )
                print(
                    f"{_row('tandem', rate, ours)}  x no-op {ratio:.2f}  {turned}{_locks(ours)}",
                    flush=True,
                )
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--rates", default="50,200,500")
    parser.add_argument("--drain", type=float, default=120.0, help="longest wait for the queue")
    parser.add_argument(
        "--layouts",
        default="serve,production",
        help="comma-separated, of: serve, production, web (gunicorn with no worker)",
    )
    args = parser.parse_args()
    unknown = set(args.layouts.split(",")) - LAYOUTS
    if unknown:
        parser.error(
            f"unknown layout(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(LAYOUTS))}"
        )
    python, tandem, gunicorn = str(BIN / "python"), str(BIN / "tandem"), str(BIN / "gunicorn")
    with scripted_llm(_answer) as llm_url:
        layouts = args.layouts.split(",")
        if "serve" in layouts:
            run_layout(
                "tandem serve (SQLite) beside bench/noop.py on the same embedded server",
                "sqlite",
                lambda p: [[tandem, "serve", "--port", str(p)]],
                lambda p: [[python, "bench/noop.py", str(p)]],
                args,
                llm_url,
            )

        def web(app: str, port: int) -> list[str]:
            return [gunicorn, *_procfile_web_options(), "--bind", f"127.0.0.1:{port}", app]

        if "production" in layouts:
            run_layout(
                "gunicorn (the Procfile's options) + tandem worker (PostgreSQL) beside "
                "gunicorn bench.noop:app",
                "postgresql",
                lambda p: [web("bot.web:create_app()", p), _procfile_worker()],
                lambda p: [web("bench.noop:app", p)],
                args,
                llm_url,
            )
        if "web" in layouts:
            run_layout(
                "gunicorn (the Procfile's options), no worker: the acks alone (PostgreSQL) "
                "beside gunicorn bench.noop:app",
                "postgresql",
                lambda p: [web("bot.web:create_app()", p)],
                lambda p: [web("bench.noop:app", p)],
                args,
                llm_url,
                turns=False,
            )


def _procfile(process: str) -> list[str]:
    """The words of the Procfile's line for `process`: the layout measured is the one deployed."""
    line = next(
        line
        for line in (ROOT / "Procfile").read_text().splitlines()
        if line.startswith(f"{process}:")
    )
    return shlex.split(line.removeprefix(f"{process}:"))


def _procfile_worker() -> list[str]:
    """The Procfile's worker command (its options: niceness, threads), run from this venv."""
    command, *options = _procfile("worker")
    return [str(BIN / command), *options]


def _procfile_web_options() -> list[str]:
    """The Procfile's gunicorn options for the web process (workers, threads, timeout), without
    its --bind."""
    words = _procfile("web")
    options = words[1:-1]  # gunicorn ... APP
    if "--bind" in options:
        at = options.index("--bind")
        del options[at : at + 2]
    return options


if __name__ == "__main__":
    main()
