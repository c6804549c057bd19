"""A standing soak under faults: N participants x D simulated days on PostgreSQL, in the
Procfile's layout (gunicorn + 2 `tandem worker`), on a simulated clock the processes share.

The processes run with TANDEM_SIMULATION=true and TANDEM_CLOCK naming a file this driver
moves (bot.core.clock.FileClock): the time jumps from one due moment to the next (a timer, a
retry, a persona's reply), by at most MAX_STEP and coalescing what falls within QUANTUM, and
before each jump the driver waits until the workers have drained what is due (work items,
outbox rows and timers due, read from the database). Scripted personas (personas/) text the
signed Twilio webhook (the real RequestValidator signature) with their replies to what the
fake Twilio server (the real twilio SDK pointed at it) received. Faults, seeded: SIGKILL of a
`tandem worker` or of gunicorn's master every few simulated days, each restarted, and
PostgreSQL restarted twice (`pg_ctlcluster`). At the end (bench/soak_checks.py): every
acknowledged inbound stored once, every outbound sent once or recorded failed/suppressed with
its reason, no timer lost or fired twice, `tandem replay --check` clean, and each process's
RSS at the end within 10 % of its own after warm-up. Exit 1 if a check fails.

Run: `python bench/soak.py [--participants 500] [--days 180] [--seed 1]` (`make soak`).
"""

from __future__ import annotations

import argparse
import heapq
import random
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import requests  # noqa: E402
from sqlalchemy import func, or_, select  # noqa: E402
from sqlalchemy.exc import OperationalError  # noqa: E402
from twilio.request_validator import RequestValidator  # noqa: E402

from bench.common import database, wait_up  # noqa: E402
from bench.soak_checks import Figures, check, print_figures  # noqa: E402
from bench.soak_procs import (  # noqa: E402
    Proc,
    free_port,
    leaders,
    restart_postgres,
    rss_kib,
    web_command,
    worker_command,
)
from bot.core.clock import FileClock, write_instant  # noqa: E402
from bot.core.config import load_settings  # noqa: E402
from bot.runtime.bootstrap import build_services  # noqa: E402
from bot.runtime.routing import intervention_catalogue  # noqa: E402
from bot.sandbox.personas import Player, load_personas  # noqa: E402
from bot.sandbox.simulation import assign  # noqa: E402
from bot.services import enrollment, welcome  # noqa: E402
from bot.store.schema import outbox, timers, work_items  # noqa: E402
from tests.fakes.twilio_api import FakeTwilio  # noqa: E402

START = datetime(2026, 1, 5, 6, 0, tzinfo=UTC)  # a Monday, before anyone's morning
# Timers due within QUANTUM of the next one fire with it (the shortest grace of a kind is 30
# minutes: bot.timers.kinds); the personas' messages go in batches: each is sent up to
# PERSONA_BATCH after the moment its persona chose (a longer reply latency, no more).
QUANTUM = timedelta(minutes=5)
PERSONA_BATCH = timedelta(minutes=60)
MAX_STEP = timedelta(hours=6)
WARM_UP = timedelta(days=1)  # a process's RSS is first read this long (simulated) after start
DRAIN_SECONDS = 180.0  # wall time a step may take to drain before the run is called stuck
STALL_SECONDS = 3.0  # wall time with nothing moving before the clock is nudged on
NUDGE = timedelta(seconds=30)  # how far a stalled step moves the clock (leases, claims)
WEB_KILL_AFTER = 0.05  # wall seconds into a step's posts that the web's kill comes
MASTER_KEY = "c29hay1tYXN0ZXIta2V5LTAxMjM0NTY3ODlhYmNkZWY="
AUTH, ACCOUNT = "soak-auth-token", "AC" + "5" * 32
TOKEN = "soak-api-token-" + "x" * 32
OUR_NUMBER = "+15005550006"
INBOUND = "/webhooks/twilio/inbound"
PUBLIC = "https://tandem.soak.invalid"  # PUBLIC_BASE_URL: the URL the signatures are over
SUPERVISOR = "+14155551999"  # a fictional supervisor: crisis alerts go to the fake Twilio too


@dataclass(frozen=True)
class Options:
    participants: int = 500
    days: int = 180
    seed: int = 1
    intervention: str = "demo"
    personas: Path = ROOT / "personas"
    kill_every_days: tuple[float, float] = (2.0, 4.0)  # a kill every U(a, b) simulated days
    pg_restarts: int = 2
    quiet: bool = False
    wall_limit: float | None = None  # seconds: stop simulating then, and check what was run


@dataclass
class Inbound:
    at: datetime
    n: int
    sid: str
    body: str
    tries: int = 0


@dataclass
class Driver:
    options: Options
    url: str
    clock: FileClock
    twilio: FakeTwilio
    store: object
    procs: list[Proc]
    web_url: str
    players: list[Player] = field(default_factory=list)
    phones: list[str] = field(default_factory=list)
    figures: Figures = field(default_factory=Figures)
    pending: list[tuple[datetime, int, str]] = field(default_factory=list)  # heap
    inbound: dict[str, Inbound] = field(default_factory=dict)
    seen: int = 0  # fake Twilio messages read so far
    leaders: dict[str, str] = field(default_factory=dict)  # leadership -> its holder's app name

    def say(self, text: str) -> None:
        if not self.options.quiet:
            print(text, flush=True)

    def next_step(self, now: datetime, end: datetime) -> datetime:
        """Where the clock goes next: QUANTUM past the earliest due work item, outbox row (a
        retry, a claim's expiry) or timer, or PERSONA_BATCH past the next persona message,
        whichever is first; at most MAX_STEP on, and never past `end`."""
        for attempt in range(60):
            try:
                due = self.next_due(now)
                break
            except OperationalError:  # PostgreSQL restarting: its pooled connections died
                if attempt == 59:
                    raise
                time.sleep(1)
        found = [now + MAX_STEP, end]
        if due is not None:
            found.append(due + QUANTUM)
        if self.pending:
            found.append(self.pending[0][0] + PERSONA_BATCH)
        return min(found)

    def next_due(self, now: datetime) -> datetime | None:
        """The earliest moment after `now` at which the engine has something due: a work
        item, an outbox row (a retry, a claim's expiry) or a timer."""
        found = []
        with self.store.reading() as conn:  # type: ignore[attr-defined]
            for query in (
                select(func.min(work_items.c.available_at)).where(
                    work_items.c.status == "pending", work_items.c.available_at > now
                ),
                select(func.min(outbox.c.next_attempt_at)).where(
                    outbox.c.status == "pending", outbox.c.next_attempt_at > now
                ),
                select(func.min(outbox.c.claimed_until)).where(outbox.c.claimed_until > now),
                select(func.min(timers.c.due_at)).where(
                    timers.c.status == "scheduled", timers.c.due_at > now
                ),
            ):
                value = conn.execute(query).scalar()
                if value is not None:
                    found.append(value)
        return min(found) if found else None

    def busy(self, now: datetime) -> int:
        """How many things are due at `now` and not yet done (a row claimed by a sender in
        flight is not counted: it is done by the next step)."""
        unclaimed = or_(outbox.c.claimed_until.is_(None), outbox.c.claimed_until <= now)
        with self.store.reading() as conn:  # type: ignore[attr-defined]
            work = conn.execute(
                select(func.count()).where(
                    work_items.c.status == "pending", work_items.c.available_at <= now
                )
            ).scalar_one()
            out = conn.execute(
                select(func.count()).where(
                    outbox.c.status == "pending", outbox.c.next_attempt_at <= now, unclaimed
                )
            ).scalar_one()
            due = conn.execute(
                select(func.count()).where(timers.c.status == "scheduled", timers.c.due_at <= now)
            ).scalar_one()
        return int(work) + int(out) + int(due)

    def drain(self, now: datetime) -> bool:
        """Wait until nothing due at `now` is left and the fake Twilio has stopped receiving:
        True; False when nothing has moved for STALL_SECONDS (a killed process's lease or
        claim holds something until the simulated clock passes its expiry)."""
        deadline = time.monotonic() + DRAIN_SECONDS
        quiet_since, moved, last = None, time.monotonic(), (-1, -1)
        while True:
            try:
                left = self.busy(now)
            except Exception:  # noqa: BLE001 - the database restarting: ask again
                left = -1
            state = (left, len(self.twilio.requests))
            if state != last:
                moved, quiet_since = time.monotonic(), None
            elif left == 0:
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since > 0.15:
                    return True
            if left != 0 and time.monotonic() - moved > STALL_SECONDS:
                return False
            last = state
            if time.monotonic() > deadline:
                raise RuntimeError(f"stuck at simulated {now}: {left} due things not done")
            time.sleep(0.03)

    def deliver(self, now: datetime) -> None:
        """Post every persona message due by `now` to the signed webhook, at once."""
        due: list[Inbound] = []
        while self.pending and self.pending[0][0] <= now:
            _, _, sid = heapq.heappop(self.pending)
            due.append(self.inbound[sid])
        if not due:
            return
        with ThreadPoolExecutor(max_workers=8) as pool:
            acked = list(pool.map(self._post, due))
        for message, ok in zip(due, acked, strict=True):
            if ok:
                self.figures.acked.add(message.sid)
            else:  # the web is down: sent again, as Twilio retries, with the same sid
                message.tries += 1
                self.figures.inbound_retries += 1
                retry = now + timedelta(minutes=1)
                heapq.heappush(self.pending, (retry, message.n, message.sid))

    def _post(self, message: Inbound) -> bool:
        form = {
            "MessageSid": message.sid,
            "AccountSid": ACCOUNT,
            "From": self.phones[message.n],
            "To": OUR_NUMBER,
            "Body": message.body,
            "NumMedia": "0",
        }
        signature = RequestValidator(AUTH).compute_signature(PUBLIC + INBOUND, form)
        try:
            response = requests.post(
                self.web_url + INBOUND,
                data=form,
                headers={"X-Twilio-Signature": signature},
                timeout=30,
            )
        except requests.RequestException:
            return False
        return 200 <= response.status_code < 300

    def read_outbound(self, now: datetime) -> None:
        """Hand each message the fake Twilio received since the last look to its persona."""
        received = self.twilio.messages
        by_phone = {phone: n for n, phone in enumerate(self.phones)}
        for record in received[self.seen :]:
            n = by_phone.get(record.form.get("To", ""))
            if n is None:
                continue
            reply = self.players[n].reply(record.form.get("Body", ""), now)
            if reply is not None:
                self.figures.persona_messages += 1
                sid = f"SM{self.options.seed:04x}{self.figures.persona_messages:028x}"
                at = now + reply.after
                self.inbound[sid] = Inbound(at, n, sid, reply.text)
                heapq.heappush(self.pending, (at, n, sid))
        self.seen = len(received)

    def sample_rss(self, now: datetime, end: bool = False) -> None:
        """Each live process's RSS once it has run WARM_UP (simulated) since it started or
        took a leader's work over (the scheduler or broadcaster moved to it); with `end`, its
        last too."""
        try:
            with self.store.reading() as conn:  # type: ignore[attr-defined]
                held = leaders(conn)
        except Exception:  # noqa: BLE001 - the database restarting: look next time
            held = self.leaders
        for name, app in held.items():
            if self.leaders.get(name) != app:
                for proc in self.procs:
                    if app == f"soak-{proc.role}":
                        proc.warm_again(now)
        self.leaders = held
        for proc in self.procs:
            for pid in proc.pids():
                since = proc.since.setdefault(pid, now)
                rss = rss_kib(pid)
                if rss is None or now - since < WARM_UP:
                    continue
                proc.warm.setdefault(pid, rss)
                if end:
                    self.figures.rss.append((proc.role, pid, proc.warm[pid], rss))


def fault_plan(options: Options, start: datetime) -> list[tuple[datetime, str]]:
    """The seeded faults: a kill of a worker or the web every U(a, b) days, two PG restarts."""
    rng = random.Random(f"tandem-soak:{options.seed}")
    end = start + timedelta(days=options.days)
    plan: list[tuple[datetime, str]] = []
    at = start + timedelta(days=rng.uniform(*options.kill_every_days) / 2)
    kinds = ["worker", "web"]
    while at < end - timedelta(hours=12):
        kind = kinds[len(plan) % 2] if len(plan) < 2 else rng.choice(kinds)
        plan.append((at, kind))  # the first two: one of each, so a short run has both
        at += timedelta(days=rng.uniform(*options.kill_every_days))
    for k in range(options.pg_restarts):
        plan.append(
            (start + timedelta(days=options.days * (k + 1) / (options.pg_restarts + 1)), "postgres")
        )
    return sorted(plan)


def inject(driver: Driver, faults: list[str], now: datetime, rng: random.Random) -> None:
    """Deliver the step's persona messages, with the step's faults: the web is killed while
    they are being posted (a post it had not answered is sent again at the next step, with
    the same sid, as Twilio would retry; one it acknowledged must be stored), then the
    others (a worker killed while it turns what came in, PostgreSQL restarted under them)."""
    web = driver.procs[0]
    killer = threading.Timer(WEB_KILL_AFTER, web.kill) if "web" in faults else None
    if killer is not None:
        killer.start()
    driver.deliver(now)
    if killer is not None:
        killer.join()
        web.start(now)
        wait_up(driver.web_url)
        _count(driver, "web", now)
    for kind in faults:
        if kind == "worker":
            proc = rng.choice([p for p in driver.procs if p.role.startswith("worker")])
            proc.kill()
            proc.start(now)
            _count(driver, kind, now)
        elif kind == "postgres":
            why = restart_postgres()
            if why is None:
                _count(driver, kind, now)
            else:
                driver.figures.not_injected.append(f"postgres restart: {why}")
                driver.say(f"  could NOT restart PostgreSQL: {why}")


def _count(driver: Driver, kind: str, now: datetime) -> None:
    driver.figures.faults[kind] = driver.figures.faults.get(kind, 0) + 1
    driver.say(f"  fault at simulated {now:%Y-%m-%d %H:%M}: {kind}")


def env_for(url: str, web_url: str, clock_file: Path, twilio_url: str) -> dict[str, str]:
    import os

    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": url,
        "TANDEM_CLOCK": str(clock_file),
        "TANDEM_SIMULATION": "true",
        "TANDEM_API_TOKENS": TOKEN,
        "TANDEM_MASTER_KEY": MASTER_KEY,
        "PUBLIC_BASE_URL": PUBLIC,  # what Twilio signs; the driver posts to `web_url`
        "MESSENGER": "twilio",
        "TWILIO_ACCOUNT_SID": ACCOUNT,
        "TWILIO_AUTH_TOKEN": AUTH,
        "TWILIO_FROM_NUMBER": OUR_NUMBER,
        "TWILIO_API_BASE_URL": twilio_url,
        "SUPERVISOR_PHONES": SUPERVISOR,
        "INTERVENTION": "demo",
        "TIMER_SWEEP_SECONDS": "0.5",  # wall seconds: the horizon follows the jumps at once
        "SCHEDULER_LEASE_SECONDS": "3",  # a standby tries each second: a killed leader's
        # timers are taken over within a second of wall time, not ten
        "LOG_LEVEL": "WARNING",
    }


def run(options: Options, logs: Path) -> Figures:
    """The whole soak; its figures and checks (Figures.failures empty: passed)."""
    with database("postgresql") as url, tempfile.TemporaryDirectory() as tmp:
        clock_file = Path(tmp) / "clock"
        write_instant(clock_file, START)
        clock = FileClock(clock_file)
        twilio = FakeTwilio(account_sid=ACCOUNT, auth_token=AUTH, clock=clock.now)
        port = free_port()
        web_url = f"http://127.0.0.1:{port}"
        env = env_for(url, web_url, clock_file, twilio.url)
        services = build_services(load_settings(env, env_file=None), clock=clock)
        procs = [Proc("web", web_command(port), env, logs / "web.log")]
        procs += [
            Proc(f"worker-{n}", worker_command(), env, logs / f"worker-{n}.log") for n in (1, 2)
        ]
        driver = Driver(options, url, clock, twilio, services.store, procs, web_url)
        try:
            return _soak(driver, services, env)
        finally:
            for proc in procs:
                proc.stop()
            services.close()
            twilio.stop()


def _soak(driver: Driver, services: object, env: dict[str, str]) -> Figures:
    options, clock, figures = driver.options, driver.clock, driver.figures
    personas = load_personas(options.personas)
    names = assign(personas, options.participants, options.seed)
    asked = []
    for n, name in enumerate(names):
        phone = f"+1415555{2000 + n:04d}"  # valid fictional numbers, as the e2e tests use
        driver.phones.append(phone)
        driver.players.append(
            Player(name, personas[name], random.Random(f"tandem-soak:{options.seed}:{n}"), START)
        )
        check_in = enrollment.Enrollment(
            phone=phone, timezone=personas[name].timezone, intervention=options.intervention
        )
        asked.append(enrollment.enrolled_event(check_in, services.settings, "cli"))  # type: ignore[attr-defined]
    for proc in driver.procs:
        proc.start(START)
    wait_up(driver.web_url)
    quiet = welcome.rules(services.settings, intervention_catalogue())  # type: ignore[attr-defined]
    enrollment.record(driver.store, asked, actor="soak", quiet=quiet)  # type: ignore[arg-type]
    plan = fault_plan(options, START)
    rng = random.Random(f"tandem-soak-victims:{options.seed}")
    end = START + timedelta(days=options.days)
    now, steps, day = START, 0, -1
    started = time.perf_counter()
    driver.drain(now)
    driver.read_outbound(now)
    while now < end:
        if options.wall_limit and time.perf_counter() - started > options.wall_limit:
            driver.say(f"wall limit reached at simulated {now:%Y-%m-%d %H:%M}: checking")
            break
        target = driver.next_step(now, end)
        if plan and plan[0][0] <= target:
            target = max(now, plan[0][0])
        target = max(target, now + timedelta(seconds=1))
        clock.set(target)
        now = target
        steps += 1
        faults = []
        while plan and plan[0][0] <= now:
            faults.append(plan.pop(0)[1])
        inject(driver, faults, now, rng)
        while not driver.drain(now):  # a dead process's lease: let the clock pass it
            figures.stalls += 1
            now += NUDGE
            clock.set(now)
        driver.read_outbound(now)
        driver.sample_rss(now)
        if (now - START).days != day:
            day = (now - START).days
            driver.say(f"day {day}: {steps} steps, {time.perf_counter() - started:.0f} s wall")
    driver.sample_rss(now, end=True)
    figures.wall_seconds = time.perf_counter() - started
    figures.steps, figures.participants = steps, options.participants
    figures.days = round((now - START) / timedelta(days=1), 1)
    if plan:
        driver.say(f"faults planned after the run stopped: {len(plan)}")
    check(figures, driver.store, driver.twilio, env, now)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=500)
    parser.add_argument("--days", type=int, default=180)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pg-restarts", type=int, default=2)
    parser.add_argument("--logs", type=Path, default=None, help="folder for the processes' logs")
    parser.add_argument(
        "--wall-limit",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop simulating after this much wall time and check the days run so far",
    )
    args = parser.parse_args(argv)
    options = Options(
        args.participants,
        args.days,
        args.seed,
        pg_restarts=args.pg_restarts,
        wall_limit=args.wall_limit,
    )
    logs = args.logs or Path(tempfile.mkdtemp(prefix="tandem-soak-"))
    logs.mkdir(parents=True, exist_ok=True)
    print(
        f"soak: {options.participants} participants x {options.days} days, seed "
        f"{options.seed}; process logs in {logs}",
        flush=True,
    )
    figures = run(options, logs)
    print_figures(figures)
    return 1 if figures.failures else 0


if __name__ == "__main__":
    sys.exit(main())
