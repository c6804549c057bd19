"""Tests for SMS encoding, segment counting and body splitting."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.core.segments import count_segments, encoding, split_body

GRINNING = "\U0001f600"  # outside the BMP: two UTF-16 units


def test_plain_ascii_is_gsm7():
    assert encoding("See you at 9:30 - bring water!") == "GSM-7"


def test_gsm_accents_and_greek_stay_gsm7():
    assert encoding("Café à ¿Qué? ΔΩ £5 ¥ §") == "GSM-7"


def test_extension_characters_stay_gsm7():
    assert encoding("^{}\\[~]|€\f") == "GSM-7"


def test_one_emoji_switches_the_whole_message_to_ucs2():
    assert encoding("Well done" + GRINNING) == "UCS-2"


def test_a_character_outside_gsm_such_as_a_curly_quote_switches_to_ucs2():
    assert encoding("it’s") == "UCS-2"


def test_an_empty_body_is_zero_segments():
    assert count_segments("") == 0


def test_160_gsm_characters_fit_one_segment():
    assert count_segments("a" * 160) == 1


def test_161_gsm_characters_need_two_segments_of_153():
    assert count_segments("a" * 161) == 2


def test_306_gsm_characters_fill_exactly_two_segments():
    assert count_segments("a" * 306) == 2
    assert count_segments("a" * 307) == 3


def test_extension_characters_cost_two_septets():
    assert count_segments("€" * 80) == 1
    assert count_segments("€" + "a" * 159) == 2


def test_an_escape_pair_is_not_split_across_segments():
    # 152 septets then a two-septet "€": it cannot straddle, so it opens segment two.
    assert count_segments("a" * 152 + "€" + "a" * 152) == 3


def test_70_ucs2_units_fit_one_segment():
    assert count_segments("ж" * 70) == 1
    assert count_segments("ж" * 71) == 2


def test_ucs2_concatenated_parts_hold_67_units():
    assert count_segments("ж" * 134) == 2
    assert count_segments("ж" * 135) == 3


def test_an_emoji_counts_as_two_utf16_units():
    assert count_segments(GRINNING * 35) == 1
    assert count_segments(GRINNING * 36) == 2


def test_a_surrogate_pair_is_not_split_across_segments():
    # 66 units then an emoji: it cannot straddle, so it opens segment two.
    assert count_segments("ж" * 66 + GRINNING + "ж" * 66) == 3


def test_an_empty_body_splits_into_no_parts():
    assert split_body("") == []


def test_a_body_within_the_limit_is_returned_unchanged():
    assert split_body("  Hi there.  ") == ["  Hi there.  "]


def test_a_long_body_is_split_at_the_last_sentence_end():
    text = "One two three. Four five six. Seven eight nine."
    assert split_body(text, limit=33) == ["One two three. Four five six.", "Seven eight nine."]


def test_an_ellipsis_ends_a_sentence():
    assert split_body("Hmm… I wonder about that", limit=12) == ["Hmm…", "I wonder", "about that"]


def test_a_late_paragraph_break_is_preferred_to_a_later_sentence_end():
    text = "First para here.\n\nSecond. Third bit"
    assert split_body(text, limit=30) == ["First para here.", "Second. Third bit"]


def test_an_early_paragraph_break_gives_way_to_a_later_sentence_end():
    text = "Hi.\n\nThis part is long. And so is this"
    assert split_body(text, limit=30) == ["Hi.\n\nThis part is long.", "And so is this"]


def test_a_line_break_counts_as_a_sentence_boundary():
    assert split_body("a list of\nitems to buy", limit=18) == ["a list of", "items to buy"]


def test_without_a_sentence_end_it_splits_at_the_last_space():
    assert split_body("alpha beta gamma delta", limit=12) == ["alpha beta", "gamma delta"]


def test_a_word_longer_than_the_limit_is_cut_hard():
    assert split_body("x" * 25, limit=10) == ["x" * 10, "x" * 10, "x" * 5]


def test_a_hard_cut_never_splits_an_emoji():
    assert split_body("a" + GRINNING * 3, limit=4) == ["a" + GRINNING, GRINNING * 2]


def test_the_default_limit_is_twilios_1600_characters():
    parts = split_body("word " * 400)
    assert [len(part) for part in parts] == [1599, 399]


def test_a_limit_too_small_for_an_emoji_is_refused():
    with pytest.raises(ValueError, match="at least 2"):
        split_body("abc", limit=1)


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


_BODIES = st.lists(
    st.sampled_from([*"abcdé .!?…\n\t", GRINNING, "ж", "word", "  ", "\n\n", "x" * 15]),
    max_size=120,
).map("".join)


@given(text=_BODIES, limit=st.integers(min_value=2, max_value=60))
def test_split_parts_fit_the_limit_and_are_never_blank(text, limit):
    parts = split_body(text, limit=limit)
    assert all(_utf16(part) <= limit for part in parts)
    if _utf16(text) > limit:
        assert all(part.strip() for part in parts)


@given(text=_BODIES, limit=st.integers(min_value=2, max_value=60))
def test_split_loses_and_reorders_nothing_but_whitespace(text, limit):
    parts = split_body(text, limit=limit)
    assert "".join(" ".join(parts).split()) == "".join(text.split())


@given(text=_BODIES, limit=st.integers(min_value=12, max_value=60))
def test_split_keeps_words_whole_when_every_word_fits(text, limit):
    if all(_utf16(word) <= limit for word in text.split()):
        assert " ".join(split_body(text, limit=limit)).split() == text.split()


@given(text=st.text(max_size=400), limit=st.integers(min_value=2, max_value=80))
def test_split_handles_any_unicode_text(text, limit):
    parts = split_body(text, limit=limit)
    assert "".join("".join(parts).split()) == "".join(text.split())
    assert all(_utf16(part) <= limit for part in parts)
