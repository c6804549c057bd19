"""Running a retrieval (pure but for the `embed` callable): render the query template, rank
the library, and record `retrieval.done` (or `retrieval.failed`); and `retrieved`, what
templates see, folded from the participant's retrieval events (so a replay rebuilds it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.conversation.memory import Memory
from bot.interventions.interpreter import judging
from bot.interventions.interpreter.failures import TemplateFailure
from bot.interventions.language.intervention import Intervention, Retrieval
from bot.interventions.language.libraries import Document, Embed, RankingError
from bot.store.event_types.retrieval import (
    RetrievalDone,
    RetrievalFailed,
    RetrievalWhen,
    RetrievedDocument,
)
from bot.store.events import EventData


def retrieve(
    intervention: Intervention,
    retrieval: Retrieval,
    context: Mapping[str, Any],
    embed: Embed | None,
    step: str | None,
    when: RetrievalWhen,
) -> list[EventData]:
    """`retrieval.done` with the documents found (none: no match), or `retrieval.failed`
    when the ranking could not be made; a query template that fails stops the turn."""
    spec = retrieval.spec
    query = judging.render(intervention, retrieval.template, context).text.strip()
    library = intervention.libraries[spec.library]
    try:
        hits = library.search(query, spec.k, spec.filter, embed)
    except RankingError as exc:
        reason = str(exc)
        return [
            RetrievalFailed(
                name=spec.name,
                library=spec.library,
                query=query,
                reason=reason,
                step=step,
                when=when,
            )
        ]
    found = [
        RetrievedDocument(
            id=hit.document.id,
            title=hit.document.title,
            score=hit.score,
            rank=hit.rank,
            digest=hit.document.digest[:16],
        )
        for hit in hits
    ]
    return [
        RetrievalDone(
            name=spec.name,
            library=spec.library,
            query=query,
            method=library.method,
            model=library.model,
            k=spec.k,
            filter=dict(spec.filter),
            documents=found,
            step=step,
            when=when,
        )
    ]


def retrieved(intervention: Intervention, memory: Memory) -> dict[str, Any]:
    """`retrieved.<name>` for every name the intervention retrieves into: `documents` (each
    with id, title, body, score, rank, meta) and `titles`, empty until it first runs. What the
    last `retrieval.done` of each name found is in the conversation memory
    (bot.conversation.memory), so a turn never folds the stream for it. A document recorded
    but no longer in its library stops the turn (never a quiet gap)."""
    view = {name: shelf([]) for name in intervention.retrieved_names()}
    if not view:
        return view  # no retrieval: nothing to read
    for name, done in memory.retrievals().items():
        library = done.get("library")
        if name not in view or library not in intervention.libraries:
            continue
        documents = intervention.libraries[library].by_id()
        items = []
        for found in done.get("documents") or ():
            document = documents.get(found["id"])
            if document is None:
                why = f"document {found['id']!r} is no longer in library {library!r}"
                raise TemplateFailure(f"retrieved.{name}", LookupError(why))
            items.append(item(document, float(found["score"]), int(found["rank"])))
        view[name] = shelf(items)
    return view


def item(document: Document, score: float, rank: int) -> dict[str, Any]:
    return {
        "id": document.id,
        "title": document.title,
        "body": document.body,
        "score": score,
        "rank": rank,
        "meta": dict(document.meta),
    }


def shelf(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"documents": items, "titles": [doc["title"] for doc in items]}


def sample_retrieved(intervention: Intervention) -> dict[str, Any]:
    """`retrieved` for the validator: the first `k` documents of each library, score 1."""
    view: dict[str, Any] = {}
    for r in intervention.retrievals():
        library = intervention.libraries.get(r.spec.library)
        documents = library.documents[: r.spec.k] if library else []
        items = [item(doc, 1.0, n) for n, doc in enumerate(documents, start=1)]
        if r.spec.name not in view or len(items) > len(view[r.spec.name]["documents"]):
            view[r.spec.name] = shelf(items)
    return view
