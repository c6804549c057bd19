"""Libraries: what the validator reports about library folders, documents and retrievals (at
the file and line), and BM25 ranking that gives the same list for the same query."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.interventions.language.format import Library as LibrarySpec
from bot.interventions.language.libraries import Document, Library
from tests.interventions.variants import FIXTURES, problems

LIBRARY = FIXTURES / "library"


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "library"
    shutil.copytree(LIBRARY, folder)
    return folder


def _edit(folder: Path, file: str, old: str, new: str) -> None:
    path = folder / file
    text = path.read_text()
    assert old in text, f"{old!r} is not in {file}"
    path.write_text(text.replace(old, new))


def test_the_library_fixture_has_no_problem() -> None:
    assert problems(LIBRARY) == []


def test_a_missing_library_folder_is_reported_at_its_declaration(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    shutil.rmtree(folder / "library" / "tips")

    assert problems(folder) == ["intervention.yaml:7: library 'tips': no folder library/tips"]


def test_an_empty_library_folder_is_reported(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    for path in (folder / "library" / "tips").glob("*.md"):
        path.unlink()

    assert problems(folder) == [
        "intervention.yaml:7: library 'tips': library/tips has no documents"
    ]


def test_a_document_without_an_id_and_a_duplicate_id_are_reported(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    _edit(folder, "library/tips/walk.md", "id: t-walk\n", "")
    _edit(folder, "library/scenarios/school.md", "id: s-school", "id: s-stroke")

    assert problems(folder) == [
        "library/scenarios/stroke.md:2: the id 's-stroke' is also used by "
        "library/scenarios/school.md",
        "library/tips/walk.md:2: a library document needs an `id`",
    ]


def test_an_unknown_library_a_bad_k_and_an_unknown_filter_key_are_reported(
    tmp_path: Path,
) -> None:
    folder = _copy(tmp_path)
    _edit(folder, "steps/intake.md", "retrieve: scenarios", "retrieve: scenarioz")
    _edit(folder, "steps/mentoring.md", "k: 1", "k: 0")
    _edit(folder, "steps/mentoring.md", "filter: {tags: sleep}", "filter: {tag: sleep}")

    found = problems(folder)

    assert "steps/intake.md:8: no library 'scenarioz'; did you mean 'scenarios'?" in found
    assert (
        "steps/mentoring.md:7: `retrieve.0.k`: Input should be greater than or equal to 1" in found
    )
    _edit(folder, "steps/mentoring.md", "k: 0", "k: 1")
    assert (
        "steps/mentoring.md:9: filter: no metadata in library 'tips': 'tag'; did you mean 'tags'?"
        in problems(folder)
    )


def test_a_query_template_is_checked_like_any_template(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    _edit(folder, "steps/intake.md", "{{ turns(n=1) }}", "{{ profile.nmae }}")
    _edit(folder, "steps/mentoring.md", "retrieved.tip.titles", "retrieved.tips.titles")

    found = problems(folder)

    assert found[0].startswith("steps/intake.md:9: template: no variable 'profile.nmae'")
    assert found[1] == (
        "steps/mentoring.md:3: template: no variable 'retrieved.tips'; "
        "did you mean 'retrieved.tip'?"
    )


def test_embeddings_need_a_declared_model_alias(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    _edit(
        folder,
        "intervention.yaml",
        "tips: {path: library/tips}",
        "tips: {path: library/tips, method: embeddings, model: embedder}",
    )

    assert problems(folder) == [
        "intervention.yaml:7: library 'tips': no model alias 'embedder'; known: none"
    ]


def _library(*documents: tuple[str, str]) -> Library:
    docs = [Document(i, i, body, {"tags": []}, f"{i}.md") for i, body in documents]
    return Library("l", LibrarySpec(path="l"), sorted(docs, key=lambda d: d.id))


def test_bm25_breaks_ties_by_id_and_gives_the_same_list_every_time() -> None:
    library = _library(("c", "sleep and rest"), ("a", "sleep and rest"), ("b", "rest only"))

    first = [(hit.document.id, hit.score) for hit in library.search("sleep", 3, {})]

    assert [doc for doc, _ in first] == ["a", "c"]
    assert first[0][1] == first[1][1] > 0
    assert [(h.document.id, h.score) for h in library.search("sleep", 3, {})] == first


@pytest.mark.parametrize("query", ["", "   ", "the and of", "zebra"])
def test_a_query_sharing_no_word_with_any_document_finds_nothing(query: str) -> None:
    library = _library(("a", "sleep and rest"), ("b", "work stress"))

    assert library.search(query, 2, {}) == []


def test_a_library_outside_the_intervention_folder_is_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    _edit(folder, "intervention.yaml", "path: library/tips", "path: ../../tips")

    found = problems(folder)

    assert found[0] == (
        "intervention.yaml:7: library 'tips': ../../tips is outside the intervention's folder"
    )
    # library/tips is no library now: its files are stray markdown files, reported as such
    assert all("unknown kind" in p for p in found[1:])
