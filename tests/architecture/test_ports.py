"""The ports: the worker and the dispatcher hold no SQL and never ask which database runs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The two hot paths whose SQL moved behind the store's ports (bot/store/ports.py).
DECIDERS = ("bot/runtime/worker.py", "bot/channel/dispatcher.py")
SQL = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|BEGIN|COMMIT)\b", re.IGNORECASE)
DATABASE_KINDS = {"postgresql", "sqlite"}


def storage_details(source: str) -> list[str]:
    """What in `source` belongs to the store: a `.dialect` read, a database kind compared as
    a string, SQL text, a `.conn` (a transaction's connection) used."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ("dialect", "conn"):
            found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in DATABASE_KINDS or SQL.match(node.value):
                found.append(f"line {node.lineno}: {node.value[:40]!r}")
    return found


@pytest.mark.parametrize("path", DECIDERS)
def test_the_worker_and_the_dispatcher_hold_no_sql_and_no_database_kind(path: str) -> None:
    assert storage_details((ROOT / path).read_text()) == []


def test_a_database_kind_branch_is_seen_as_a_storage_detail() -> None:
    branch = 'if tx.conn.dialect.name == "postgresql":\n    tx.conn.execute("SELECT 1")\n'
    assert len(storage_details(branch)) == 5  # .conn twice, .dialect, the kind, the SQL
