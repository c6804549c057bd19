"""Tests for classifying STOP, START and HELP keywords the way Twilio does."""

import pytest

from bot.channel.keywords import DEFAULT_KEYWORDS, Keyword, Keywords, classify, from_opt_out_type

STOP_WORDS = ["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"]


@pytest.mark.parametrize("word", STOP_WORDS)
def test_every_twilio_opt_out_word_is_stop(word):
    assert classify(word) is Keyword.STOP


@pytest.mark.parametrize("word", ["START", "YES", "UNSTOP"])
def test_every_twilio_opt_in_word_is_start(word):
    assert classify(word) is Keyword.START


@pytest.mark.parametrize("word", ["HELP", "INFO"])
def test_every_twilio_help_word_is_help(word):
    assert classify(word) is Keyword.HELP


@pytest.mark.parametrize("body", ["Stop", "stop", " STOP. ", "stop!", "Stop!!!", "\tstop?\n"])
def test_case_surrounding_whitespace_and_trailing_punctuation_are_ignored(body):
    assert classify(body) is Keyword.STOP


@pytest.mark.parametrize(
    "body", ["please don't stop texting me", "STOP PLEASE", "please cancel", "stop it", "yes I did"]
)
def test_a_keyword_inside_a_sentence_is_not_a_keyword(body):
    assert classify(body) is None


@pytest.mark.parametrize("body", ["", "   ", "!!!", "stopp", "s.t.o.p", "ST OP", "okay"])
def test_an_ordinary_or_empty_message_is_not_a_keyword(body):
    assert classify(body) is None


def test_optin_is_not_a_default_keyword():
    assert classify("OPTIN") is None


def test_extended_families_match_configured_spanish_words():
    spanish = DEFAULT_KEYWORDS.extended(stop=["PARAR", "BAJA", "ALTO"], help=["AYUDA"])
    assert classify("¡Alto!", spanish) is Keyword.STOP
    assert classify("baja", spanish) is Keyword.STOP
    assert classify("ayuda", spanish) is Keyword.HELP


def test_extending_keeps_the_default_words():
    assert classify("stop", DEFAULT_KEYWORDS.extended(stop=["PARAR"])) is Keyword.STOP


def test_extending_leaves_the_defaults_untouched():
    DEFAULT_KEYWORDS.extended(stop=["PARAR"])
    assert classify("parar") is None


def test_a_keyword_of_two_words_is_refused():
    with pytest.raises(ValueError, match="single word"):
        Keywords().extended(stop=["NO MORE"])


def test_a_bare_string_instead_of_a_list_of_keywords_is_refused():
    with pytest.raises(TypeError, match="collection"):
        Keywords().extended(stop="PARAR")


def test_a_word_in_two_families_is_refused():
    with pytest.raises(ValueError, match="more than one family"):
        Keywords().extended(start=["STOP"])


def test_families_can_replace_the_defaults_entirely():
    only_spanish = Keywords(stop=frozenset({"PARAR"}), start=frozenset(), help=frozenset())
    assert classify("stop", only_spanish) is None
    assert classify("Parar", only_spanish) is Keyword.STOP


@pytest.mark.parametrize(
    ("value", "expected"),
    [("STOP", Keyword.STOP), ("START", Keyword.START), ("HELP", Keyword.HELP), (" help ", "HELP")],
)
def test_twilio_opt_out_type_maps_to_its_keyword(value, expected):
    assert from_opt_out_type(value) is Keyword(expected)


@pytest.mark.parametrize("value", [None, "", "UNSTOP", "OTHER"])
def test_an_absent_or_unknown_opt_out_type_is_none(value):
    assert from_opt_out_type(value) is None
