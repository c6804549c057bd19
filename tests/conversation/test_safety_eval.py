"""Scoring a detector on a labelled corpus: parsing, recall, false alarms, the printed table."""

import pytest

from bot.conversation.safety_eval import ALL, NONE, CorpusError, evaluate, read_corpus, table

LINES = [
    "# a comment",
    "",
    "I want to die\tsuicide\ten",
    "I cut myself\tself_harm\ten",
    "quiero morir\tsuicide\tes",
    "this heat is killing me\tnone\ten",
    "hola\tnone\tes",
]


def _detect(text: str) -> str | None:
    return {"I want to die": "suicide", "I cut myself": "suicide", "hola": "abuse"}.get(text)


def test_comments_and_blank_lines_are_skipped_and_line_numbers_kept():
    corpus = read_corpus(LINES)
    assert [(item.category, item.language, item.line) for item in corpus][:2] == [
        ("suicide", "en", 3),
        ("self_harm", "en", 4),
    ]


@pytest.mark.parametrize("line", ["no tabs here", "a\tb", "a\t\ten", "a\tb\tc\td"])
def test_a_malformed_line_is_an_error_naming_its_number(line):
    with pytest.raises(CorpusError, match="corpus:2: expected text<TAB>category<TAB>language"):
        read_corpus(["ok\tnone\ten", line])


def test_an_empty_corpus_is_an_error():
    with pytest.raises(CorpusError, match="no labelled lines"):
        read_corpus(["# only a comment"])


def test_recall_counts_a_flag_under_any_category_and_reports_the_category_agreement():
    scores = evaluate(read_corpus(LINES), _detect)
    assert scores[("self_harm", "en")].rate() == 1.0
    assert scores[("self_harm", "en")].same_category == 0
    assert scores[("suicide", "es")].rate() == 0.0
    assert scores[(ALL, ALL)].flagged == 2 and scores[(ALL, ALL)].total == 3


def test_a_flagged_control_is_a_false_alarm_of_its_language_and_of_the_category_it_got():
    scores = evaluate(read_corpus(LINES), _detect)
    assert scores[(NONE, "es")].rate() == 1.0 and scores[(NONE, "en")].rate() == 0.0
    assert scores[("abuse", "es")].false_alarms == 1


def test_the_table_prints_a_row_per_category_and_language_and_a_false_alarm_row_per_language():
    rows = table(evaluate(read_corpus(LINES), _detect))
    assert any(row.split()[:4] == ["suicide", "es", "1", "0.0%"] for row in rows)
    assert any(row.split() == ["none", "es", "1", "100.0%"] for row in rows)
