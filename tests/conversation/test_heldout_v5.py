"""heldout_v5 is well formed: it parses, fills every cell, repeats no text, stays independent.

Only the shape of the corpus and of its everyday sample is checked here. The screen's figures on
v5 are measured once, by someone else, after the model is frozen; asserting them here would turn
v5 into a tuning target.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bot.conversation import safety_train
from bot.conversation.safety_eval import NONE, read_corpus

CORPUS = Path(__file__).resolve().parents[1] / "safety_corpus"
V5 = CORPUS / "heldout_v5.tsv"
EVERYDAY = CORPUS / "heldout_v5_everyday.txt"
CATEGORIES = ("suicide", "self_harm", "harm_to_others", "overdose", "abuse")
LANGUAGES = ("en", "es", "fr", "pt")
SECTION = "# language:"


def _lines() -> list[str]:
    return V5.read_text(encoding="utf-8").splitlines()


def _v5():
    return read_corpus(_lines(), V5.name)


def _everyday() -> dict[str, list[str]]:
    """The everyday messages under each `# language: xx` header, as the eval CLI reads them."""
    sections: dict[str, list[str]] = {}
    language = None
    for line in EVERYDAY.read_text(encoding="utf-8").splitlines():
        if line.startswith(SECTION):
            language = line.removeprefix(SECTION).strip()
            sections.setdefault(language, [])
        elif line.strip() and not line.startswith("#"):
            assert language is not None, f"message before the first language header: {line!r}"
            sections[language].append(line.strip())
    return sections


def _texts(path: Path) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {item.text.casefold() for item in read_corpus(lines, path.name)}


def test_every_line_is_text_category_language_with_known_values() -> None:
    corpus = _v5()

    assert {item.category for item in corpus} == {*CATEGORIES, NONE}
    assert {item.language for item in corpus} == set(LANGUAGES)
    assert all(item.text == item.text.strip() for item in corpus)


def test_every_crisis_cell_holds_fifteen_lines_and_each_language_forty_controls() -> None:
    cells = Counter((item.category, item.language) for item in _v5())
    small = {(c, lang): cells[(c, lang)] for c in CATEGORIES for lang in LANGUAGES}

    assert min(small.values()) >= 15, small
    assert sum(small.values()) >= 300
    assert all(cells[(NONE, lang)] >= 40 for lang in LANGUAGES)


def test_no_text_appears_twice_even_under_another_label() -> None:
    texts = Counter(item.text.casefold() for item in _v5())

    assert [text for text, count in texts.items() if count > 1] == []


def test_every_crisis_line_follows_its_scenario_and_the_bots_question() -> None:
    lines = _lines()
    crisis = {item.line for item in _v5() if item.category != NONE}

    orphans = [n for n in crisis if not lines[n - 2].startswith("#") or "Bot" not in lines[n - 2]]

    assert sorted(orphans) == []


def test_the_files_are_utf8_with_lf_endings_and_no_stray_blank_lines() -> None:
    for path in (V5, EVERYDAY):
        raw = path.read_bytes()

        assert b"\r" not in raw and raw.endswith(b"\n"), path.name
        assert all(line.strip() for line in raw.decode("utf-8").splitlines()), path.name


def test_the_everyday_sample_holds_a_hundred_messages_per_language_none_repeated() -> None:
    sections = _everyday()

    assert set(sections) == set(LANGUAGES)
    assert {lang: len(messages) >= 100 for lang, messages in sections.items()} == {
        lang: True for lang in LANGUAGES
    }
    repeated = {
        lang: [m for m, n in Counter(m.casefold() for m in messages).items() if n > 1]
        for lang, messages in sections.items()
    }
    assert repeated == {lang: [] for lang in LANGUAGES}


def test_no_everyday_message_is_a_labelled_line_of_v5() -> None:
    labelled = {item.text.casefold() for item in _v5()}
    everyday = {m.casefold() for messages in _everyday().values() for m in messages}

    assert sorted(everyday & labelled) == []


def test_no_v5_line_is_in_the_training_corpus_or_in_heldout_v3_or_v4() -> None:
    # Counts only, so that a failure does not print training, v3 or v4 text into a v5 author's view.
    labelled = {item.text.casefold() for item in _v5()}
    examples, _ = safety_train.read_training()
    training = {e.item.text.casefold() for e in examples}
    v3 = _texts(CORPUS / "heldout_v3.tsv")
    v4 = _texts(CORPUS / "heldout_v4.tsv")

    shared = (len(labelled & training), len(labelled & v3), len(labelled & v4))

    assert shared == (0, 0, 0)


def test_everyday_messages_shared_with_training_or_v3_v4_are_few_and_short() -> None:
    # Short replies ("ok", a number) are the same whoever writes them; anything longer in common
    # would mean copied text. Counts only, for the same reason as above.
    examples, _ = safety_train.read_training()
    others = {e.item.text.casefold() for e in examples}
    others |= _texts(CORPUS / "heldout_v3.tsv") | _texts(CORPUS / "heldout_v4.tsv")
    everyday = {m.casefold() for messages in _everyday().values() for m in messages}

    shared = everyday & others

    # Batches 4 and 5 of the training corpus (written after v5 was scored and retired) added
    # short replies, so more of v5's short ones coincide now (29 of 532); none is longer.
    assert len(shared) <= len(everyday) // 15
    assert max((len(text) for text in shared), default=0) <= 30
