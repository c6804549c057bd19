"""`make mutation`: mutate the pure modules one change at a time (cosmic-ray) and run each
module's own tests against every mutant; print each module's score and its surviving mutants.

Run by hand, like the benchmarks; never by CI (minutes per module). The mutants are made in a
copy of the project under a temporary folder, so the working tree is never changed.
Usage: python mutation/run.py [--only NAME ...] [--keep]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTEST = f"{sys.executable} -m pytest -x -q -p no:cacheprovider -p no:randomly"
# name -> (the module or package mutated, the tests that are its own)
TARGETS: dict[str, tuple[str, str]] = {
    "local time": ("bot/core/localtime.py", "tests/core/test_localtime.py"),
    "conditions": (
        "bot/interventions/conditions.py",
        "tests/interventions/test_expressions.py tests/interventions/test_participant_values.py",
    ),
    "crisis screen": ("bot/conversation/safety.py", "tests/conversation/test_safety.py"),
    "projections": ("bot/store/projections", "tests/store -k 'not postgresql'"),
    "tone": ("bot/conversation/tone.py", "tests/conversation/test_tone.py"),
}
SKIP = {".venv", ".git", "mutants", "__pycache__", ".pytest_cache", ".ruff_cache"}
CONFIG = """[cosmic-ray]
module-path = "{module}"
timeout = {timeout}
excluded-modules = []
test-command = "{tests}"

[cosmic-ray.distributor]
name = "local"
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=sorted(TARGETS), help="one target")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per mutant")
    parser.add_argument("--keep", action="store_true", help="keep the copy (its path is printed)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tandem-mutation-"))
    copy = work / "tandem"
    shutil.copytree(ROOT, copy, ignore=lambda _d, names: [n for n in names if n in SKIP])
    scores = []
    try:
        for name in args.only or list(TARGETS):
            scores.append(run(name, copy, work, args.timeout))
    finally:
        if args.keep:
            print(f"the copy is kept at {copy}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("\nmodule          killed / mutants   score")
    for name, killed, total in scores:
        score = f"{100 * killed / total:5.1f} %" if total else "    -"
        print(f"{name:15} {killed:6} / {total:<7}   {score}")
    return 0


def run(name: str, copy: Path, work: Path, timeout: float) -> tuple[str, int, int]:
    module, tests = TARGETS[name]
    slug = re.sub(r"\W+", "-", name)
    config, session = work / f"{slug}.toml", work / f"{slug}.sqlite"
    config.write_text(CONFIG.format(module=module, timeout=timeout, tests=f"{PYTEST} {tests}"))
    print(f"\n== {name}: {module}, tested by {tests}", flush=True)
    cosmic = [sys.executable, "-m", "cosmic_ray.cli"]
    subprocess.run([*cosmic, "init", str(config), str(session)], cwd=copy, check=True)
    subprocess.run([*cosmic, "exec", str(config), str(session)], cwd=copy, check=True)
    report = subprocess.run(
        [
            sys.executable,
            "-m",
            "cosmic_ray.tools.report",
            "--surviving-only",
            "--show-diff",
            str(session),
        ],
        cwd=copy,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    print(report)
    total = int(re.search(r"total jobs: (\d+)", report)[1])  # type: ignore[index]
    survived = re.search(r"surviving mutants: (\d+)", report)
    killed = total - (int(survived[1]) if survived else 0)
    return name, killed, total


if __name__ == "__main__":
    raise SystemExit(main())
