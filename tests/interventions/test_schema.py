"""`tandem interventions schema`: JSON Schema generated from the loader's models accepts every
shipped intervention's files and refuses what the loader refuses; docs/interventions.md
documents every key the models have."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from bot.cli.main import cli
from bot.interventions.language.format import KINDS
from bot.interventions.language.loader import CONFIG, DECISIONS, FOLDERS, PARTIALS, parse_file
from bot.interventions.language.schema import schemas

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p.parent for p in (ROOT / "interventions").glob(f"*/{CONFIG}"))
DOCS = (ROOT / "docs" / "interventions.md").read_text()


@pytest.fixture(scope="module")
def validators(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Draft202012Validator]:
    out = tmp_path_factory.mktemp("schemas")
    result = CliRunner().invoke(cli, ["interventions", "schema", str(out)])
    assert result.exit_code == 0, result.output
    found = {}
    for path in out.glob("*.schema.json"):
        schema = json.loads(path.read_text())
        Draft202012Validator.check_schema(schema)
        found[path.name.removesuffix(".schema.json")] = Draft202012Validator(schema)
    assert sorted(found) == sorted(["intervention", "form", "decision", *KINDS])
    return found


def _files(folder: Path) -> list[tuple[str, Path]]:
    """(schema name, file) for intervention.yaml, each form file and every primitive's markdown
    file (library documents are not primitives)."""
    found = [("intervention", folder / CONFIG)]
    found += [("form", path) for path in sorted(folder.glob("forms/*.yaml"))]
    libraries = (yaml.safe_load((folder / CONFIG).read_text()) or {}).get("libraries") or {}
    shelves = [folder / spec["path"] for spec in libraries.values()]
    for path in sorted(folder.rglob("*.md")):
        relative = path.relative_to(folder)
        shelved = any(path.is_relative_to(shelf) for shelf in shelves)
        if relative.parts[0] != PARTIALS and path.name.lower() != "readme.md" and not shelved:
            found.append(({**FOLDERS, DECISIONS: "decision"}[relative.parts[0]], path))
    return found


def _data(path: Path) -> dict[str, Any]:
    if path.name == CONFIG or path.suffix == ".yaml":
        return yaml.safe_load(path.read_text())
    return parse_file(path.read_text(), str(path))[0]


@pytest.mark.parametrize("folder", SHIPPED, ids=[f.name for f in SHIPPED])
def test_every_file_of_a_shipped_intervention_validates_against_the_schema(
    validators: dict[str, Draft202012Validator], folder: Path
) -> None:
    files = _files(folder)
    for kind, path in files:
        errors = [e.message for e in validators[kind].iter_errors(_data(path))]
        assert errors == [], f"{path}: {errors}"
    assert len(files) >= 1


def test_the_schema_refuses_an_unknown_key_and_a_wrong_type(
    validators: dict[str, Draft202012Validator],
) -> None:
    step = {"title": "Hi", "say": "Hello", "max_turn": 3, "transitions": [{"to": 5}]}

    errors = sorted(e.message for e in validators["step"].iter_errors(step))

    assert errors == [
        "5 is not of type 'string'",
        "Additional properties are not allowed ('max_turn' was unexpected)",
    ]


def _keys(schema: Any) -> set[str]:
    """Every property name anywhere in a JSON Schema (nested models included)."""
    if isinstance(schema, list):
        return set().union(*(_keys(item) for item in schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = set(schema.get("properties") or {})
    return found.union(*(_keys(value) for value in schema.values()))


def test_every_key_of_the_format_is_documented() -> None:
    keys = set().union(*(_keys(schema) for schema in schemas().values()))

    undocumented = sorted(k for k in keys if f"`{k}`" not in DOCS and f"`{k}:" not in DOCS)

    assert len(keys) > 50
    assert undocumented == []
