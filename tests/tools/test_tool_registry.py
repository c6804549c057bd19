"""The tool registry: every file in tools/ is registered under its own name, and well formed."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import tools
from bot.runtime.tool_registry import TOOLS, resolve

TOOL_FILES = sorted(info.name for info in pkgutil.iter_modules(tools.__path__))


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def test_every_tool_file_is_registered_under_its_file_name() -> None:
    assert sorted(TOOLS) == TOOL_FILES


@pytest.mark.parametrize("name", TOOL_FILES)
def test_a_tool_file_defines_the_registered_spec_named_for_the_file(name: str) -> None:
    module = importlib.import_module(f"tools.{name}")
    assert module.TOOL is TOOLS[name] and module.TOOL.name == name


@pytest.mark.parametrize("name", TOOL_FILES)
def test_a_tools_argument_model_is_its_pascal_case_name_with_a_description(name: str) -> None:
    model = TOOLS[name].arguments
    assert model.__name__ == _pascal(name)
    assert (model.__doc__ or "").strip(), f"{model.__name__} needs a docstring for the model"


@pytest.mark.parametrize("name", TOOL_FILES)
def test_a_tools_arguments_refuse_unknown_fields(name: str) -> None:
    assert TOOLS[name].arguments.model_json_schema().get("additionalProperties") is False


def test_resolve_returns_the_specs_in_the_order_asked() -> None:
    assert [s.name for s in resolve(["scheduler", "transition_state"])] == [
        "scheduler",
        "transition_state",
    ]


def test_resolve_names_an_unknown_tool_and_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown tool\\(s\\) 'track_feedback'; known tools: "):
        resolve(["scheduler", "track_feedback"])
