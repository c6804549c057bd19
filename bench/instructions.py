"""Count the CPU instructions of one operation, this tree against another revision's.

Wall-clock figures on a machine other people load are noise; the number of instructions an
operation executes is not: it does not change with the load, the CPU's frequency or the other
processes, so two trees can be compared on a busy machine. Each operation runs in a process under
`valgrind --tool=callgrind` (instrumented only from the first measured operation; the imports,
the seeding and a warm-up run uninstrumented) and is counted over several repetitions, in two
halves whose per-operation counts should agree (printed as "spread"). The operations are the
workloads of `make bench` (bench/event_store.py, bench/turn.py, bench/export.py and the tests'
signed webhooks), each through the tree's own bench and test helpers, on SQLite:
- append: `EventStore.append` of one `message.received` to an existing stream;
- turn: `Worker.run_once` on a recorded message of a participant with 1,000 prior events
  (habit-coach's intake, the LLM answering from a scripted server in a process of its own that
  is not counted: the engine's own instructions, the openai SDK's included);
- webhook: one signed inbound message through the Flask test client (`create_app`), 200;
- export: `export` to CSV, per event, of 100 participants with 10 messages each;
- replay: `replay.check` of the same events, per event.

`--base REV` checks REV out with `git worktree add` into a temporary directory and runs the same
workloads with that tree first on PYTHONPATH and the same virtualenv (`--now REV` counts another
revision instead of this working tree). Run by hand (minutes under valgrind):
`python bench/instructions.py [--base 967249d] [--now main] [--ops append,turn,...]`.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
OPS = ("append", "turn", "webhook", "export", "replay")
# Repetitions per half (two halves are measured) and uninstrumented warm-up runs, per operation.
REPEATS = {"append": 300, "turn": 3, "webhook": 40, "export": 1, "replay": 1}
WARMUP = {"append": 20, "turn": 1, "webhook": 5, "export": 1, "replay": 1}
EXPORT_PARTICIPANTS = 100
PRIOR_EVENTS = 1000

# Callgrind's client requests (valgrind/callgrind.h), as a library ctypes can call; outside
# valgrind each is a no-op.
CONTROL_SOURCE = r"""
#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void cg_toggle(void) { CALLGRIND_TOGGLE_COLLECT; }
void cg_zero(void) { CALLGRIND_ZERO_STATS; }
void cg_dump(const char *reason) { CALLGRIND_DUMP_STATS_AT(reason); }
int cg_on_valgrind(void) { return RUNNING_ON_VALGRIND; }
"""


# ---------------------------------------------------------------------------------------------
# The measuring process (under valgrind, with the measured tree first on sys.path).


class Counter:
    """Start, collect and dump callgrind's counts from inside the measured process."""

    def __init__(self, library: str) -> None:
        self.lib = ctypes.CDLL(library)
        self.lib.cg_dump.argtypes = [ctypes.c_char_p]
        self.started = False

    @contextmanager
    def counting(self) -> Iterator[None]:
        """Instructions inside the block are collected (instrumentation starts once)."""
        if not self.started:
            self.lib.cg_start()
            self.lib.cg_zero()
            self.started = True
        self.lib.cg_toggle()
        try:
            yield
        finally:
            self.lib.cg_toggle()

    def dump(self, reason: str) -> None:
        self.lib.cg_dump(reason.encode())
        self.lib.cg_zero()


Measured = Callable[[Counter, str], None]


def _append(counter: Counter, tag: str) -> None:
    from bench.common import database, make_engine  # (the tree's make_engine, wherever it is)
    from bench.event_store import _message, _tandem

    with database("sqlite") as url:
        _timed, store, stream = _tandem(make_engine(url), 0.0)
        messages = iter(range(10**9))

        def once() -> None:
            store.append(stream, [_message(next(messages))], idempotency_key=f"SM{next(keys)}")

        keys = iter(range(10**9))
        for _ in range(WARMUP["append"]):
            once()
        _halves(counter, tag, "append", once)


def _turn(counter: Counter, tag: str) -> None:
    from bench.common import database
    from bench.turn import _message, _seed, _services
    from bot.runtime.routing import build_handler
    from bot.runtime.worker import Worker
    from bot.store.events import participant_stream

    llm = os.environ["BENCH_LLM_URL"]
    with database("sqlite") as url:
        services = _services(url, llm)
        worker = Worker(services, build_handler(services), "bench")
        total = WARMUP["turn"] + 2 * REPEATS["turn"]
        people = iter([_seed(services, n, PRIOR_EVENTS) for n in range(total)])

        def once(measure: Callable[[], AbstractContextManager[None]] | None = None) -> None:
            pid, phone = next(people)
            message = _message(phone, "How do I start tomorrow?")
            stream = participant_stream(pid)
            services.store.append(stream, [message], idempotency_key=message.message_sid)
            if measure is None:
                assert worker.run_once() == 1, "the turn was not handled"
                return
            with measure():
                handled = worker.run_once()
            assert handled == 1, "the turn was not handled"

        for _ in range(WARMUP["turn"]):
            once()
        _halves(counter, tag, "turn", lambda: once(counter.counting), inner=True)


def _webhook(counter: Counter, tag: str) -> None:
    from bench.common import database, make_engine
    from bot.runtime.bootstrap import build_services
    from bot.store.event_store import EventStore
    from bot.web import create_app
    from tests.web.conftest import settings_for
    from tests.web.twilio_requests import INBOUND, PUBLIC, enroll, message, sign

    with database("sqlite") as url:
        store = EventStore(make_engine(url))
        services = build_services(settings_for(url), store=store)
        client = create_app(services).test_client()
        phone = "+14155552671"
        enroll(services, phone)

        def once(measure: Callable[[], AbstractContextManager[None]] | None = None) -> None:
            form = message("I walked today", sender=phone)
            headers = {"X-Twilio-Signature": sign(PUBLIC + INBOUND, form)}
            if measure is None:
                status = client.post(INBOUND, data=form, headers=headers).status_code
            else:
                with measure():
                    status = client.post(INBOUND, data=form, headers=headers).status_code
            assert status == 200, f"the webhook answered {status}"

        for _ in range(WARMUP["webhook"]):
            once()
        _halves(counter, tag, "webhook", lambda: once(counter.counting), inner=True)


def _reporting(counter: Counter, tag: str, ops: list[str]) -> None:
    from bench.common import database, make_engine
    from bench.export import export, seed
    from bot.store.event_store import EventStore
    from bot.store.replay import check

    try:  # the memory's fold, as bootstrap's stores (a step of the renovation's trees)
        from bot.runtime.bootstrap import register_column_folds
    except ImportError:
        register_column_folds = None  # noqa: N806
    with database("sqlite") as url, tempfile.TemporaryDirectory() as out:
        if register_column_folds is not None:
            register_column_folds()
        store = EventStore(make_engine(url))
        events = seed(store, EXPORT_PARTICIPANTS)
        runs = iter(range(10**6))

        def exported() -> None:
            export(store, Path(out) / f"x{next(runs)}")

        def replayed() -> None:
            report = check(store)
            assert report.clean, report.differences[:3]

        chosen = {"export": exported, "replay": replayed}
        for op in ops:
            for _ in range(WARMUP[op]):
                chosen[op]()
            _halves(counter, tag, op, chosen[op], per=events)


def _halves(
    counter: Counter,
    tag: str,
    op: str,
    once: Callable[[], None],
    *,
    inner: bool = False,
    per: int = 1,
) -> None:
    """Two halves of REPEATS[op] runs of `once`, each dumped with the operations it counted
    (`inner`: `once` collects its own measured part)."""
    for half in (1, 2):
        if inner:
            for _ in range(REPEATS[op]):
                once()
        else:
            with counter.counting():
                for _ in range(REPEATS[op]):
                    once()
        counter.dump(f"tree={tag} op={op} half={half} count={REPEATS[op] * per}")


def measure(tree: Path, tag: str, ops: list[str], library: str) -> None:
    """Run the chosen operations of `tree` (already first on sys.path), dumping their counts."""
    import bot

    assert Path(bot.__file__).resolve().is_relative_to(tree), f"bot comes from {bot.__file__}"
    counter = Counter(library)
    assert counter.lib.cg_on_valgrind(), "run under valgrind --tool=callgrind"
    runners: dict[str, Callable[[], None]] = {
        "append": lambda: _append(counter, tag),
        "turn": lambda: _turn(counter, tag),
        "webhook": lambda: _webhook(counter, tag),
    }
    for op in ops:
        if op in runners:
            runners[op]()
    reporting = [op for op in ops if op in ("export", "replay")]
    if reporting:
        _reporting(counter, tag, reporting)


# ---------------------------------------------------------------------------------------------
# The driver: builds the control library, checks out the base, runs each tree under valgrind.

_REASON = re.compile(r"tree=(\S+) op=(\S+) half=(\d) count=(\d+)")


def _control_library(folder: Path) -> str:
    source, library = folder / "cgcontrol.c", folder / "libcgcontrol.so"
    source.write_text(CONTROL_SOURCE)
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", library, source], check=True)
    return str(library)


@contextmanager
def _worktree(rev: str, parent: Path, name: str) -> Iterator[Path]:
    """`rev` checked out into a temporary worktree (removed after)."""
    path = parent / name
    subprocess.run(
        ["git", "-C", HERE, "worktree", "add", "--detach", "--quiet", path, rev], check=True
    )
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", HERE, "worktree", "remove", "--force", path], check=False)


def _run_tree(tree: Path, tag: str, ops: list[str], library: str, out: Path, llm: str) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "PYTHONHASHSEED": "0",
        "BENCH_LLM_URL": llm,
        "TANDEM_MASTER_KEY": "",
    }
    env.pop("TANDEM_MASTER_KEY")
    command = [
        "valgrind",
        "-q",
        "--tool=callgrind",
        "--instr-atstart=no",
        "--collect-atstart=no",
        f"--callgrind-out-file={out / tag}.%p",
        sys.executable,
        str(Path(__file__).resolve()),
        "--measure",
        str(tree),
        "--tag",
        tag,
        "--ops",
        ",".join(ops),
        "--library",
        library,
    ]
    subprocess.run(command, env=env, cwd=tree, check=True)


def _counts(out: Path) -> dict[tuple[str, str], list[float]]:
    """{(tree, op): [instructions per operation of each half]} from callgrind's dump files."""
    found: dict[tuple[str, str], list[float]] = {}
    for path in sorted(out.glob("*.*")):
        text = path.read_text(errors="replace")
        reason, total = _REASON.search(text), re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if reason and total:
            tree, op, _half, count = reason.groups()
            found.setdefault((tree, op), []).append(int(total.group(1)) / int(count))
    return found


def _table(found: dict[tuple[str, str], list[float]], ops: list[str], base: bool) -> str:
    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    def spread(values: list[float]) -> str:
        return f"{(max(values) / min(values) - 1) * 100:.2f} %"

    head = "| operation | base instr/op | now instr/op | now/base | spread base, now |"
    lines = [head, "|---|---:|---:|---:|---|"] if base else []
    if not base:
        lines = ["| operation | instr/op | spread |", "|---|---:|---|"]
    for op in ops:
        now = found.get(("now", op))
        if not now:
            lines.append(f"| {op} | (no count) |")
            continue
        if not base:
            lines.append(f"| {op} | {mean(now):,.0f} | {spread(now)} |")
            continue
        before = found.get(("base", op))
        if not before:
            lines.append(f"| {op} | (no count) | {mean(now):,.0f} | | |")
            continue
        ratio = mean(now) / mean(before)
        lines.append(
            f"| {op} | {mean(before):,.0f} | {mean(now):,.0f} | {ratio:.3f} | "
            f"{spread(before)}, {spread(now)} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="a git revision to compare with (a temporary worktree)")
    parser.add_argument("--now", help="a git revision to count instead of this working tree")
    parser.add_argument("--ops", default=",".join(OPS), help="operations, comma-separated")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # the tree, in the child
    parser.add_argument("--tag", help=argparse.SUPPRESS)
    parser.add_argument("--library", help=argparse.SUPPRESS)
    args = parser.parse_args()
    ops = [op for op in args.ops.split(",") if op]
    unknown = sorted(set(ops) - set(OPS))
    if unknown:
        parser.error(f"unknown operation(s): {', '.join(unknown)} (known: {', '.join(OPS)})")
    if args.measure:
        tree = Path(args.measure).resolve()
        sys.path[:] = [str(tree), *(p for p in sys.path if Path(p or ".").resolve() != HERE)]
        measure(tree, args.tag, ops, args.library)
        return
    sys.path.insert(0, str(HERE))
    from bench.common import scripted_llm
    from bench.turn import _answer

    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tandem-instr-")))
        library = _control_library(tmp)
        out = tmp / "callgrind"
        out.mkdir()
        llm = stack.enter_context(scripted_llm(_answer))
        now = stack.enter_context(_worktree(args.now, tmp, "now")) if args.now else HERE
        trees = [("now", now)]
        if args.base:
            trees.insert(0, ("base", stack.enter_context(_worktree(args.base, tmp, "base"))))
        for tag, tree in trees:
            print(f"counting {tag} ({tree}) under callgrind: {', '.join(ops)}", flush=True)
            _run_tree(tree, tag, ops, library, out, llm)
        print(_table(_counts(out), ops, base=bool(args.base)))


if __name__ == "__main__":
    main()
