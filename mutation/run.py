"""`make mutation`: mutate the pure modules one change at a time (cosmic-ray) and run each
module's own tests against every mutant; print each module's score and its surviving mutants.

Run by hand, like the benchmarks; never by CI (minutes per module; `make mutation` runs it under
`nice -n 19`). The mutants are made in a copy of the project under a temporary folder, so the
working tree is never changed. One module at a time, each against its own test files only.

Which mutants are run (the rest are marked skipped in cosmic-ray's session, and counted apart):
- none inside a type annotation: a type hint is not behaviour (with `from __future__ import
  annotations` it is a string nobody evaluates, and `str | None` -> `str & None` cannot fail);
- one replacement per arithmetic operator (+ <-> -, * <-> /, // -> /, % -> //, ** -> *, and
  the bit operators among themselves) instead of cosmic-ray's eleven, most of which are a
  TypeError the first test meets;
- per comparison, its boundary and its negation (< -> <= and < -> >=, == -> !=, in -> not in,
  is -> is not) instead of every other comparison.
Mutants listed in mutation/EQUIVALENT.md (module, function, operator and the line as the
mutant has it) are
equivalent: they cannot change behaviour, and the table says why. They are printed apart and
not counted as survivors.

Usage: python mutation/run.py [--only NAME ...] [--again] [--report] [--keep] [--until HH:MM]
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import hashlib
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = Path(__file__).with_name("EQUIVALENT.md")
SESSIONS = Path(__file__).with_name(".sessions")  # kept for --again (git ignores them)
PYTEST_ARGS = [
    "-x",
    "-q",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:randomly",
    # the pure modules' tests use no database fixture: tests/conftest.py (and the store it
    # imports, fresh in each child when it depends on a mutated module) is not loaded
    "--noconftest",
    # anyio's plugin (installed with openai) costs a second per run and none of these use it
    "-p",
    "no:anyio",
    # the fork server imported the plugins' modules before pytest could rewrite them
    "-W",
    "ignore::pytest.PytestAssertRewriteWarning",
]
# name -> (the modules mutated, the test files that are their own)
TARGETS: dict[str, tuple[tuple[str, ...], str]] = {
    "local time": (("bot/core/localtime.py",), "tests/core/test_localtime.py"),
    "conditions": (
        (
            "bot/interventions/language/expressions.py",
            "bot/interventions/language/typecheck.py",
            "bot/interventions/interpreter/conditions.py",
        ),
        "tests/interventions/test_expressions.py tests/interventions/test_typecheck.py "
        "tests/interventions/test_participant_values.py",
    ),
    "crisis screen": (
        (
            "bot/conversation/safety.py",
            "bot/conversation/screen_context.py",
            "bot/conversation/crisis.py",
        ),
        "tests/conversation/test_safety.py tests/conversation/test_screen_context.py "
        "tests/conversation/test_crisis_reply.py",
    ),
    "projections": (
        ("bot/store/projections",),
        "tests/store/test_projections.py tests/store/test_alerts_projection.py",
    ),
    "tone": (("bot/conversation/tone.py",), "tests/conversation/test_tone.py"),
}
SKIP = {".venv", ".git", "mutants", "__pycache__", ".pytest_cache", ".ruff_cache"}
CONFIG = """[cosmic-ray]
module-path = {modules}
timeout = {timeout}
excluded-modules = []
test-command = "{tests}"

[cosmic-ray.distributor]
name = "local"
"""
ARITHMETIC = {
    "Add": "Sub",
    "Sub": "Add",
    "Mul": "Div",
    "Div": "Mul",
    "FloorDiv": "Div",
    "Mod": "FloorDiv",
    "Pow": "Mul",
    "LShift": "RShift",
    "RShift": "LShift",
    "BitOr": "BitAnd",
    "BitAnd": "BitOr",
    "BitXor": "BitAnd",
}
COMPARISON = {
    "Lt": {"LtE", "GtE"},
    "LtE": {"Lt", "Gt"},
    "Gt": {"GtE", "LtE"},
    "GtE": {"Gt", "Lt"},
    "Eq": {"NotEq"},
    "NotEq": {"Eq"},
    "Is": {"IsNot"},
    "IsNot": {"Is"},
    "In": {"NotIn"},
    "NotIn": {"In"},
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=sorted(TARGETS), help="one target")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per mutant")
    parser.add_argument("--keep", action="store_true", help="keep the copy (its path is printed)")
    parser.add_argument(
        "--until", help="UTC time HH:MM after which no mutant is started (the rest are unrun)"
    )
    parser.add_argument(
        "--again",
        action="store_true",
        help="run only the mutants that survived the last run, and those it did not reach "
        "(the module must be unchanged): after adding tests, the killed ones stay killed",
    )
    parser.add_argument(
        "--report",
        action="store_true",
        help="run nothing: print the last run's survivors and scores (with EQUIVALENT.md as it is)",
    )
    args = parser.parse_args()
    if args.report:
        equivalent = read_equivalent()
        scores = [
            count(name, SESSIONS / f"{slug_of(name)}.sqlite", equivalent)
            for name in args.only or list(TARGETS)
        ]
        table(scores)
        return 0
    work = Path(tempfile.mkdtemp(prefix="tandem-mutation-"))
    copy = work / "tandem"
    shutil.copytree(ROOT, copy, ignore=lambda _d, names: [n for n in names if n in SKIP])
    equivalent = read_equivalent()
    scores = []
    try:
        for name in args.only or list(TARGETS):
            scores.append(run(name, copy, work, args, equivalent))
    finally:
        if args.keep:
            print(f"the copy is kept at {copy}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    table(scores)
    return 0


def table(scores: list[tuple[str, int, int, int, int, int]]) -> None:
    print("\nmodule          killed / mutants  equivalent  survived  unrun   score")
    for name, killed, total, same, survived, unrun in scores:
        score = f"{100 * killed / (total - same):5.1f} %" if total > same else "    -"
        print(f"{name:15} {killed:6} / {total:<7}  {same:10}  {survived:8}  {unrun:5}   {score}")
    print("score = killed / (mutants run - equivalent); skipped mutants are not counted")


def run(
    name: str, copy: Path, work: Path, args: argparse.Namespace, equivalent: set[tuple[str, ...]]
) -> tuple[str, int, int, int, int, int]:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    modules, tests = TARGETS[name]
    slug = slug_of(name)
    SESSIONS.mkdir(exist_ok=True)
    config, session = work / f"{slug}.toml", SESSIONS / f"{slug}.sqlite"
    stamp = SESSIONS / f"{slug}.sha256"
    sources = fingerprint(copy, modules)
    sock = work / f"{slug}.sock"
    ask = f"{sys.executable} -S {ROOT / 'mutation' / 'forkserver.py'} ask {sock} {args.timeout}"
    listed = "[" + ", ".join(f'"{m}"' for m in modules) + "]"
    config.write_text(CONFIG.format(modules=listed, timeout=args.timeout + 10, tests=ask))
    print(f"\n== {name}: {', '.join(modules)}, tested by {tests}", flush=True)
    cosmic = [sys.executable, "-m", "cosmic_ray.cli"]
    again = args.again and session.exists() and stamp.exists() and stamp.read_text() == sources
    if args.again and not again:
        print(f"--again: no earlier run of {name} on these sources: all of its mutants run")
    if again:
        with sqlite3.connect(session) as db:  # the survivors become pending again
            db.execute("DELETE FROM work_results WHERE test_outcome = 'SURVIVED'")
    else:
        session.unlink(missing_ok=True)
        subprocess.run([*cosmic, "init", str(config), str(session)], cwd=copy, check=True)
        stamp.write_text(sources)
    server = subprocess.Popen(
        [
            sys.executable,
            ROOT / "mutation" / "forkserver.py",
            "serve",
            sock,
            *modules,
            "--",
            *PYTEST_ARGS,
            *shlex.split(tests),
        ],
        cwd=copy,
        stdout=subprocess.PIPE,
        text=True,
    )
    print(server.stdout.readline().strip(), flush=True)  # type: ignore[union-attr]
    # the unmutated module must pass its tests, or every mutant would count as killed
    if subprocess.run(shlex.split(ask), cwd=copy, check=False).returncode != 0:
        server.kill()
        raise SystemExit(f"{name}: the tests fail without any mutant: {tests}")
    skipped = WorkResult(
        output="not run (see mutation/run.py)", worker_outcome=WorkerOutcome.SKIPPED
    )
    with use_db(str(session), WorkDB.Mode.open) as db:
        annotations: dict[Path, list[tuple[tuple[int, int], tuple[int, int]]]] = {}
        for item in list(db.pending_work_items):
            spec = item.mutations[0]
            spans = annotations.setdefault(
                spec.module_path, annotation_spans(copy / spec.module_path)
            )
            if not wanted(spec.operator_name) or any(
                start <= tuple(spec.start_pos) and tuple(spec.end_pos) <= end
                for start, end in spans
            ):
                db.set_result(item.job_id, skipped)
        print(f"{db.num_work_items - db.num_results} mutants to run", flush=True)
    execute = subprocess.Popen([*cosmic, "exec", str(config), str(session)], cwd=copy)
    try:
        while execute.poll() is None:
            try:
                execute.wait(timeout=10)
            except subprocess.TimeoutExpired:
                if args.until and dt.datetime.now(dt.UTC).strftime("%H:%M") >= args.until:
                    print(f"stopped at {args.until} UTC: the remaining mutants are unrun")
                    execute.terminate()
                    execute.wait()
    finally:
        if execute.poll() is None:
            execute.kill()
        server.kill()
        server.wait()
    return count(name, session, equivalent)


def slug_of(name: str) -> str:
    return re.sub(r"\W+", "-", name)


def count(
    name: str, session: Path, equivalent: set[tuple[str, ...]]
) -> tuple[str, int, int, int, int, int]:
    """Print the survivors of a run (equivalent ones apart) and return its figures."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    if not session.exists():
        print(f"{name}: never run")
        return name, 0, 0, 0, 0, 0
    killed = total = same = survived = 0
    with use_db(str(session), WorkDB.Mode.open) as db:
        unrun = sum(1 for _ in db.pending_work_items)
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            total += 1
            if result.test_outcome != TestOutcome.SURVIVED:
                killed += 1
                continue
            spec = item.mutations[0]
            line = mutated_line(result.diff or "")
            where = spec.definition_name or "(module level)"
            key = (str(spec.module_path), where, short(spec), line)
            if key in equivalent:
                same += 1
                print(f"-- equivalent: {' | '.join(key)}")
                continue
            survived += 1
            print(f"-- survived: {' | '.join(key)}  (line {spec.start_pos[0]})")
            print((result.diff or "").strip())
    print(f"{name}: {killed} killed of {total}, {same} equivalent, {survived} survived", flush=True)
    return name, killed, total, same, survived, unrun


def fingerprint(copy: Path, modules: tuple[str, ...]) -> str:
    """A digest of the mutated sources: --again needs the mutants' lines unchanged."""
    digest = hashlib.sha256()
    for module in modules:
        path = copy / module
        for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
            digest.update(file.read_bytes())
    return digest.hexdigest()


def wanted(operator: str) -> bool:
    """Whether a cosmic-ray operator is in the reduced set (module docstring)."""
    found = re.fullmatch(r"core/Replace(Binary|Comparison)Operator_(\w+?)_(\w+)", operator)
    if found is None:
        return True
    kind, before, after = found.groups()
    if kind == "Binary":
        return ARITHMETIC.get(before) == after
    return after in COMPARISON.get(before, set())


def annotation_spans(path: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(line, column) spans of every annotation in a module."""
    spans = []
    for node in ast.walk(ast.parse(path.read_text())):
        found = []
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            found.append(node.annotation)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
            found.append(node.returns)
        for ann in found:
            spans.append(((ann.lineno, ann.col_offset), (ann.end_lineno, ann.end_col_offset)))
    return spans


def mutated_line(diff: str) -> str:
    """The line as the mutant has it (the diff's first added line), stripped; for a mutant
    that only removes a line (a decorator), "removed: " and that line."""
    lines = diff.splitlines()
    added = [ln for ln in lines if ln.startswith("+") and not ln.startswith("+++")]
    if added:
        return added[0][1:].strip()
    removed = [ln for ln in lines if ln.startswith("-") and not ln.startswith("---") and ln[1:]]
    return "removed: " + removed[0][1:].strip() if removed else ""


def short(spec) -> str:
    return spec.operator_name.removeprefix("core/")


def read_equivalent() -> set[tuple[str, ...]]:
    """(module, function, operator, mutated line) of each row of EQUIVALENT.md's table."""
    rows = set()
    for line in EQUIVALENT.read_text().splitlines() if EQUIVALENT.exists() else []:
        cells = [c.strip().strip("`") for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
        if len(cells) >= 5 and cells[0].startswith("bot/"):
            rows.add(tuple(c.replace("\\|", "|") for c in cells[:4]))
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
