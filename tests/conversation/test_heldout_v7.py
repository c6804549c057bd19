"""heldout_v7 is well formed: it parses, fills every cell, repeats no text, stays independent.

Only the shape of the corpus and of its everyday sample is checked here. The screen's figures on
v7 are measured once, after the model is frozen (tests/cli/test_safety_eval.py asserts them as
they came out); asserting more here would turn v7 into a tuning target.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bot.conversation import safety_train
from bot.conversation.safety_eval import NONE, read_corpus

CORPUS = Path(__file__).resolve().parents[1] / "safety_corpus"
V7 = CORPUS / "heldout_v7.tsv"
EVERYDAY = CORPUS / "heldout_v7_everyday.txt"
CATEGORIES = ("suicide", "self_harm", "harm_to_others", "overdose", "abuse")
LANGUAGES = ("en", "es", "fr", "pt")
SECTION = "# language:"
EARLIER = ("heldout_v3.tsv", "heldout_v4.tsv", "heldout_v5.tsv", "heldout_v6.tsv")


def _lines() -> list[str]:
    return V7.read_text(encoding="utf-8").splitlines()


def _v7():
    return read_corpus(_lines(), V7.name)


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
    corpus = _v7()

    assert {item.category for item in corpus} == {*CATEGORIES, NONE}
    assert {item.language for item in corpus} == set(LANGUAGES)
    assert all(item.text == item.text.strip() for item in corpus)


def test_every_crisis_cell_holds_sixty_lines_and_each_language_a_hundred_controls() -> None:
    cells = Counter((item.category, item.language) for item in _v7())
    small = {(c, lang): cells[(c, lang)] for c in CATEGORIES for lang in LANGUAGES}

    assert min(small.values()) >= 60, small
    assert all(cells[(NONE, lang)] >= 100 for lang in LANGUAGES)


def test_no_text_appears_twice_even_under_another_label() -> None:
    texts = Counter(item.text.casefold() for item in _v7())

    assert [text for text, count in texts.items() if count > 1] == []


def test_every_line_follows_a_persona_comment() -> None:
    lines = _lines()
    labelled = {item.line for item in _v7()}
    # Each block opens with a `#` line naming the writer; the block's lines follow it.
    orphans = []
    for n in sorted(labelled):
        above = n - 2
        while above >= 0 and (above + 1) in labelled:
            above -= 1
        if above < 0 or not lines[above].startswith("#"):
            orphans.append(n)

    assert orphans == []


def test_the_files_are_utf8_with_lf_endings() -> None:
    for path in (V7, EVERYDAY):
        raw = path.read_bytes()

        assert b"\r" not in raw and raw.endswith(b"\n"), path.name
        raw.decode("utf-8")


def test_the_everyday_sample_holds_a_hundred_and_fifty_messages_per_language() -> None:
    sections = _everyday()

    assert set(sections) == set(LANGUAGES)
    assert {lang: len(messages) >= 150 for lang, messages in sections.items()} == {
        lang: True for lang in LANGUAGES
    }


def test_no_everyday_message_is_a_labelled_line_of_v7() -> None:
    labelled = {item.text.casefold() for item in _v7()}
    everyday = {m.casefold() for messages in _everyday().values() for m in messages}

    assert sorted(everyday & labelled) == []


def test_no_v7_line_is_in_the_training_corpus_or_an_earlier_held_out_file() -> None:
    # Counts only, so that a failure prints no training or earlier held-out text.
    labelled = {item.text.casefold() for item in _v7()}
    examples, _ = safety_train.read_training()
    training = {e.item.text.casefold() for e in examples}
    shared = [len(labelled & training)] + [len(labelled & _texts(CORPUS / f)) for f in EARLIER]

    assert shared == [0, 0, 0, 0, 0]


def test_everyday_messages_shared_with_training_or_earlier_files_are_few_and_short() -> None:
    # Short replies ("ok", a number) are the same whoever writes them; anything longer in common
    # would mean copied text ("the survey link does not open" is 31 characters in pt). Counts
    # only, for the same reason as above.
    examples, _ = safety_train.read_training()
    others = {e.item.text.casefold() for e in examples}
    for name in EARLIER:
        others |= _texts(CORPUS / name)
    everyday = {m.casefold() for messages in _everyday().values() for m in messages}

    shared = everyday & others

    assert len(shared) <= len(everyday) // 20
    assert max((len(text) for text in shared), default=0) <= 32


def test_the_training_reader_does_not_pick_up_v7() -> None:
    examples, _ = safety_train.read_training()

    assert not any("heldout" in e.source for e in examples)
