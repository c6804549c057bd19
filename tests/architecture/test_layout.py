"""The layout: capability packages only at bot/'s root, no import cycles, layers kept."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "modules", "tools")


def import_cycles(*packages: str) -> list[list[str]]:
    """Every set of modules under `packages` that import each other in a ring (a strongly
    connected component of the import graph, function-level and TYPE_CHECKING imports
    included, a package's __init__ counted as a module), each sorted; [] when there is none."""
    graph = grimp.build_graph(*packages, cache_dir=None)
    inside = sorted(m for m in graph.modules if m.split(".")[0] in packages)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # Tarjan's algorithm, iteratively (the graph is deeper than the recursion limit allows).
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target.split(".")[0] not in packages:
                    continue
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    imported = sorted(graph.find_modules_directly_imported_by(target))
                    work.append((target, iter(imported)))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    ring = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        ring.append(member)
                        if member == node:
                            break
                    if len(ring) > 1:
                        found.append(sorted(ring))

    for module in inside:
        if module not in index:
            visit(module)
    return sorted(found)


def test_bot_modules_and_tools_have_no_import_cycle() -> None:
    assert import_cycles(*PACKAGES) == []


def _package(root: Path, name: str, files: dict[str, str]) -> None:
    folder = root / name
    folder.mkdir()
    (folder / "__init__.py").write_text('"""A package of the test."""\n')
    for file, text in files.items():
        (folder / file).write_text(text)


def test_the_cycle_check_finds_a_cycle_that_is_added(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(
        tmp_path,
        "ringed",
        {
            "first.py": "from ringed import second\n",
            "second.py": "def later():\n    from ringed import first  # deferred: still a cycle\n",
            "alone.py": "import ringed.first\n",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    assert import_cycles("ringed") == [["ringed.first", "ringed.second"]]


def test_the_cycle_check_counts_a_package_init_that_imports_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, "looped", {"routes.py": "from looped import app_of\n"})
    (tmp_path / "looped" / "__init__.py").write_text(
        "from looped import routes\n\n\ndef app_of():\n    return routes\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    assert import_cycles("looped") == [["looped", "looped.routes"]]


def test_nothing_but_packages_sits_at_bots_root() -> None:
    loose = sorted(
        entry.name
        for entry in (ROOT / "bot").iterdir()
        if entry.name not in ("__init__.py", "__pycache__")
        and not (entry.is_dir() and (entry / "__init__.py").is_file())
    )
    assert loose == []


@pytest.mark.parametrize(
    "package", sorted(p.parent.name for p in (ROOT / "bot").glob("*/__init__.py"))
)
def test_each_package_says_what_it_owns_and_what_it_may_import(package: str) -> None:
    text = (ROOT / "bot" / package / "__init__.py").read_text()
    assert text.startswith('"""'), f"bot/{package}/__init__.py opens with its docstring"
    assert "May import:" in text or "An entry point" in text or "(an entry point)" in text


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(lint), "--no-cache", "--config", str(root / "pyproject.toml")],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": str(lint.parent)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _copy_tree(target: Path) -> Path:
    for name in PACKAGES:
        shutil.copytree(ROOT / name, target / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", target / "pyproject.toml")
    return target


@pytest.mark.slow
def test_the_layers_contract_holds_and_breaks_on_an_upward_import(tmp_path: Path) -> None:
    tree = _copy_tree(tmp_path)
    kept = _lint_imports(tree)
    assert kept.returncode == 0, kept.stdout + kept.stderr

    clock = tree / "bot" / "core" / "clock.py"
    clock.write_text(clock.read_text() + "\nfrom bot.store import events  # upward\n")
    broken = _lint_imports(tree)

    assert broken.returncode != 0
    assert "layers: entry points" in broken.stdout and "BROKEN" in broken.stdout
    assert "bot.core.clock -> bot.store.events" in broken.stdout
