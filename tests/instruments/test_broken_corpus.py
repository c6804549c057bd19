"""The corpus of broken instruments: a good file with one mistake each, every one refused at
its line with a message in the author's words (never a validation library's path)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.instruments.loader import read_instrument

GOOD = """\
title: Mood check
citation: Tandem test fixture
answer:
  type: scale
  codes: {0: Never, 1: Sometimes, 2: Often, 3: Always}
items:
  - id: calm
    text: I felt calm
    reverse: true
  - id: worried
    text: I worried
  - id: tired
    text: I felt tired
  - id: mood
    text: How was your mood?
    answer:
      type: choice
      options: {g: Good, b: Bad}
scoring:
  method: sum
  subscales:
    worry: [calm, worried]
bands:
  - {name: low, min: 0, max: 3}
  - {name: medium, min: 4, max: 6}
  - {name: high, min: 7, max: 9}
administration:
  mode: one-per-message
  reask: 1
"""
MEDIUM = "{name: medium, min: 4, max: 6}"
HIGH = "{name: high, min: 7, max: 9}"
OPTIONS = "options: {g: Good, b: Bad}"
TIRED = "  - id: tired\n    text: I felt tired\n"

# case: ((old, new) replacements, the only problem expected, as `file:line: message`)
CORPUS: dict[str, tuple[list[tuple[str, str]], str]] = {
    "band-gap": (
        [(MEDIUM, "{name: medium, min: 5, max: 6}")],
        "mood.yaml:25: score 4 is in no band (between 'low' and 'medium')",
    ),
    "band-overlap": (
        [(MEDIUM, "{name: medium, min: 2, max: 6}")],
        "mood.yaml:25: bands 'low' and 'medium' overlap: scores 2 to 3 are in both",
    ),
    "bands-not-covering-the-range": (
        [(HIGH, "{name: high, min: 7, max: 8}")],
        "mood.yaml:26: score 9 is in no band (the highest is 9)",
    ),
    "band-beyond-the-highest-score": (
        [(HIGH, "{name: high, min: 7, max: 12}")],
        "mood.yaml:26: band 'high' ends at 12, above the highest possible score, 9",
    ),
    "band-with-a-fractional-edge-on-a-whole-score": (
        [(MEDIUM, "{name: medium, min: 3.5, max: 6}")],
        "mood.yaml:25: band 'medium': the score is a whole number, so its `min` and `max` "
        "must be whole numbers",
    ),
    "reverse-scored-item-without-a-range": (
        [
            (
                TIRED,
                "  - id: tired\n    text: Hours slept\n    answer: {type: number}\n"
                "    reverse: true\n",
            )
        ],
        "mood.yaml:15: item 'tired' is reverse-scored but its answer has no range: give its "
        "`min` and `max`, or `scoring.reverse`",
    ),
    "duplicate-item-id": (
        [("id: tired", "id: worried")],
        "mood.yaml:12: item id 'worried' is used twice (first by item 2)",
    ),
    "subscale-naming-an-unknown-item": (
        [("worry: [calm, worried]", "worry: [calm, woried]")],
        "mood.yaml:22: subscale 'worry' names item 'woried', which is not an item; did you "
        "mean 'worried'?",
    ),
    "subscale-naming-a-choice": (
        [("worry: [calm, worried]", "worry:\n      items: [calm, mood]")],
        "mood.yaml:23: subscale 'worry': item 'mood' is a choice, which is not scored",
    ),
    "unquoted-yes-as-an-option-label": (
        [(OPTIONS, "options: {g: yes, b: Bad}")],
        "mood.yaml:18: `yes` unquoted is read as true or false (YAML 1.1); quote it: 'yes'",
    ),
    "unquoted-yes-as-an-option-key": (
        [(OPTIONS, "options:\n        yes: Agree\n        'no': Disagree")],
        "mood.yaml:19: the key `yes` unquoted is read as true or false (YAML 1.1); quote it: 'yes'",
    ),
    "flow-mapping-missing-a-comma": (
        [(MEDIUM, "{name: medium min: 4, max: 6}")],
        "mood.yaml:25: a comma is missing before `min:` in `{...}` (write `key: value, min: ...`)",
    ),
    "flow-mapping-without-a-space-after-the-colon": (
        [(MEDIUM, "{name: medium, min:4, max: 6}")],
        "mood.yaml:25: write a space after the colon: `min: 4` (without it, `min:4` is one "
        "key with no value)",
    ),
    "flow-mapping-with-a-key-swallowed-by-a-value": (
        [(MEDIUM, "{name: medium min 4, max: 6}")],
        "mood.yaml:25: band 'medium min 4': `min` is required; it seems to be inside the value "
        "of `name` ('medium min 4'): is a comma or a colon missing?",
    ),
    "flow-mapping-with-a-semicolon": (
        [(MEDIUM, "{name: medium; min: 4, max: 6}")],
        "mood.yaml:25: in `{...}` pairs are separated by commas, not ';': write `, min:`",
    ),
    "unknown-key": (
        [("    reverse: true", "    revers: true")],
        "mood.yaml:9: item 'calm': unknown key `revers`; did you mean `reverse`?",
    ),
    "misspelt-required-key": (
        [("    text: I felt tired", "    txt: I felt tired")],
        "mood.yaml:13: item 'tired': unknown key `txt`; did you mean `text`?",
    ),
    "choice-without-options": (
        [(f"      {OPTIONS}\n", "")],
        "mood.yaml:17: a choice needs `options` (at least two: code: label)",
    ),
    "all-at-once-with-a-two-digit-code-and-no-separator-rule": (
        [
            ("mode: one-per-message", "mode: all-at-once"),
            (
                "      type: choice\n      " + OPTIONS,
                "      type: scale\n      min: 0\n      max: 10\n    scored: false",
            ),
        ],
        "mood.yaml:30: all-at-once: item 'mood' has answers of more than one character "
        '(codes 0 to 10), so a reply such as "12103" cannot be read digit by digit; add '
        "`separators: required` under `administration`",
    ),
    "unquoted-no-where-a-word-is-expected": (
        [("  reask: 1", "  skip: no")],
        "mood.yaml:29: `administration.skip` should be one of 'allowed' or 'not-allowed' "
        "(it is 'no')",
    ),
    "code-that-is-not-a-number": (
        [("2: Often", "two: Often")],
        "mood.yaml:5: `answer.codes`: the key `two` should be a whole number",
    ),
    "misspelt-answer-type": (
        [("type: choice", "type: choise")],
        "mood.yaml:17: item 'mood': `answer.type` should be one of 'scale', 'choice', 'yes/no' "
        "or 'number' (it is 'choise')",
    ),
    "item-without-text": (
        [(TIRED, "  - id: tired\n")],
        "mood.yaml:12: item 'tired': `text` is required",
    ),
    "key-written-twice": (
        [("  reask: 1", "  reask: 1\n  reask: 2")],
        "mood.yaml:30: `reask` is written twice (first on line 29); the second would silently "
        "replace the first",
    ),
    "scale-code-outside-its-range": (
        [("codes: {0: Never,", "min: 0\n  max: 3\n  codes: {0: Never, 4: Hardly,")],
        "mood.yaml:7: code 4 is outside `min` to `max` (0 to 3)",
    ),
}


def _problems(tmp_path: Path, replacements: list[tuple[str, str]]) -> list[str]:
    text = GOOD
    for old, new in replacements:
        assert old in text, f"{old!r} is not in the fixture"
        text = text.replace(old, new)
    path = tmp_path / "mood.yaml"
    path.write_text(text)
    instrument, problems = read_instrument(path)
    assert instrument is None or not problems
    return [str(problem).replace(f"{tmp_path}/", "") for problem in problems]


def test_the_good_fixture_has_no_problems(tmp_path: Path) -> None:
    assert _problems(tmp_path, []) == []


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_each_broken_instrument_is_refused_once_at_its_line(tmp_path: Path, case: str) -> None:
    replacements, expected = CORPUS[case]
    assert _problems(tmp_path, replacements) == [expected]


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_no_message_shows_a_validation_library_path(tmp_path: Path, case: str) -> None:
    replacements, _ = CORPUS[case]
    for message in _problems(tmp_path, replacements):
        assert "[key]" not in message and "dict[" not in message and "function-" not in message


def test_a_file_name_that_is_not_a_name_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "PHQ-9.yaml"
    path.write_text(GOOD)
    _, problems = read_instrument(path)
    assert [p.message for p in problems] == [
        "the file name 'PHQ-9' must start with a letter and use only a-z, 0-9 and _ (it is a "
        "name in conditions)"
    ]


def test_a_subscale_band_problem_names_the_subscale(tmp_path: Path) -> None:
    bands = "worry:\n      items: [calm, worried]\n      bands: [{name: some, min: 0, max: 5}]"
    assert _problems(tmp_path, [("worry: [calm, worried]", bands)]) == [
        "mood.yaml:24: subscale 'worry': score 6 is in no band (the highest is 6)"
    ]


def test_a_subscale_written_as_one_word_asks_for_a_list(tmp_path: Path) -> None:
    assert _problems(tmp_path, [("worry: [calm, worried]", "worry: calm")]) == [
        "mood.yaml:22: subscale 'worry' should be a list of item ids (or `items:` with "
        "`bands:`) (it is 'calm')"
    ]
