"""Embeddings for libraries: the real openai SDK against the fake /embeddings endpoint, and a
file cache so each text is embedded once per model, across processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.conversation.embeddings import EmbeddingCache, EmbeddingError, checked, key
from tests.fakes.openai_api import FakeOpenAI, fake_embedding
from tests.llm_clients import chat_client


@pytest.fixture
def fake() -> FakeOpenAI:
    with FakeOpenAI(api_key="test-key") as server:
        yield server


def test_the_client_returns_one_vector_per_text_in_order(fake: FakeOpenAI) -> None:
    client = chat_client(fake)

    vectors = client.embed("embedder", ["sleep well", "work stress"])

    assert vectors == [
        fake_embedding("sleep well", "embedder"),
        fake_embedding("work stress", "embedder"),
    ]
    assert fake.embedding_requests == [
        {"model": "embedder", "input": ["sleep well", "work stress"], "encoding_format": "float"}
    ]


def test_a_text_is_embedded_once_per_model_even_by_another_process(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    client = chat_client(fake)
    cache = EmbeddingCache(client.embed, tmp_path)

    first = cache("embedder", ["a", "sleep well"])
    again = EmbeddingCache(client.embed, tmp_path)("embedder", ["sleep well", "work stress"])
    other_model = cache("other", ["sleep well"])

    assert again[0] == first[1]
    assert [r["input"] for r in fake.embedding_requests] == [
        ["a", "sleep well"],
        ["work stress"],
        ["sleep well"],
    ]
    assert other_model != [first[1]]


def test_a_failing_endpoint_is_an_embedding_error_and_nothing_is_cached(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    cache = EmbeddingCache(chat_client(fake).embed, tmp_path)
    fake.embedding_failures = 1

    with pytest.raises(EmbeddingError, match="HTTP 500"):
        cache("embedder", ["sleep"])

    assert cache("embedder", ["sleep"]) == [fake_embedding("sleep", "embedder")]
    assert len(fake.embedding_requests) == 2


@pytest.mark.parametrize(
    "answer",
    [[[1.0]], [[1.0, 2.0], [1.0]], [[1.0, float("nan")], [1.0, 2.0]], [["x", 1.0], [1.0, 2.0]], {}],
)
def test_vectors_that_are_not_what_was_asked_for_are_refused(answer: object) -> None:
    with pytest.raises(EmbeddingError):
        checked(answer, 2)


def test_a_query_is_embedded_afresh_and_never_written_to_the_cache(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    cache = EmbeddingCache(chat_client(fake).embed, tmp_path)
    cache("embedder", ["a library document"])

    first = cache("embedder", ["my HIV status is private"], keep=False)
    again = cache("embedder", ["my HIV status is private"], keep=False)

    assert first == again == [fake_embedding("my HIV status is private", "embedder")]
    assert len(fake.embedding_requests) == 3  # the query asked for each time
    files = {p.name for p in tmp_path.rglob("*.json")}
    assert files == {f"{key('embedder', 'a library document')}.json"}
    assert not cache.path("embedder", "my HIV status is private").exists()


def test_the_earlier_layout_which_held_queries_is_deleted_when_the_cache_opens(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    digest = key("embedder", "my HIV status is private")
    earlier = tmp_path / digest[:2] / f"{digest}.json"
    earlier.parent.mkdir(parents=True)
    earlier.write_text("[1.0, 2.0]")

    EmbeddingCache(chat_client(fake).embed, tmp_path)

    assert not earlier.exists() and not earlier.parent.exists()
