"""Tests for the deterministic crisis screen: corpora, rule ids, normalisation and extensions."""

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest
import yaml

from bot.conversation.safety import DEFAULT_PHRASES, EXTRA_RULE_ID, CrisisScreen, PhraseError, fold

CORPUS = Path(__file__).resolve().parents[1] / "safety_corpus"
SCREEN = CrisisScreen.from_default()


def _lines(name: str) -> list[str]:
    text = (CORPUS / name).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


CRISIS = _lines("crisis.txt")
EVERYDAY = _lines("everyday.txt")


def _catalogue(**overrides: object) -> dict:
    rule = {"id": "en.test", "category": "test", "language": "en", "description": "d"}
    return {"version": 1, "rules": [{**rule, "phrases": ["purple elephant"]}], **overrides}


def test_each_corpus_holds_at_least_sixty_messages():
    assert min(len(CRISIS), len(EVERYDAY)) >= 60


@pytest.mark.parametrize("message", CRISIS, ids=range(1, len(CRISIS) + 1))
def test_every_crisis_corpus_message_is_flagged(message):
    assert SCREEN.check(message).crisis, SCREEN.normalise(message)


@pytest.mark.parametrize("message", EVERYDAY, ids=range(1, len(EVERYDAY) + 1))
def test_no_everyday_corpus_message_is_flagged(message):
    assert SCREEN.check(message).rule is None, SCREEN.check(message).phrase


def test_every_default_rule_is_exercised_by_the_crisis_corpora():
    rules = {rule["id"] for rule in yaml.safe_load(DEFAULT_PHRASES.read_text("utf-8"))["rules"]}
    tuning = [line.split("\t")[0] for line in _lines("tuning.txt") if not line.startswith("#")]
    assert rules - {SCREEN.check(message).rule for message in CRISIS + tuning} == set()


@pytest.mark.parametrize(
    ("message", "rule", "category", "language"),
    [
        ("I want to kill myself", "en.suicide.direct", "suicide", "en"),
        ("gonna kms", "en.suicide.euphemism", "suicide", "en"),
        ("I'm going to jump off the bridge", "en.suicide.plan", "suicide", "en"),
        ("quiero hacerme daño", "es.self_harm", "self_harm", "es"),
        ("I'm going to kill him", "en.harm_to_others", "harm_to_others", "en"),
        ("mi esposo me pega", "es.abuse", "abuse", "es"),
        ("I took too many pills", "en.overdose", "overdose", "en"),
        ("je veux mourir", "fr.suicide", "suicide", "fr"),
        ("me corté otra vez", "es.self_harm.tense", "self_harm", "es"),
        ("vou matar meu vizinho", "pt.harm_to_others", "harm_to_others", "pt"),
    ],
)
def test_a_flagged_message_reports_its_stable_rule_id(message, rule, category, language):
    result = SCREEN.check(message)
    assert (result.rule, result.category, result.language) == (rule, category, language)


def test_the_result_names_the_catalogue_phrase_rather_than_the_message():
    assert SCREEN.check("i just wanna die!!!").phrase == "want to die"


def test_the_leftmost_phrase_decides_the_rule():
    assert SCREEN.check("mi novio me amenaza con matarme").rule == "es.abuse"


def test_accents_do_not_change_the_verdict():
    assert SCREEN.check("voy a suicídarme") == SCREEN.check("voy a suicidarme")


def test_case_and_repeated_letters_are_folded():
    assert SCREEN.normalise("I WANT TO DIEEEE") == "i want to die"


def test_a_standalone_two_is_read_as_to():
    assert SCREEN.normalise("want 2 die") == "want to die"


def test_leetspeak_digits_inside_a_word_are_read_as_letters():
    assert fold("K1ll mys3lf") == ["kil", "myself"]


def test_a_leading_digit_is_kept_as_a_quantity():
    assert fold("ran 5kms") == ["ran", "5kms"]


def test_punctuation_and_emoji_separate_words():
    assert SCREEN.normalise("kill...myself!!! 😭") == "kil myself"


def test_apostrophes_join_contractions_before_substitution():
    assert SCREEN.normalise("don’t") == "do not"


def test_a_zero_width_character_cannot_split_a_word():
    assert SCREEN.check("sui\u200bcide").crisis


def test_full_width_letters_are_read_as_plain_letters():
    assert SCREEN.check("ｓｕｉｃｉｄｅ").crisis


def test_phrases_match_whole_words_only():
    assert not SCREEN.check("I'm so skilled myself").crisis


@pytest.mark.parametrize("message", ["", "   \n\t ", "😀🙏❤️", "...!!!"])
def test_an_empty_or_symbol_only_message_is_not_a_crisis(message):
    assert not SCREEN.check(message).crisis


def test_an_exclusion_masks_only_its_own_words():
    assert SCREEN.check("I'm dying to try that place but honestly I want to die").crisis


def test_a_plainly_negated_mention_of_suicide_is_not_flagged():
    assert SCREEN.check("I'm not suicidal").rule is None


def test_a_negated_mention_of_suicide_followed_by_a_hedge_is_flagged():
    assert SCREEN.check("I'm not suicidal but I think about it a lot").crisis


def test_a_number_of_ten_or_more_pills_is_an_overdose_and_two_is_not():
    assert SCREEN.check("I took 30 tablets").category == "overdose"
    assert not SCREEN.check("I took 2 tablets").crisis


def test_an_extra_phrase_flags_under_the_intervention_rule():
    screen = CrisisScreen.from_default(extra_phrases=["relapsed|relapse again"])
    result = screen.check("I relapsed again last night")
    assert (result.rule, result.category, result.language) == (EXTRA_RULE_ID, "custom", "any")


def test_an_extra_phrase_can_use_the_catalogue_slots():
    screen = CrisisScreen.from_default(extra_phrases=["drink {self} to death"])
    assert screen.check("gonna drink myself to death").rule == EXTRA_RULE_ID


def test_an_extra_exclusion_silences_the_words_it_covers():
    screen = CrisisScreen.from_default(extra_exclusions=["overdose training"])
    assert not screen.check("the overdose training at the pharmacy was useful").crisis


def test_extending_one_screen_leaves_the_default_screen_unchanged():
    CrisisScreen.from_default(extra_exclusions=["overdose training"])
    assert CrisisScreen.from_default().check("the overdose training was useful").crisis


@pytest.mark.parametrize("phrase", ["kill.*", "{nosuch} die", "", "... die", "die now?", "a*"])
def test_an_invalid_extra_phrase_raises_a_value_error_naming_it(phrase):
    with pytest.raises(ValueError, match=re.escape(repr(phrase))):
        CrisisScreen.from_default(extra_phrases=[phrase])


def test_an_invalid_extra_exclusion_raises_a_value_error_naming_it():
    with pytest.raises(ValueError, match=re.escape("'(kill) time'")):
        CrisisScreen.from_default(extra_exclusions=["(kill) time"])


def test_a_single_string_of_extra_phrases_is_rejected():
    with pytest.raises(PhraseError, match="not a single string"):
        CrisisScreen.from_default(extra_phrases="kill me")


def test_a_minimal_catalogue_screens_with_its_own_rules():
    screen = CrisisScreen.from_catalogue(_catalogue())
    assert screen.check("a PURPLE elephant!").rule == "en.test"


def test_a_catalogue_rule_without_phrases_is_rejected_naming_the_rule():
    raw = _catalogue()
    raw["rules"][0]["phrases"] = []
    with pytest.raises(PhraseError, match="rule 'en.test'"):
        CrisisScreen.from_catalogue(raw)


def test_a_misspelt_catalogue_key_is_rejected_naming_the_rule():
    raw = _catalogue()
    raw["rules"][0]["phrase"] = raw["rules"][0].pop("phrases")
    with pytest.raises(PhraseError, match="rule 'en.test'.*phrase"):
        CrisisScreen.from_catalogue(raw)


def test_a_catalogue_phrase_with_an_unknown_slot_names_the_rule():
    raw = _catalogue()
    raw["rules"][0]["phrases"] = ["kill {victim}"]
    with pytest.raises(PhraseError, match="en.test: phrase 'kill {victim}': unknown slot"):
        CrisisScreen.from_catalogue(raw)


def test_a_duplicate_rule_id_is_rejected():
    raw = _catalogue()
    raw["rules"].append(dict(raw["rules"][0]))
    with pytest.raises(PhraseError, match="duplicate id 'en.test'"):
        CrisisScreen.from_catalogue(raw)


def test_a_rule_id_must_start_with_its_language():
    raw = _catalogue()
    raw["rules"][0]["language"] = "es"
    with pytest.raises(PhraseError, match="must start with its language"):
        CrisisScreen.from_catalogue(raw)


def test_a_substitution_must_replace_a_single_word():
    with pytest.raises(PhraseError, match="substitution 'two words'"):
        CrisisScreen.from_catalogue(_catalogue(substitutions={"two words": "x"}))


def test_the_result_cannot_be_modified():
    with pytest.raises(FrozenInstanceError):
        SCREEN.check("kms").crisis = False  # type: ignore[misc]


def test_the_screen_cannot_be_modified():
    with pytest.raises(FrozenInstanceError):
        SCREEN._exclusions = None  # type: ignore[misc]


def test_screening_from_many_threads_gives_the_serial_verdicts():
    messages = CRISIS + EVERYDAY
    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(SCREEN.check, messages * 4)) == [*map(SCREEN.check, messages)] * 4


# Boundaries single-change mutants of the crisis screen survived (make mutation)


def _screen_with(phrases: list[str], **overrides: object) -> CrisisScreen:
    raw = _catalogue(**overrides)
    raw["rules"][0]["phrases"] = phrases
    return CrisisScreen.from_catalogue(raw)


@pytest.mark.parametrize(
    "phrase",
    ["ab", "ab*", "#", "##", "# ab", "## ab", "ab|abcdef", "e abcd? f", "{short}"],
)
def test_a_phrase_with_fewer_than_three_required_letters_is_too_broad(phrase):
    with pytest.raises(PhraseError, match=r"too broad, needs 3\+ required letters"):
        _screen_with([phrase], slots={"short": ["ab", "abcdef"]})


@pytest.mark.parametrize(
    "phrase",
    ["abc", "abc*", "# abc", "## abc", "abc|abcdef", "{short} c", "ab ... c", "e abcd? fg"],
)
def test_a_phrase_with_exactly_three_required_letters_is_specific_enough(phrase):
    screen = _screen_with([phrase], slots={"short": ["ab", "abcdef"]})
    assert repr(screen) == "CrisisScreen(1 phrases)"


def test_an_empty_slot_is_refused_rather_than_matching_everything():
    with pytest.raises(PhraseError, match=r"slot \{nothing\}: needs at least one entry"):
        _screen_with(["kill {nothing}"], slots={"nothing": []})


def test_a_slot_matches_each_of_its_entries_and_nothing_else():
    screen = _screen_with(["purple {beast}"], slots={"beast": ["elephant", "big cat"]})
    assert screen.check("a purple big cat").crisis
    assert screen.check("a purple elephant").crisis
    assert not screen.check("a purple dog").crisis


def test_a_catalogue_entry_that_is_not_a_mapping_is_named_as_unknown():
    raw = _catalogue()
    raw["rules"].append("purple elephant")
    with pytest.raises(PhraseError, match=r"rule '\?' \(rules\.1\)"):
        CrisisScreen.from_catalogue(raw)


def test_a_bad_slot_entry_is_named_with_its_slot():
    with pytest.raises(PhraseError, match=r"slot \{x\}: unexpected characters in 'kill\.\*'"):
        _screen_with(["purple elephant"], slots={"x": ["kill.*"]})


def test_a_lone_question_mark_is_not_a_word():
    with pytest.raises(PhraseError, match=r"unexpected characters in '\?'"):
        _screen_with(["? purple elephant"])


def test_a_slot_entry_cannot_use_another_slot():
    with pytest.raises(PhraseError, match=r"slot \{b\}: unknown slot \{a\}"):
        _screen_with(["purple elephant"], slots={"a": ["abc"], "b": ["{a} def"]})


@pytest.mark.parametrize(
    ("change", "said"),
    [({"version": 2}, "catalogue: version: Input should be 1"), ({"rules": None}, "rules: ")],
)
def test_a_catalogue_error_outside_an_entry_names_its_key(change, said):
    raw = {**_catalogue(), **change}
    with pytest.raises(PhraseError, match=re.escape(said)):
        CrisisScreen.from_catalogue(raw)


def test_a_phrase_cannot_start_with_an_optional_one_letter_word():
    with pytest.raises(PhraseError, match="must start and end with a required word"):
        _screen_with(["a? purple elephant"])


def test_a_denied_phrase_does_not_hide_a_later_one_in_the_same_clause():
    assert SCREEN.check("I'm not suicidal and I want to die").crisis


def test_a_lone_question_mark_inside_a_phrase_is_not_a_word():
    with pytest.raises(PhraseError, match=r"unexpected characters in '\?'"):
        _screen_with(["purple ? elephant"])


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"rules": []}, "catalogue: rules: "),
        ({"slots": {"x": [5]}}, "catalogue: slots.x.0: "),
    ],
)
def test_a_catalogue_needs_rules_and_text_slots(change, said):
    with pytest.raises(PhraseError, match=re.escape(said)):
        CrisisScreen.from_catalogue({**_catalogue(), **change})


def test_a_rule_needs_a_description():
    raw = _catalogue()
    raw["rules"][0]["description"] = ""
    with pytest.raises(PhraseError, match=r"rule 'en.test' \(rules.0.description\)"):
        CrisisScreen.from_catalogue(raw)
