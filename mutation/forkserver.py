"""A warm process that runs one module's own tests once per mutant, for cosmic-ray.

cosmic-ray writes each mutant into the file and runs its test command; starting Python and
importing SQLAlchemy, pydantic, Flask and the rest of the project for every mutant costs more
than the tests themselves. So the test command is this file's client: it asks the server, which
has imported everything that does not depend on the mutated modules, to fork; the child
imports the mutated modules (and what depends on them) fresh from the file, runs pytest on the
module's own tests and exits with pytest's code, which the client exits with.

Only the tests that run the mutated line are run (coverage, measured once per test at the
start): a mutant on a line that no test runs survives without running any; a line run while
the modules are imported, or one coverage does not report (a continuation line), gets every
test.

    python mutation/forkserver.py serve SOCKET MODULE... -- PYTEST-ARGS...
    python mutation/forkserver.py ask SOCKET TIMEOUT
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import signal
import socket
import sys
import time
from pathlib import Path

PACKAGES = ("bot", "modules", "tools")
ORDER = "(the order the tests ran in)"
MUTATED: list[Path] = []


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


class Block:
    """An import hook refusing the mutated modules while the server warms up: a module that
    needs one fails to import (Python drops it from sys.modules) and is left to the child."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name in self.names:
            raise ImportError(f"{name} is mutated: imported fresh by each child")


def mutated(root: Path, targets: list[Path]) -> set[str]:
    """The module names of the targets (a package stands for all of its modules)."""
    names: set[str] = set()
    for target in targets:
        path = root / target
        files = [path] if path.is_file() else list(path.rglob("*.py"))
        names.update(module_name(root, f) for f in files)
    return names


def serve(path: str, targets: list[str], pytest_args: list[str]) -> None:
    root = Path.cwd()
    sys.path.insert(0, str(root))
    import hypothesis  # noqa: F401  (imported once, here)
    import pytest  # noqa: F401

    fresh = mutated(root, [Path(t) for t in targets])
    block = Block(fresh)
    sys.meta_path.insert(0, block)
    for package in PACKAGES:
        for file in sorted((root / package).rglob("*.py")):
            try:
                importlib.import_module(module_name(root, file))
            except Exception:  # noqa: BLE001, S112  (it needs a mutated module: the child's)
                continue
    sys.meta_path.remove(block)
    leaked = sorted(n for n in sys.modules if n in fresh)
    if leaked:
        raise SystemExit(f"the server imported mutated modules: {leaked}")
    kept = sum(1 for n in sys.modules if n.split(".")[0] in PACKAGES)
    files = [Path(t) for t in targets]
    files = [f for t in files for f in ([t] if t.suffix == ".py" else sorted(t.rglob("*.py")))]
    MUTATED.extend(files)
    original = {f: f.read_text().splitlines() for f in files}
    covered = measure(files, pytest_args, Path(path + ".coverage.json"))
    everything = [a for a in pytest_args if not a.startswith("-") and a.startswith("tests")]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    print(f"fork server ready: {kept} project modules imported once", flush=True)
    while True:
        conn, _ = listener.accept()
        with conn:
            timeout = float(conn.recv(64).decode() or "60")
            started = time.monotonic()
            chosen = tests_for(original, covered)
            if chosen is None:
                code = run_child(pytest_args, timeout)
            elif not chosen:
                code = 0  # no test runs the mutated line: it survives
            else:
                options = [a for a in pytest_args if a not in everything]
                code = run_child([*options, *chosen], timeout)
                if code in (4, 5):  # a chosen test not found: run them all, to be sure
                    code = run_child(pytest_args, timeout)
            conn.sendall(str(code).encode())
            tests = "all" if chosen is None else len(chosen)
            elapsed = time.monotonic() - started
            print(f"mutant: {tests} tests, exit {code}, {elapsed:.1f} s", file=sys.stderr)


def measure(files: list[Path], pytest_args: list[str], out: Path) -> dict[str, dict[int, list]]:
    """{file: {line: [test node ids that ran it]}}; "" stands for "while importing"."""
    pid = os.fork()
    if pid == 0:
        log = os.open(str(out) + ".log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(log, 1)
        os.dup2(log, 2)
        import coverage
        import pytest

        cov = coverage.Coverage(include=[str(f.resolve()) for f in files], data_file=None)

        ran: list[str] = []

        class Contexts:
            @pytest.hookimpl(wrapper=True)
            def pytest_runtest_protocol(self, item, nextitem):  # noqa: ANN001, ARG002
                ran.append(item.nodeid)
                cov.switch_context(item.nodeid)
                try:
                    return (yield)
                finally:
                    cov.switch_context("")

        cov.start()
        code = pytest.main([a for a in pytest_args if a != "-x"], plugins=[Contexts()])
        cov.stop()
        data = cov.get_data()
        found = {}
        for f in files:
            lines = data.contexts_by_lineno(str(f.resolve()))
            found[str(f)] = {str(n): sorted(c) for n, c in lines.items()}
            for n in cov.analysis2(str(f.resolve()))[1]:  # statements never run: no tests
                found[str(f)].setdefault(str(n), [])
        out.write_text(json.dumps({"code": int(code), "lines": found, "order": ran}))
        os._exit(0)
    os.waitpid(pid, 0)
    measured = json.loads(out.read_text())
    if measured["code"] != 0:
        raise SystemExit(f"the tests fail without any mutant (pytest exit {measured['code']})")
    covered = {f: {int(n): c for n, c in ls.items()} for f, ls in measured["lines"].items()}
    covered[ORDER] = {i: [nodeid] for i, nodeid in enumerate(measured["order"])}
    return covered


def tests_for(original: dict[Path, list[str]], covered: dict[str, dict[int, list]]) -> list | None:
    """The node ids of the tests that run the lines the mutant changed, in the suite's order;
    None for every test."""
    chosen: set[str] = set()
    for file, before in original.items():
        now = file.read_text().splitlines()
        if now == before:
            continue
        if len(now) != len(before):
            return None
        for number, (old, new) in enumerate(zip(before, now, strict=True), start=1):
            if old == new:
                continue
            contexts = covered[str(file)].get(number)
            if contexts is None or "" in contexts:
                return None
            chosen.update(contexts)
    return [ids[0] for _, ids in sorted(covered[ORDER].items()) if ids[0] in chosen]


def run_child(pytest_args: list[str], timeout: float) -> int:
    pid = os.fork()
    if pid == 0:
        # A mutant's .pyc could outlive it (same size, same second): compile the mutated
        # files afresh. Every other .pyc (the rewritten test modules too) is reused.
        for file in MUTATED:
            Path(importlib.util.cache_from_source(str(file.resolve()))).unlink(missing_ok=True)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        import pytest

        code = pytest.main(pytest_args)
        os._exit(int(code))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return 124


def ask(path: str, timeout: str) -> int:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        conn.sendall(timeout.encode())
        return int(conn.recv(16).decode())


if __name__ == "__main__":
    command, where, *rest = sys.argv[1:]
    if command == "ask":
        raise SystemExit(ask(where, rest[0]))
    split = rest.index("--")
    serve(where, rest[:split], rest[split + 1 :])
