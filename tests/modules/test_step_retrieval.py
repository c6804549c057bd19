"""Retrieval in the step module: a transition's `retrieve:` action runs once and what it found
stays visible in later steps; a step's `retrieve:` runs every turn, filtered; each retrieval is
`retrieval.done` with what the model saw, and `retrieved` is a fold over those events."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.conversation.embeddings import EmbeddingCache, key
from bot.conversation.memory import Memory, fold
from bot.interventions.interpreter.retrieval import retrieved
from bot.interventions.language.loader import load_intervention
from bot.store.event_types.retrieval import RetrievalDone, RetrievalFailed, RetrievedDocument
from bot.store.events import Event, EventData, decode, encode, new_id
from tests.fakes.openai_api import FakeOpenAI
from tests.llm_clients import chat_client
from tests.modules.step_harness import FIXTURES, NOW, Run


def test_a_transition_retrieves_the_two_best_scenarios_once_and_the_next_step_names_them() -> None:
    run = Run("library")
    run.start()

    reply = run.say("My patient had a stroke and wants to cook at home again")

    assert run.step == "mentoring"
    done = [d for d in run.data(RetrievalDone) if d.name == "scenarios"]
    assert len(done) == 1
    assert done[0].when == "action" and done[0].method == "bm25" and done[0].k == 2
    assert done[0].query == "PARTICIPANT: My patient had a stroke and wants to cook at home again"
    assert [d.id for d in done[0].documents] == ["s-stroke", "s-hip"]
    assert [d.rank for d in done[0].documents] == [1, 2]
    assert done[0].documents[0].score > done[0].documents[1].score > 0
    assert reply is not None
    assert reply.startswith(
        "This resembles: Stroke rehabilitation at home and Hip replacement and dressing."
    )


def test_what_a_transition_retrieved_is_still_seen_on_later_turns() -> None:
    run = Run("library")
    run.start()
    run.say("a stroke at home")

    reply = run.say("handwriting at school, and sleep")

    assert len([d for d in run.data(RetrievalDone) if d.name == "scenarios"]) == 1
    assert reply is not None and "Stroke rehabilitation at home" in reply


def test_a_step_retrieves_every_turn_only_among_documents_its_filter_allows() -> None:
    run = Run("library")
    run.start()
    run.say("stroke")

    first = run.say("my phone keeps me up after my walk, long past bed")
    second = run.say("what time should I wake up?")

    tips = [d for d in run.data(RetrievalDone) if d.name == "tip"]
    assert [d.when for d in tips] == ["turn", "turn", "turn"]
    assert all(d.filter == {"tags": "sleep"} for d in tips)
    assert "t-walk" not in [doc.id for d in tips for doc in d.documents]
    assert first is not None and first.endswith("Tip: A wind-down routine.")
    assert second is not None and second.endswith("Tip: The same wake-up time.")


def test_a_retrieval_with_no_match_is_recorded_and_the_step_still_answers() -> None:
    run = Run("library")
    run.start()

    reply = run.say("zebra quantum")

    done = [d for d in run.data(RetrievalDone) if d.name == "scenarios"][0]
    assert done.documents == []
    assert done.query == "PARTICIPANT: zebra quantum"
    assert reply == "This resembles: nothing we have. Tip: none."


def test_retrieved_is_rebuilt_from_the_events_alone() -> None:
    """What a turn shows of `retrieved` is folded into the conversation memory, so a replay
    of the events alone gives it back."""
    run = Run("library")
    run.start()
    run.say("a stroke at home")
    run.say("the phone before bed")
    intervention = load_intervention(FIXTURES / "library")

    view = retrieved(intervention, Memory(fold(run.events)))

    assert view["scenarios"]["titles"] == [
        "Stroke rehabilitation at home",
        "Hip replacement and dressing",
    ]
    first = view["scenarios"]["documents"][0]
    assert first["id"] == "s-stroke" and first["meta"]["setting"] == "home"
    assert first["body"].startswith("An older man after a stroke")
    assert view["tip"]["titles"] == ["A wind-down routine"]
    assert retrieved(intervention, Memory(fold([])))["scenarios"] == {"documents": [], "titles": []}


@pytest.mark.parametrize(
    "data",
    [
        RetrievalDone(
            name="scenarios",
            library="scenarios",
            query="stroke at home",
            method="bm25",
            k=2,
            filter={"tags": "home"},
            documents=[
                RetrievedDocument(id="s-stroke", title="Stroke", score=1.25, rank=1, digest="ab")
            ],
            step="intake",
            when="action",
        ),
        RetrievalFailed(name="q", library="q", query="x", reason="endpoint down", step="a"),
    ],
    ids=lambda d: d.event_type,
)
def test_a_retrieval_event_round_trips_through_its_stored_form(data: EventData) -> None:
    assert decode(data.event_type, data.schema_version, encode(data)) == data


@pytest.fixture
def embedded(tmp_path: Path) -> Iterator[tuple[Run, FakeOpenAI]]:
    """The library fixture with its scenarios ranked by embeddings from the fake endpoint."""
    folder = tmp_path / "library"
    shutil.copytree(FIXTURES / "library", folder)
    config = folder / "intervention.yaml"
    config.write_text(
        config.read_text().replace(
            "scenarios: {path: library/scenarios, method: bm25}",
            "scenarios: {path: library/scenarios, method: embeddings, model: embedder}",
        )
        + "models: {embedder: fake-embedding-model}\n"
    )
    with FakeOpenAI(api_key="test-key") as fake:
        run = Run(folder)
        run.embed = EmbeddingCache(chat_client(fake).embed, tmp_path / "cache")
        yield run, fake


def test_a_library_ranked_by_embeddings_records_the_method_and_the_model(
    embedded: tuple[Run, FakeOpenAI],
) -> None:
    run, fake = embedded
    run.start()

    reply = run.say("a stroke at home")

    done = [d for d in run.data(RetrievalDone) if d.name == "scenarios"][0]
    assert (done.method, done.model) == ("embeddings", "fake-embedding-model")
    assert [d.id for d in done.documents][0] == "s-stroke"
    assert len(done.documents) == 2 and done.documents[0].score >= done.documents[1].score
    assert reply is not None and reply.startswith("This resembles: Stroke rehabilitation at home")
    assert {r["model"] for r in fake.embedding_requests} == {"fake-embedding-model"}


def test_a_failing_embeddings_endpoint_is_recorded_and_the_step_still_answers(
    embedded: tuple[Run, FakeOpenAI],
) -> None:
    run, fake = embedded
    run.start()
    fake.embedding_failures = 1

    reply = run.say("a stroke at home")

    [failed] = run.data(RetrievalFailed)
    assert failed.name == "scenarios" and "HTTP 500" in failed.reason
    assert [d for d in run.data(RetrievalDone) if d.name == "scenarios"] == []
    assert reply == "This resembles: nothing we have. Tip: none."


_LIBRARY = load_intervention(FIXTURES / "library")
_IDS = {
    "scenarios": ["s-burnout", "s-hip", "s-school", "s-stroke"],
    "tip": ["t-same-time", "t-walk"],
}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(sorted(_IDS)).flatmap(
            lambda name: st.tuples(
                st.just(name), st.lists(st.sampled_from(_IDS[name]), unique=True, max_size=2)
            )
        ),
        max_size=8,
    )
)
def test_retrieved_is_the_last_retrieval_of_each_name_whatever_came_before(
    retrievals: list[tuple[str, list[str]]],
) -> None:
    library = {"scenarios": "scenarios", "tip": "tips"}
    documents = {d.id: d for lib in _LIBRARY.libraries.values() for d in lib.documents}
    history = [
        Event(
            seq=n + 1,
            event_id=new_id(),
            stream_id="participant:p1",
            stream_version=n + 1,
            data=RetrievalDone(
                name=name,
                library=library[name],
                query="q",
                method="bm25",
                k=2,
                documents=[
                    RetrievedDocument(id=i, title=documents[i].title, score=1.0, rank=r + 1)
                    for r, i in enumerate(ids)
                ],
            ),
            meta={},
            idempotency_key=None,
            occurred_at=NOW,
            recorded_at=NOW,
        )
        for n, (name, ids) in enumerate(retrievals)
    ]

    view = retrieved(_LIBRARY, Memory(fold(history)))

    for name in _IDS:
        last = [ids for found, ids in retrievals if found == name]
        expected = last[-1] if last else []
        assert [d["id"] for d in view[name]["documents"]] == expected
        assert view[name]["titles"] == [documents[i].title for i in expected]


def test_what_a_participant_wrote_leaves_no_file_in_the_embeddings_cache(
    embedded: tuple[Run, FakeOpenAI], tmp_path: Path
) -> None:
    run, fake = embedded
    run.start()

    run.say("a stroke at home")

    texts = [t for r in fake.embedding_requests for t in r["input"]]
    queries = [t for t in texts if "a stroke at home" in t]
    documents = [t for t in texts if t not in queries]
    assert queries and len(documents) == 4  # the library's four scenarios
    cached = {p.stem for p in (tmp_path / "cache").rglob("*.json")}
    assert cached == {key("fake-embedding-model", t) for t in documents}
