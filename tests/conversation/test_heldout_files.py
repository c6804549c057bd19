"""The held-out crisis corpora are well formed: each parses, fills every cell, repeats no text and
stays independent of the training corpus and of the files written before it.

Only the shape of a corpus and of its everyday sample is checked here. The screen's figures are
measured once, after the model is frozen (tests/cli/test_safety_eval.py asserts the current
file's as they came out); asserting more here would turn a held-out file into a tuning target.
Independence is checked by counts only, so that a failure prints no training or held-out text.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.conversation import safety_train
from bot.conversation.safety_eval import NONE, Labelled, read_corpus

CORPUS = Path(__file__).resolve().parents[1] / "safety_corpus"
CATEGORIES = ("suicide", "self_harm", "harm_to_others", "overdose", "abuse")
LANGUAGES = ("en", "es", "fr", "pt")
SECTION = "# language:"


@dataclass(frozen=True)
class Heldout:
    """One held-out file, its everyday sample, and what its HELDOUT_Vn.md promises."""

    version: int
    cell: int  # crisis lines at least, per category x language
    controls: int  # `none` lines at least, per language
    everyday: int  # everyday messages at least, per language
    comment: str  # every crisis line's block opens with a `#` line containing this
    shared_per: int  # at most 1 in `shared_per` everyday messages also in earlier text ...
    shared_chars: int  # ... each at most this long (short replies anyone would send)

    @property
    def tsv(self) -> Path:
        return CORPUS / f"heldout_v{self.version}.tsv"

    @property
    def everyday_file(self) -> Path:
        return CORPUS / f"heldout_v{self.version}_everyday.txt"

    @property
    def earlier(self) -> list[Path]:
        return [CORPUS / f"heldout_v{n}.tsv" for n in range(3, self.version)]

    def __str__(self) -> str:
        return f"v{self.version}"


# v5: scenario-first (the bot's question above each line); 29 of its 532 everyday replies
# coincide with short training replies since batches 4-5. v6 to v11: persona-first, 60 a cell
# (v8 to v11: therapy and coaching dialogue among them);
# "the survey link does not open" is 31 characters in pt.
FILES = [
    Heldout(5, cell=15, controls=40, everyday=100, comment="Bot", shared_per=15, shared_chars=30),
    Heldout(6, cell=60, controls=100, everyday=150, comment="", shared_per=20, shared_chars=32),
    Heldout(7, cell=60, controls=100, everyday=150, comment="", shared_per=20, shared_chars=32),
    Heldout(8, cell=60, controls=100, everyday=150, comment="", shared_per=20, shared_chars=32),
    Heldout(9, cell=60, controls=100, everyday=150, comment="", shared_per=20, shared_chars=32),
    Heldout(10, cell=60, controls=100, everyday=150, comment="", shared_per=20, shared_chars=32),
    Heldout(11, cell=60, controls=100, everyday=150, comment="", shared_per=20, shared_chars=32),
]


@pytest.fixture(params=FILES, ids=str, scope="module")
def heldout(request: pytest.FixtureRequest) -> Heldout:
    return request.param


def _lines(h: Heldout) -> list[str]:
    return h.tsv.read_text(encoding="utf-8").splitlines()


def _labelled(h: Heldout) -> list[Labelled]:
    return read_corpus(_lines(h), h.tsv.name)


def _everyday(h: Heldout) -> dict[str, list[str]]:
    """The everyday messages under each `# language: xx` header, as the eval CLI reads them."""
    sections: dict[str, list[str]] = {}
    language = None
    for line in h.everyday_file.read_text(encoding="utf-8").splitlines():
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


def _training() -> set[str]:
    examples, _ = safety_train.read_training()
    return {e.item.text.casefold() for e in examples}


def test_every_line_is_text_category_language_with_known_values(heldout: Heldout) -> None:
    corpus = _labelled(heldout)

    assert {item.category for item in corpus} == {*CATEGORIES, NONE}
    assert {item.language for item in corpus} == set(LANGUAGES)
    assert all(item.text == item.text.strip() for item in corpus)


def test_every_crisis_cell_and_every_languages_controls_hold_their_promised_size(
    heldout: Heldout,
) -> None:
    cells = Counter((item.category, item.language) for item in _labelled(heldout))
    small = {(c, lang): cells[(c, lang)] for c in CATEGORIES for lang in LANGUAGES}

    assert min(small.values()) >= heldout.cell, small
    assert all(cells[(NONE, lang)] >= heldout.controls for lang in LANGUAGES)


def test_no_text_appears_twice_even_under_another_label(heldout: Heldout) -> None:
    texts = Counter(item.text.casefold() for item in _labelled(heldout))

    assert [text for text, count in texts.items() if count > 1] == []


def test_every_crisis_line_follows_the_comment_that_opens_its_block(heldout: Heldout) -> None:
    lines = _lines(heldout)
    labelled = {item.line for item in _labelled(heldout)}
    crisis = {item.line for item in _labelled(heldout) if item.category != NONE}
    orphans = []
    for n in sorted(crisis):  # lines are numbered from 1; the list from 0
        above = n - 2
        while above >= 0 and (above + 1) in labelled:
            above -= 1
        if above < 0 or not lines[above].startswith("#") or heldout.comment not in lines[above]:
            orphans.append(n)

    assert orphans == []


def test_the_files_are_utf8_with_lf_endings_and_no_stray_blank_lines(heldout: Heldout) -> None:
    for path in (heldout.tsv, heldout.everyday_file):
        raw = path.read_bytes()

        assert b"\r" not in raw and raw.endswith(b"\n"), path.name
        assert all(line.strip() for line in raw.decode("utf-8").splitlines()), path.name


def test_the_everyday_sample_holds_its_promised_size_per_language_none_repeated(
    heldout: Heldout,
) -> None:
    sections = _everyday(heldout)

    assert set(sections) == set(LANGUAGES)
    assert {lang: len(messages) >= heldout.everyday for lang, messages in sections.items()} == {
        lang: True for lang in LANGUAGES
    }
    repeated = {
        lang: [m for m, n in Counter(m.casefold() for m in messages).items() if n > 1]
        for lang, messages in sections.items()
    }
    assert repeated == {lang: [] for lang in LANGUAGES}


def test_no_everyday_message_is_a_labelled_line_of_the_same_file(heldout: Heldout) -> None:
    labelled = {item.text.casefold() for item in _labelled(heldout)}
    everyday = {m.casefold() for messages in _everyday(heldout).values() for m in messages}

    assert sorted(everyday & labelled) == []


def test_no_line_is_in_the_training_corpus_or_an_earlier_held_out_file(heldout: Heldout) -> None:
    labelled = {item.text.casefold() for item in _labelled(heldout)}
    shared = [len(labelled & _training())] + [len(labelled & _texts(p)) for p in heldout.earlier]

    assert shared == [0] * (1 + len(heldout.earlier))


def test_everyday_messages_shared_with_earlier_text_are_few_and_short(heldout: Heldout) -> None:
    others = _training()
    for path in heldout.earlier:
        others |= _texts(path)
    everyday = {m.casefold() for messages in _everyday(heldout).values() for m in messages}

    shared = everyday & others

    assert len(shared) <= len(everyday) // heldout.shared_per
    assert max((len(text) for text in shared), default=0) <= heldout.shared_chars


def test_the_training_reader_picks_up_no_held_out_file() -> None:
    examples, _ = safety_train.read_training()

    assert not any("heldout" in e.source for e in examples)
