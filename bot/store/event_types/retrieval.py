"""Retrieval events: which documents of an intervention's library were found for a query.

A replay or an export shows exactly what the model saw: the query as rendered, the method
(and model), and each document's id, title, score, rank and a hash of its text.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from bot.store.events import EventData, event, fields

RetrievalWhen = Literal["turn", "action"]


class RetrievedDocument(BaseModel):
    """One document found, best first (`rank` 1); `digest` is the sha256 of its text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    title: str
    score: float
    rank: int
    digest: str = ""


@event("retrieval.done")
class RetrievalDone(EventData):
    """The top `k` documents of `library` for `query`, as `retrieved.<name>` in templates
    until the next `retrieval.done` of that name. No document (`documents` empty) is a
    retrieval with no match: recorded, and the step still answers. `when` says whether a
    step's `retrieve:` ran it (every turn) or a `retrieve:` action (once)."""

    personal = fields("filter", "query")
    plain = fields("documents", "library", "model", "name", "step")

    name: str
    library: str
    query: str
    method: Literal["bm25", "embeddings"]
    model: str | None = None
    k: int
    filter: dict[str, Any] = {}
    documents: list[RetrievedDocument] = []
    step: str | None = None
    when: RetrievalWhen = "turn"


@event("retrieval.failed")
class RetrievalFailed(EventData):
    """A retrieval that could not be made (the embeddings endpoint failed): templates keep
    the previous `retrieved.<name>`, as a failed judgement keeps its previous value."""

    personal = fields("query", "reason")
    plain = fields("library", "name", "step")

    name: str
    library: str
    query: str
    reason: str
    step: str | None = None
    when: RetrievalWhen = "turn"
