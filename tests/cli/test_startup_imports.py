"""`tandem` starts light: the console script's module, and each command's module (what
`tandem X --help` imports), import none of the engine's heavy libraries; a command imports
them when it runs."""

from __future__ import annotations

import json
import subprocess
import sys

from bot.cli.commands import COMMANDS

HEAVY = ("sqlalchemy", "openai", "twilio", "flask", "apscheduler", "statsmodels", "numpy")
# In a fresh process: import bot.cli.main, then each command module in turn, and say which
# heavy libraries each step brought in.
PROBE = """
import importlib, json, sys
heavy = {heavy!r}
def loaded():
    return sorted(h for h in heavy if h in sys.modules)
found = {{}}
import bot.cli.main
found["bot.cli.main"] = loaded()
for module in {modules!r}:
    importlib.import_module(module)
    found[module] = loaded()
print(json.dumps(found))
"""


def _probe(modules: list[str], heavy: tuple[str, ...] = HEAVY) -> dict[str, list[str]]:
    script = PROBE.format(heavy=heavy, modules=modules)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_console_script_and_every_command_module_import_no_heavy_library() -> None:
    modules = sorted({entry.module for entry in COMMANDS.values()})
    found = _probe(modules)
    assert found == {name: [] for name in ["bot.cli.main", *modules]}


def test_the_probe_sees_a_heavy_library_when_one_is_imported() -> None:
    found = _probe(["bot.store.errors"], heavy=("sqlalchemy",))
    assert found == {"bot.cli.main": [], "bot.store.errors": ["sqlalchemy"]}
