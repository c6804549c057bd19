"""Prompt files: YAML front matter (tools, fallback, model settings) over a strict Jinja2 body.

A prompt file looks like

    ---
    tools: [save_user_profile, transition_state]
    fallback: "Thanks! What would you like to work on?"
    greeting_fallback: "Welcome! What would you like to work on?"   # optional
    model: gpt-4o-mini        # optional; the intervention's, else TANDEM_MODEL
    temperature: 0.1          # optional; the intervention's, else TANDEM_TEMPERATURE (0.1)
    max_tokens: 1000          # optional; the intervention's, else TANDEM_MAX_TOKENS (1000)
    ---
    You are ... {{ local_time }} ...

The body is a Jinja2 template rendered with `StrictUndefined`: a variable the engine does not
supply is an error, never an empty string. Values are passed as data, never spliced into the
template source. `unknown_names` finds tool and state names a prompt mentions that the engine
does not have (PromptPipe's prompts named tools and states that did not exist).
"""

from __future__ import annotations

import re
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import frontmatter
import jinja2
from pydantic import BaseModel

from bot.conversation.tooling import ToolSpec
from bot.core.model_choice import ModelChoice

_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, autoescape=False
)
_KEYS = {"tools", "fallback", "greeting_fallback", "model", "temperature", "max_tokens"}
_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
_BACKTICKED = re.compile(r"`([^`\n]+)`")
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_UPPER_SNAKE = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")


class PromptError(ValueError):
    """A prompt file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class Prompt:
    """A loaded prompt: the tools it offers, its fallback text, its model, its template."""

    name: str
    tools: tuple[str, ...]
    fallback: str
    body: str
    template: jinja2.Template = field(repr=False, compare=False)
    model: str | None = None
    greeting_fallback: str | None = None  # sent instead of `fallback` when a greeting fails
    temperature: float | None = None
    max_tokens: int | None = None

    @property
    def choice(self) -> ModelChoice:
        """The model settings this prompt sets (None: left to the intervention and server)."""
        return ModelChoice(self.model, self.temperature, self.max_tokens)

    def render(self, variables: Mapping[str, Any]) -> str:
        """The system prompt; PromptError names a variable the template needs and lacks."""
        try:
            return self.template.render(**variables).strip()
        except jinja2.UndefinedError as exc:
            raise PromptError(f"prompt {self.name!r}: {exc.message}") from None


def load_prompt(path: Path | str) -> Prompt:
    """Read and check one prompt file (front matter keys and types, template syntax)."""
    path = Path(path)
    try:
        post = frontmatter.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # yaml errors are ValueErrors of their own kinds
        raise PromptError(f"{path}: cannot read the prompt: {exc}") from None
    meta = dict(post.metadata)
    unknown = sorted(set(meta) - _KEYS)
    if unknown:
        raise PromptError(f"{path}: unknown front matter key(s) {unknown}; known: {sorted(_KEYS)}")
    tools = meta.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        raise PromptError(f"{path}: `tools` must be a list of tool names")
    fallback = meta.get("fallback")
    if not isinstance(fallback, str) or not fallback.strip():
        raise PromptError(f"{path}: `fallback` must be a non-empty text (sent when the LLM fails)")
    greeting = meta.get("greeting_fallback")
    if greeting is not None and not (isinstance(greeting, str) and greeting.strip()):
        raise PromptError(f"{path}: `greeting_fallback` must be a non-empty text when given")
    model = meta.get("model")
    if model is not None and not (isinstance(model, str) and model.strip()):
        raise PromptError(f"{path}: `model` must be a model name")
    temperature, max_tokens = meta.get("temperature"), meta.get("max_tokens")
    if temperature is not None and not (
        isinstance(temperature, int | float)
        and not isinstance(temperature, bool)
        and 0 <= temperature <= 2
    ):
        raise PromptError(f"{path}: `temperature` must be a number from 0 to 2")
    if max_tokens is not None and not (
        isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens >= 1
    ):
        raise PromptError(f"{path}: `max_tokens` must be a whole number of at least 1")
    try:
        template = _ENV.from_string(post.content)
    except jinja2.TemplateSyntaxError as exc:
        raise PromptError(f"{path}: line {exc.lineno}: {exc.message}") from None
    return Prompt(
        path.stem,
        tuple(tools),
        fallback.strip(),
        post.content,
        template,
        model,
        greeting.strip() if greeting else None,
        float(temperature) if temperature is not None else None,
        max_tokens,
    )


def unknown_names(
    prompt: Prompt, registry: Mapping[str, ToolSpec], states: Iterable[str]
) -> list[str]:
    """Problems with the names a prompt uses: a tool in front matter that does not exist, and
    in the text (outside Jinja tags) any `backticked` or snake_case name that is not an offered
    tool, one of its argument names or values, or a conversation state; any UPPER_SNAKE name."""
    states = set(states)
    problems = [f"tools: no tool named {t!r}" for t in prompt.tools if t not in registry]
    offered = [registry[t] for t in prompt.tools if t in registry]
    known = states | {spec.name for spec in offered}
    for spec in offered:
        known |= _argument_words(spec.arguments)
    text = _JINJA.sub(" ", prompt.body)
    mentioned = set(_BACKTICKED.findall(text)) | set(_SNAKE.findall(text))
    for name in sorted(mentioned - known):
        if name in registry:
            problems.append(f"mentions the tool {name!r}, which the prompt does not offer")
        else:
            problems.append(f"mentions {name!r}: not an offered tool, argument or state")
    problems += [f"mentions {n!r}: states are lower case" for n in _UPPER_SNAKE.findall(text)]
    return problems


def _argument_words(model: type[BaseModel]) -> set[str]:
    """The argument names of a tool and the literal values they accept."""
    words = set(model.model_fields)
    for info in model.model_fields.values():
        words |= {str(v) for v in _literals(info.annotation)}
    return words


def _literals(annotation: Any) -> set[Any]:
    if typing.get_origin(annotation) is typing.Literal:
        return set(typing.get_args(annotation))
    return {v for arg in typing.get_args(annotation) for v in _literals(arg)}
