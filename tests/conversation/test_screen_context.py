"""What around a crisis phrase changes its meaning: negation, contrast, clauses, quoted media."""

import pytest

from bot.conversation.safety import CrisisScreen

SCREEN = CrisisScreen.from_default()


@pytest.mark.parametrize(
    "message",
    [
        "I'm not suicidal",
        "I would never kill myself",
        "I'm not going to hurt myself",
        "I don't want to die",
        "no quiero morir, solo estoy cansada",
        "nunca me suicidaría",
        "je ne veux pas me suicider",
        "não quero me matar",
    ],
)
def test_a_phrase_denied_by_a_negation_just_before_it_is_not_flagged(message):
    assert not SCREEN.check(message).crisis, SCREEN.check(message).phrase


@pytest.mark.parametrize(
    "message",
    [
        "I'm not suicidal but I think about dying a lot",
        "I don't want to die but I can't keep living like this",
        "no quiero morir pero ya no aguanto más",
    ],
)
def test_a_denial_followed_by_a_contrast_is_still_flagged(message):
    assert SCREEN.check(message).crisis


def test_a_negation_in_one_clause_does_not_reach_into_the_next():
    assert SCREEN.check("No, I want to die").category == "suicide"


def test_a_negation_answering_with_no_before_i_is_not_a_denial():
    assert SCREEN.check("no i want to die").category == "suicide"


def test_a_negation_separated_by_other_words_does_not_deny_the_phrase():
    assert SCREEN.check("I can't stop thinking about killing myself").category == "suicide"


def test_a_negated_earlier_phrase_does_not_hide_a_later_one():
    assert SCREEN.check("I'm not suicidal, I just want to cut myself").category == "self_harm"


@pytest.mark.parametrize(
    "message",
    [
        'listening to "Suicide Blonde" by INXS',
        "we sang “I want to die” at karaoke",
        "j'écoute « Je veux mourir » à la radio",
    ],
)
def test_a_quotation_introduced_as_a_song_or_title_is_not_the_writers_own(message):
    assert not SCREEN.check(message).crisis


def test_a_quotation_of_the_writers_own_thoughts_is_still_screened():
    assert SCREEN.check('I keep thinking "I want to die"').category == "suicide"


def test_a_quoted_title_leaves_the_rest_of_the_message_screened():
    assert SCREEN.check('listening to "Suicide Blonde" and I want to die').crisis


# Boundaries single-change mutants of the crisis screen survived (make mutation)


def test_a_contrast_before_the_denial_in_its_clause_does_not_undo_it():
    assert not SCREEN.check("but I am not suicidal").crisis
    assert SCREEN.check("I am not suicidal but").crisis


def test_a_media_cue_counts_up_to_six_words_before_the_quotation():
    assert not SCREEN.check('a song i keep hearing on radio "i want to die"').crisis  # 6th
    assert SCREEN.check('a song i keep hearing on the radio "i want to die"').crisis  # 7th


def test_a_contrast_in_the_very_next_clause_keeps_a_denial_flagged():
    assert SCREEN.check("I'm not suicidal, but sometimes I think about it").crisis
