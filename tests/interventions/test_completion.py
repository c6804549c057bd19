"""Completing slots in order: each answer is passed on as message content, never as
template code; only the last speakable slot is sent, and every slot is kept."""

from __future__ import annotations

from bot.interventions.interpreter.completion import Asker, complete
from bot.interventions.language.templates import TemplateSet
from tests.modules.step_harness import ScriptedLLM

INJECTION = "{{ 7*7 }} {% for x in range(3) %}boom{% endfor %} [[reply]]"


def rendered(source: str):
    templates = TemplateSet({})
    return templates.render(templates.compile(source), {"name": "Ana"})


def test_slots_are_completed_in_order_and_only_the_last_speakable_one_is_sent() -> None:
    llm = ScriptedLLM()
    llm.says("t:plan", "Ask about sleep.")
    llm.says("t:draft", "How do you sleep?")
    llm.answers("t:ready", True)
    llm.says("t:reply", "How have you been sleeping, Ana?")
    source = "Talk to {{ name }}. [[think:plan]] Draft: [[draft]] [[bool:ready]] Final: [[reply]]"

    done = complete(rendered(source), Asker(llm.converse, llm.structured), purpose="t", tools=["x"])

    assert llm.purposes() == ["t:plan", "t:draft", "t:ready", "t:reply"]
    assert done.values == {
        "plan": "Ask about sleep.",
        "draft": "How do you sleep?",
        "ready": True,
        "reply": "How have you been sleeping, Ana?",
    }
    assert (done.sent, done.text, done.error) == ("reply", "How have you been sleeping, Ana?", None)
    assert [c["tools"] for c in llm.calls if "tools" in c] == [[], [], ["x"]]


def test_each_slot_sees_the_earlier_answers_as_messages() -> None:
    llm = ScriptedLLM()
    llm.says("t:plan", "Be kind.")

    complete(
        rendered("Intro [[think:plan]] Then [[reply]]"), Asker(llm.converse, None), purpose="t"
    )

    assert llm.call("t:reply")["messages"] == [
        {"role": "system", "content": "Intro"},
        {"role": "assistant", "content": "Be kind."},
        {"role": "system", "content": "Then"},
        {"role": "system", "content": "Write reply: only the words to send to the participant, "
         "with no label or quotes."},
    ]  # fmt: skip


def test_model_output_that_looks_like_template_code_is_never_executed() -> None:
    llm = ScriptedLLM()
    llm.says("t:plan", INJECTION)
    llm.says("t:reply", "{% if true %}{{ 6*7 }}{% endif %}")

    done = complete(
        rendered("A [[think:plan]] B {{ 2*3 }} [[reply]]"),
        Asker(llm.converse, None),
        purpose="t",
    )

    later = llm.call("t:reply")["messages"]
    assert {"role": "assistant", "content": INJECTION} in later
    assert {"role": "system", "content": "B 6"} in later
    assert not any("49" in m["content"] or "boomboom" in m["content"] for m in later)
    assert done.values == {"plan": INJECTION, "reply": "{% if true %}{{ 6*7 }}{% endif %}"}


def test_a_template_without_slots_is_one_reply() -> None:
    llm = ScriptedLLM()
    llm.says("t:reply", "Hello!")

    done = complete(rendered("Greet {{ name }}."), Asker(llm.converse, None), purpose="t")

    assert (done.values, done.sent) == ({"reply": "Hello!"}, "reply")


def test_a_failed_slot_stops_the_completion_with_the_reason() -> None:
    llm = ScriptedLLM()

    done = complete(
        rendered("[[bool:ready]] [[reply]]"), Asker(llm.converse, llm.structured), purpose="t"
    )

    assert done.error is not None and done.error.startswith("t:ready: no valid bool value")
    assert llm.purposes() == ["t:ready"] and done.text is None


def test_a_note_prompt_never_says_its_words_go_to_the_participant() -> None:
    llm = ScriptedLLM()
    llm.says("note:summary:SUMMARY", "Ana sleeps badly before exams.")

    done = complete(
        rendered("Summarise. [[SUMMARY]]"),
        Asker(llm.converse, None),
        purpose="note:summary",
        reply=False,
    )

    asked = " ".join(m["content"] for m in llm.call("note:summary:SUMMARY")["messages"])
    assert done.values == {"SUMMARY": "Ana sleeps badly before exams."}
    assert "never sent to the participant" in asked
    assert "words to send" not in asked
