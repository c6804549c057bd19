"""Benchmark a conversation turn: the engine's own cost from the inbound event to the reply queued.

The real handler (`bot.runtime.routing.build_handler`) and worker answer through the real openai SDK
against a FakeOpenAI that replies at once, run in a separate process at the lowest CPU priority
so that its CPU is not the engine's (bench.common.scripted_llm). Per engine (SQLite,
PostgreSQL) it prints:
- the cost of one turn (`Worker.run_once` on a recorded message: claim, load, screen, prompt,
  LLM call, append of the reply with `work.completed`), p50/p99/min, for participants with
  10, 1,000, 10,000 and 100,000 prior events, the sizes alternating turn by turn, as wall time and
  without the LLM round trip (`llm.called` latency, which includes the SDK's own work); the
  baseline is the turn at the smallest size ("x base" is the ratio of the p50s);
- the same turn with personal data sealed (TANDEM_MASTER_KEY set: every participant's personal
  fields encrypted with their data key, as in production) beside the plain one, on a second
  database, the two alternating turn by turn ("sealed/plain" is the ratio of the p50s);
- turns/s of 1 and of 2 worker processes, each with `tandem worker`'s worker threads (4; `--threads`
  sets them), draining 10 messages each from 100 participants, in alternating rounds (best and
  median), and the worker processes' CPU per turn (their process time from started and idle to
  stopped, over the turns; the scripted LLM's is not in it); `--no-throughput` leaves this out;
- the second-line safety classifier's cost (SAFETY_CLASSIFIER=auto against off, the rest above
  runs with it off): turns at the smallest prior size alternating between a worker with it and
  one without, over the same database, and the added p50 (its extra LLM call per message; the
  scripted LLM answers it at once, so this is Tandem's own cost plus one loopback round trip).
Prior events are realistic turns (message, `llm.called` holding the prompt as STORE_PROMPTS=true
stores it, reply, delivery), appended directly. Run by hand:
`python bench/turn.py [--turns 30] [--prior 10,1000,10000,100000] [--engines sqlite,postgresql]
[--no-throughput] [--threads 4] [--only classifier]`.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import multiprocessing.synchronize
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import func, select  # noqa: E402

from bench.common import database, percentile, scripted_llm  # noqa: E402
from bench.rounds import alternate, best  # noqa: E402
from bot.cli.run import WORKER_THREADS  # noqa: E402
from bot.conversation.classifier import SafetyVerdict  # noqa: E402
from bot.core.config import load_settings  # noqa: E402
from bot.core.keys import generate_master_key  # noqa: E402
from bot.runtime.bootstrap import build_services  # noqa: E402
from bot.runtime.routing import build_handler  # noqa: E402
from bot.runtime.worker import Worker  # noqa: E402
from bot.store.event_types import MessageReceived, ParticipantEnrolled  # noqa: E402
from bot.store.event_types.conversation import LLMCalled  # noqa: E402
from bot.store.event_types.messages import MessageQueued, MessageSent  # noqa: E402
from bot.store.event_types.work import WorkCompleted  # noqa: E402
from bot.store.events import EventData, NewEvent, new_id, participant_stream  # noqa: E402
from bot.store.schema import work_items  # noqa: E402
from bot.store.services import Services  # noqa: E402
from tests.fakes.openai_api import ScriptedReply  # noqa: E402

REPLY = "That sounds like a good start! What time of day would suit you best?"
SYSTEM = (ROOT / "prompts" / "intake.md").read_text()  # the size of a real system prompt
OUR_NUMBER = "+15005550006"
Stop = multiprocessing.synchronize.Event


ANSWER = ScriptedReply.text(REPLY)
VERDICT = ScriptedReply.structured(
    {"category": "none", "severity": "none", "reason": "Everyday talk about a habit."}
)


def _answer(body: dict) -> ScriptedReply:
    """The classifier's request gets a verdict, every other one the module's reply."""
    schema = (body.get("response_format") or {}).get("json_schema") or {}
    return VERDICT if schema.get("name") == SafetyVerdict.__name__ else ANSWER


def _services(
    url: str, llm_url: str, master_key: str | None = None, classifier: str = "off"
) -> Services:
    env = {
        "SAFETY_CLASSIFIER": classifier,
        "DATABASE_URL": url,
        "OPENAI_BASE_URL": llm_url + "/v1",
        "OPENAI_API_KEY": "bench",
        "TANDEM_MODEL": "fake-model",
        "LLM_MAX_RETRIES": "0",
        "DEFAULT_TIMEZONE": "America/Toronto",
        "INTERVENTION": "habit-coach",
    }
    if master_key:
        env["TANDEM_MASTER_KEY"] = master_key
    return build_services(load_settings(env, env_file=None))


def _phone(n: int) -> str:
    return f"+1416{n // 10000 % 1000:03d}{n % 10000:04d}"


def _prior_turn(phone: str, k: int, transcript: list[dict]) -> list[NewEvent]:
    """One past turn as the engine records it, with the prompt the LLM was shown."""
    received, outbox_id = new_id(), new_id()
    body = f"Message {k}: I walked to the shop today, it felt good but I was tired."
    transcript.append({"role": "user", "content": body})
    data: list[EventData | NewEvent] = [
        NewEvent(
            MessageReceived(
                message_sid=f"SM{new_id().replace('-', '')}",
                from_address=phone,
                to_address=OUR_NUMBER,
                channel="sms",
                body=body,
            ),
            event_id=received,
        ),
        LLMCalled(
            call_id=new_id(),
            purpose="intake",
            model="fake-model",
            prompt_tokens=2500,
            completion_tokens=40,
            latency_ms=900.0,
            finish_reason="stop",
            messages=[{"role": "system", "content": SYSTEM}, *transcript[-51:]],
            response={"role": "assistant", "content": REPLY},
        ),
        MessageQueued(outbox_id=outbox_id, to_address=phone, channel="sms", body=REPLY),
        WorkCompleted(work_id=received),
        MessageSent(outbox_id=outbox_id, provider_sid=f"SM{new_id().replace('-', '')}"),
    ]
    transcript.append({"role": "assistant", "content": REPLY})
    return [e if isinstance(e, NewEvent) else NewEvent(e) for e in data]


def _seed(services: Services, n: int, prior: int) -> tuple[str, str]:
    """A participant (auto-enrolled, in intake) with about `prior` events; (id, phone)."""
    phone, enrolled_id = _phone(n), new_id()
    person = ParticipantEnrolled(
        participant_id=new_id(),
        phone=phone,
        timezone="America/Toronto",
        intervention="habit-coach",  # the LLM's intake and feedback modules
        source="auto",
    )
    stream = participant_stream(person.participant_id)
    batch: list[NewEvent] = [
        NewEvent(person, event_id=enrolled_id),
        NewEvent(WorkCompleted(work_id=enrolled_id)),
    ]
    transcript: list[dict] = []
    for k in range(max(0, (prior - 2 + 4) // 5)):
        batch += _prior_turn(phone, k, transcript)
        if len(batch) >= 500:
            services.store.append(stream, batch)
            batch = []
    if batch:
        services.store.append(stream, batch)
    return person.participant_id, phone


def _message(phone: str, text: str) -> MessageReceived:
    sid = f"SM{new_id().replace('-', '')}"
    return MessageReceived(
        message_sid=sid, from_address=phone, to_address=OUR_NUMBER, channel="sms", body=text
    )


def _turn(services: Services, worker: Worker, pid: str, phone: str) -> tuple[float, float]:
    """(wall ms, wall ms without the LLM round trip) of one turn on a recorded message."""
    stream = participant_stream(pid)
    message = _message(phone, "How do I start tomorrow?")
    recorded = services.store.append(stream, [message], idempotency_key=message.message_sid)
    began = time.perf_counter()
    handled = worker.run_once()
    wall = (time.perf_counter() - began) * 1000
    assert handled == 1, "the turn was not handled"
    after = services.store.load(stream, after_version=recorded.events[-1].stream_version)
    calls = [e.data for e in after if isinstance(e.data, LLMCalled)]
    assert calls and all(c.ok for c in calls), "the turn made no (successful) LLM call"
    assert any(isinstance(e.data, MessageQueued) for e in after), "no reply was queued"
    llm = sum(c.latency_ms or 0 for c in calls)
    return wall, wall - llm


def per_turn(
    urls: dict[str, str], llm_url: str, priors: list[int], turns: int
) -> dict[str, dict[int, list]]:
    """Turn costs per mode ("plain", "sealed": one database each) and prior size, the modes and
    sizes alternating turn by turn: {mode: {prior: [(wall, own)]}}."""
    keys = {"plain": None, "sealed": generate_master_key()}
    services = {mode: _services(url, llm_url, keys[mode]) for mode, url in urls.items()}
    workers = {m: Worker(s, build_handler(s), f"bench-{m}") for m, s in services.items()}
    people: dict[str, dict[int, list[tuple[str, str]]]] = {m: {} for m in services}
    for mode, svc in services.items():
        for n, prior in enumerate(priors):
            if prior <= 100:  # one fresh participant per turn: each turn has `prior` behind it
                people[mode][prior] = [_seed(svc, n * 100_000 + k, prior) for k in range(turns + 3)]
            else:  # one participant; the turns add ~4 events each to its `prior`
                people[mode][prior] = [_seed(svc, n * 100_000, prior)] * (turns + 3)
    for mode, svc in services.items():  # warm-up: imports, connections, caches
        for prior in priors:
            for pid, phone in people[mode][prior][turns:]:
                _turn(svc, workers[mode], pid, phone)
    costs: dict[str, dict[int, list]] = {m: {prior: [] for prior in priors} for m in services}
    for k in range(turns):
        for prior in priors:
            for mode, svc in services.items():
                pid, phone = people[mode][prior][k]
                costs[mode][prior].append(_turn(svc, workers[mode], pid, phone))
    for svc in services.values():
        svc.close()
    return costs


def classifier_cost(url: str, llm_url: str, turns: int) -> dict[str, list]:
    """Turns (10 prior events, a fresh participant each) alternating between a worker with the
    classifier and one without: {"off"|"auto": [(wall, own, classifier ms)]}."""
    workers, costs = {}, {}
    for mode in ("off", "auto"):
        services = _services(url, llm_url, classifier=mode)
        workers[mode] = (services, Worker(services, build_handler(services), f"bench-{mode}"))
        costs[mode] = []
    seeder = workers["off"][0]
    people = [_seed(seeder, 900_000 + k, 10) for k in range(2 * (turns + 3))]
    for k, (pid, phone) in enumerate(people):
        mode = ("off", "auto")[k % 2]
        services, worker = workers[mode]
        wall, own = _turn(services, worker, pid, phone)
        after = services.store.load(participant_stream(pid))
        spent = sum(
            e.data.latency_ms or 0
            for e in after
            if isinstance(e.data, LLMCalled) and e.data.purpose == "safety_classifier"
        )
        assert (spent > 0) == (mode == "auto"), "the classifier ran where it should not, or not"
        if k >= 6:  # warm-up: imports, connections, caches
            costs[mode].append((wall, own, spent))
    for services, _ in workers.values():
        services.close()
    return costs


def _print_classifier(kind: str, costs: dict[str, list]) -> None:
    off = percentile([c[0] for c in costs["off"]], 50)
    on = percentile([c[0] for c in costs["auto"]], 50)
    call = percentile([c[2] for c in costs["auto"]], 50)
    for name, value in (
        ("turn, classifier off (ms)", off),
        ("turn, classifier on (ms)", on),
        ("added by the classifier, p50 (ms)", on - off),
        ("  of which its LLM call (ms)", call),
    ):
        print(f"{kind:<11}{name:<46}{value:>9.1f}")
    print(f"{kind:<11}{'classifier on / off, p50':<46}{on / off:>9.2f}")


def _work_in_process(
    url: str, llm_url: str, name: str, threads: int, ready: mp.Queue, stop: Stop, spent: mp.Queue
) -> None:
    """A worker process as `tandem worker` runs one: `threads` worker threads (its dispatcher
    and scheduler left out: nothing is sent, no timer is due). Puts its process time (s) from
    started and idle to stopped on `spent`."""
    services = _services(url, llm_url)
    handler = build_handler(services)
    workers = [Worker(services, handler, f"{name}/worker-{n}") for n in range(threads)]
    running = [threading.Thread(target=w.run_forever, args=(stop,), daemon=True) for w in workers]
    for thread in running:
        thread.start()
    began = time.process_time()
    ready.put(name)
    for thread in running:
        thread.join()
    spent.put(time.process_time() - began)
    services.close()


def throughput(
    url: str, llm_url: str, participants: int, each: int, processes: int, threads: int
) -> tuple[float, float]:
    """(turns/s, CPU ms per turn) of `processes` worker processes of `threads` worker threads
    each, started and idle, draining `each` messages of every participant from the moment the
    first is recorded."""
    services = _services(url, llm_url)
    people = [_seed(services, n, 10) for n in range(participants)]
    ready: mp.Queue = mp.Queue()
    spent: mp.Queue = mp.Queue()
    stop = mp.Event()
    runners = [
        mp.Process(
            target=_work_in_process,
            args=(url, llm_url, f"bench-{n}", threads, ready, stop, spent),
        )
        for n in range(processes)
    ]
    for runner in runners:
        runner.start()
    for _ in runners:
        ready.get(timeout=60)
    pending = select(func.count()).select_from(work_items).where(work_items.c.status == "pending")
    began = time.perf_counter()
    for pid, phone in people:
        messages = [_message(phone, f"Update {k}: I did it today.") for k in range(each)]
        services.store.append(participant_stream(pid), messages)
    while True:
        with services.store.reading() as conn:
            if not conn.execute(pending).scalar():
                break
        time.sleep(0.02)
    elapsed = time.perf_counter() - began
    stop.set()
    cpu = sum(spent.get(timeout=60) for _ in runners)
    for runner in runners:
        runner.join()
    services.close()
    turns = participants * each
    return turns / elapsed, cpu * 1000 / turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30, help="measured turns per size")
    parser.add_argument("--engines", default="sqlite,postgresql")
    parser.add_argument(
        "--prior", default="10,1000,10000,100000", help="prior events per participant"
    )
    parser.add_argument("--rounds", type=int, default=3, help="throughput rounds (1 vs 2)")
    parser.add_argument(
        "--throughput", action=argparse.BooleanOptionalAction, default=True, help="turns/s rows"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=WORKER_THREADS,
        help="worker threads per worker process (default: `tandem worker`'s)",
    )
    parser.add_argument("--only", choices=["classifier"], help="run only this measure")
    args = parser.parse_args()
    priors = sorted(int(p) for p in args.prior.split(","))
    with scripted_llm(_answer) as llm_url:
        print(f"{'engine':<11}{'measure':<46}{'p50':>9}{'p99':>9}{'min':>9}{'x base':>8}")
        for kind in args.engines.split(","):
            with database(kind) as url:
                _print_classifier(kind, classifier_cost(url, llm_url, args.turns))
            if args.only == "classifier":
                continue
            with database(kind) as plain_url, database(kind) as sealed_url:
                urls = {"plain": plain_url, "sealed": sealed_url}
                by_mode = per_turn(urls, llm_url, priors, args.turns)
            costs = by_mode["plain"]
            base = percentile([own for _, own in costs[priors[0]]], 50)
            for prior in priors:
                for label, at in (("turn, wall", 0), ("turn without the LLM call", 1)):
                    values = [c[at] for c in costs[prior]]
                    name = f"{label}, {prior:,} prior (ms)"
                    p50, p99 = percentile(values, 50), percentile(values, 99)
                    ratio = f"{p50 / base:>8.2f}" if at == 1 else ""
                    print(f"{kind:<11}{name:<46}{p50:>9.1f}{p99:>9.1f}{min(values):>9.1f}{ratio}")
            for prior in priors:
                sealed = [own for _, own in by_mode["sealed"][prior]]
                plain = [own for _, own in costs[prior]]
                name = f"sealed turn w/o LLM, {prior:,} prior (ms)"
                p50, p99 = percentile(sealed, 50), percentile(sealed, 99)
                ratio = p50 / percentile(plain, 50)
                print(
                    f"{kind:<11}{name:<46}{p50:>9.1f}{p99:>9.1f}{min(sealed):>9.1f}"
                    f"{ratio:>8.2f} sealed/plain"
                )
            if not args.throughput:
                continue

            cpu: dict[str, list[float]] = {"1": [], "2": []}

            def rate(
                processes: int, kind: str = kind, cpu: dict[str, list[float]] = cpu
            ) -> Callable[[], float]:
                def once() -> float:
                    with database(kind) as url:
                        turns, ms = throughput(url, llm_url, 100, 10, processes, args.threads)
                    cpu[str(processes)].append(ms)
                    return turns

                return once

            figures = alternate([("1", rate(1)), ("2", rate(2))], args.rounds)
            for n in ("1", "2"):
                high, median = best(figures[n])
                name = f"turns/s, {n} worker process(es) x {args.threads} threads, best / median"
                print(f"{kind:<11}{name:<46}{high:>9.1f}{median:>9.1f}")
            for n in ("1", "2"):
                low, median = min(cpu[n]), statistics.median(cpu[n])
                name = f"CPU ms per turn, {n} worker process(es), min / median"
                print(f"{kind:<11}{name:<46}{low:>9.2f}{median:>9.2f}")


if __name__ == "__main__":
    main()
