"""Separating a model's private reasoning from the text a participant may be sent (pure).

Models show their reasoning in three ways, and none of it may reach a participant:
- `<think>…</think>` blocks in the content (DeepSeek-R1, Qwen3; `<thinking>` too). A template
  that opens the block in the prompt leaves only `…</think>` in the reply, and a reply cut off
  mid-thought leaves an unclosed `<think>…`: both are reasoning up to the end of the block.
- A JSON wrapper `{"thinking": "…", "content": "…"}` (PromptPipe's reply format), perhaps inside
  a ```json fence. A reply that looks like the wrapper but does not parse is a problem, never
  text to send, because it would carry the thinking with it.
- A separate `reasoning_content` / `reasoning` field on the message (vLLM, Ollama); the caller
  passes it in as `reasoning`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_BLOCK = re.compile(r"<(think|thinking)>(.*?)</\1>", re.DOTALL | re.IGNORECASE)
_OPEN = re.compile(r"<(?:think|thinking)>", re.IGNORECASE)
_CLOSE = re.compile(r"</(?:think|thinking)>", re.IGNORECASE)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL | re.IGNORECASE)
_WRAPPER_KEYS = {"thinking", "content"}


@dataclass(frozen=True)
class Reply:
    """What a reply says to the participant (`content`, None if nothing) and what it thought."""

    content: str | None
    thinking: str | None = None
    problem: str | None = None


def split_thinking(text: str | None, reasoning: str | None = None) -> Reply:
    """Separate the participant-facing content of a reply from the model's reasoning."""
    thoughts = [reasoning.strip()] if reasoning and reasoning.strip() else []
    body = text or ""
    close, opening = _CLOSE.search(body), _OPEN.search(body)
    if close and (opening is None or close.start() < opening.start()):
        thoughts.append(body[: close.start()].strip())
        body = body[close.end() :]
    thoughts += [match.group(2).strip() for match in _BLOCK.finditer(body)]
    body = _BLOCK.sub("", body)
    if unclosed := _OPEN.search(body):
        thoughts.append(body[unclosed.end() :].strip())
        body = body[: unclosed.start()]
    body = _CLOSE.sub("", body).strip()
    content, problem = _unwrap(body, thoughts)
    thinking = "\n\n".join(t for t in thoughts if t) or None
    return Reply(content or None, thinking, problem)


def _unwrap(body: str, thoughts: list[str]) -> tuple[str | None, str | None]:
    """The content of a `{"thinking", "content"}` wrapper, or the body if it is plain text."""
    fenced = _FENCE.match(body)
    candidate = fenced.group(1) if fenced else body
    if not candidate.startswith("{"):
        return body, None
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError:
        if '"thinking"' in candidate or '"content"' in candidate:
            thoughts.append(candidate)
            return None, "the reply looks like a {thinking, content} JSON wrapper but is not JSON"
        return body, None
    if not isinstance(value, dict) or not (_WRAPPER_KEYS & value.keys()):
        return body, None
    thinking, content = value.get("thinking"), value.get("content")
    if isinstance(thinking, str):
        thoughts.append(thinking.strip())
    if content is not None and not isinstance(content, str):
        return None, f"the wrapper's content is a {type(content).__name__}, not text"
    return (content or "").strip() or None, None
