"""Runs every golden conversation in tests/conversations/*.yaml through the scenario harness.

A golden file is a readable transcript: a header comment saying what it shows, optional
`intervention` (the slug under interventions/ participants are enrolled in; default
habit-coach, the harness's INTERVENTION), optional `settings` (environment names), and
`steps`, each one of
  - user: "text"                     an SMS from the participant (a signed webhook)
  - llm: {text: "..."}               the LLM's next answer; or {tool_calls: [{name, arguments}]}
                                     (arguments as a mapping, or a string sent verbatim), with an
                                     optional text; or {json: {...}}, a structured answer (a
                                     judgement's result); or {error: 500}, {timeout: true},
                                     {empty: true}. Answers are used in order; `for:` names the
                                     call one answers ("judgement:risk", "step:plan:reply"): if
                                     every answer before an expect has one, the LLM calls made
                                     (their `llm.called` purposes) must be exactly those
  - enroll: {name: Ana, ...}         POST /conversation/participants with these fields
  - advance: 5m | 5h | 1d            let time pass (timers fire on the way)
  - at: "09:20"                      let time pass until that Toronto time next comes
  - expect: {...}                    what happened since the previous expect:
      outbound: ["...", {startswith: "..."}]   messages Twilio received for the participant
      outbound_to: {"+1...": ["..."]}          messages to another phone (a supervisor)
      events: [message.received, ...]          event types, without work.completed and
                                               message.sent (delivery bookkeeping)
      failures: ["HTTP 500", ...]              what each tool.failed and turn.failed says, in
                                               order (each a part of its error or reason)
      llm_requests: 2                          chat completions made
      prompt_contains: ["halfway"]             text found in a prompt sent since (each)
      state: feedback                          the conversation state now
      step: tip                                the intervention step now (state step)
      profile: {field: value}                  profile fields now
      forms: {form: {field: value}}            form values now (the participants row's forms)
      form_complete: {form: true}              whether each form is complete now
      retrieved: {name: [id, ...]}             the documents (ids, best first) of every
                                               retrieval.done of that name since, each
The file must end with an `expect`, and every scripted LLM answer must be used.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes.openai_api import ScriptedReply
from tests.scenarios.harness import TORONTO, Harness

HERE = Path(__file__).parent
GOLDEN = sorted(HERE.glob("*.yaml"))
BOOKKEEPING = {"work.completed", "message.sent"}
UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def test_there_are_golden_conversations_to_run() -> None:
    assert len(GOLDEN) >= 6


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_the_golden_conversation_plays_out_as_written(path: Path, make_harness) -> None:
    spec = yaml.safe_load(path.read_text())
    assert path.read_text().startswith("#"), (
        "a golden file opens with a comment saying what it shows"
    )
    steps = spec["steps"]
    assert steps and "expect" in steps[-1], "a golden file ends with an expect"
    env = {k: str(v) for k, v in (spec.get("settings") or {}).items()}
    if spec.get("intervention"):
        env["INTERVENTION"] = str(spec["intervention"])
    h: Harness = make_harness(**env)
    seen = Seen(h)
    for number, step in enumerate(steps, start=1):
        ((action, value),) = step.items()
        where = f"{path.name}, step {number} ({action})"
        if action == "expect":
            check(h, seen, value, where)
            seen = Seen(h)
        else:
            if action == "llm":
                seen.purposes.append(value.get("for"))
            play(h, action, value)
    assert h.llm.pending == 0, f"{path.name}: {h.llm.pending} scripted LLM answer(s) unused"


class Seen:
    """How far the conversation had got at the previous expect."""

    def __init__(self, h: Harness) -> None:
        self.events = len(h.events()) if h.pid else 0
        self.requests = len(h.requests)
        self.sent = len(h.twilio.messages)
        self.purposes: list[str | None] = []  # the `for:` of each LLM answer scripted since


def play(h: Harness, action: str, value: Any) -> None:
    if action == "user":
        h.text(str(value))
    elif action == "llm":
        h.script(scripted(value))
    elif action == "enroll":
        response = h.enroll(**(value or {}))
        assert response.status_code == 201, response.get_json()
    elif action == "advance":
        amount, unit = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd])", str(value)).groups()  # type: ignore[union-attr]
        h.advance(timedelta(**{UNITS[unit]: float(amount)}))
    elif action == "at":
        hour, minute = (int(part) for part in str(value).split(":"))
        now = h.clock.now().astimezone(TORONTO)
        target = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
        h.until(target if target > now else target + timedelta(days=1))
    else:
        raise AssertionError(f"unknown step {action!r}")


def scripted(reply: dict[str, Any]) -> ScriptedReply:
    if "error" in reply:
        return ScriptedReply.error(int(reply["error"]), reply.get("message", "Scripted error"))
    if reply.get("timeout"):
        return ScriptedReply.hang(10)
    if reply.get("empty"):
        return ScriptedReply.empty()
    if "json" in reply:
        return ScriptedReply.structured(reply["json"])
    if "tool_calls" in reply:
        calls = [(c["name"], c.get("arguments", {})) for c in reply["tool_calls"]]
        return ScriptedReply.tool_calls(calls, content=reply.get("text"))
    return ScriptedReply.text(reply["text"])


def check(h: Harness, seen: Seen, expected: dict[str, Any], where: str) -> None:
    sent = h.twilio.messages[seen.sent :]
    if "outbound" in expected:
        bodies = [m.form.get("Body", "") for m in sent if m.form.get("To") == h.phone]
        assert_messages(bodies, expected["outbound"], where)
    for phone, messages in (expected.get("outbound_to") or {}).items():
        bodies = [m.form.get("Body", "") for m in sent if m.form.get("To") == phone]
        assert_messages(bodies, messages, f"{where}, to {phone}")
    if seen.purposes and None not in seen.purposes:
        since = h.events()[seen.events :]
        called = [e.data.purpose for e in since if e.event_type == "llm.called"]
        assert called == seen.purposes, f"{where}: the LLM was asked for {called!r}"
    if "events" in expected:
        types = [e.event_type for e in h.events()[seen.events :]]
        got = [t for t in types if t not in BOOKKEEPING]
        assert got == expected["events"], f"{where}: {got}"
    if "failures" in expected:
        said = [
            getattr(e.data, "error", None) or getattr(e.data, "reason", "")
            for e in h.events()[seen.events :]
            if e.event_type in ("tool.failed", "turn.failed")
        ]
        assert len(said) == len(expected["failures"]), f"{where}: {said!r}"
        for text, part in zip(said, expected["failures"], strict=True):
            assert part in text, f"{where}: {text!r}"
    for part in expected.get("prompt_contains") or ():
        sent = [str(m.get("content")) for r in h.requests[seen.requests :] for m in r.messages]
        assert any(part in text for text in sent), f"{where}: no prompt said {part!r}"
    if "llm_requests" in expected:
        assert len(h.requests) - seen.requests == expected["llm_requests"], where
    if "state" in expected:
        assert h.participant()["conversation_state"] == expected["state"], where
    if "step" in expected:
        assert h.participant()["current_step"] == expected["step"], where
    for field, value in (expected.get("profile") or {}).items():
        assert h.participant()["profile"].get(field) == value, f"{where}: profile {field}"
    forms = h.participant()["forms"]
    for form, values in (expected.get("forms") or {}).items():
        stored = (forms.get(form) or {}).get("values") or {}
        for field, value in values.items():
            assert stored.get(field) == value, f"{where}: form {form} field {field}: {stored}"
    for name, ids in (expected.get("retrieved") or {}).items():
        done = [
            [d.id for d in e.data.documents]
            for e in h.events()[seen.events :]
            if e.event_type == "retrieval.done" and e.data.name == name
        ]
        assert done and all(found == ids for found in done), f"{where}: retrieved {done}"
    for form, complete in (expected.get("form_complete") or {}).items():
        assert bool((forms.get(form) or {}).get("completed")) == complete, f"{where}: {form}"


def assert_messages(bodies: list[str], expected: list[Any], where: str) -> None:
    assert len(bodies) == len(expected), f"{where}: sent {bodies!r}"
    for body, wanted in zip(bodies, expected, strict=True):
        if isinstance(wanted, dict):
            assert body.startswith(wanted["startswith"]), f"{where}: {body!r}"
        else:
            assert body == wanted, where
