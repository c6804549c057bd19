"""Tests for transition conditions: what authors may write, what is refused, how it evaluates."""

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.interventions.interpreter.conditions import condition, holds, lookup
from bot.interventions.language.expressions import ConditionError, Evaluation, compile_condition

ROOTS = {"judgements", "step", "profile", "notes", "measurements"}
CONTEXT = {
    "judgements": {"engaged": {"response": "yes"}, "risk": {"flag": False}},
    "step": {"turns": 6, "minutes": 12},
    "profile": {"goal": "walk daily", "goal name": "walking", "items": "shoes"},
    "notes": {"TOPICS": ["sleep", "work"]},
    "measurements": {"mood": {"last": 7, "first": 4}},
}


def check(source: str, context: dict = CONTEXT) -> Evaluation:
    return compile_condition(source, ROOTS).check(context)


def reject(source: str) -> str:
    with pytest.raises(ConditionError) as caught:
        compile_condition(source, ROOTS)
    return str(caught.value)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('judgements.engaged.response == "yes" and step.turns > 5', True),
        ('judgements.engaged.response == "yes" and step.turns > 6', False),
        ('profile.goal != ""', True),
        ('"sleep" in notes.TOPICS', True),
        ('"gym" not in notes.TOPICS', True),
        ("measurements.mood.last >= 7 or step.minutes > 30", True),
        ("measurements.mood.last < 7 or step.minutes > 30", False),
        ("not judgements.risk.flag", True),
        ('profile["goal name"] == "walking"', True),
        ('notes.TOPICS[-1] == "work"', True),
        ("measurements.mood.last - measurements.mood.first >= 3", True),
        ("step.turns + 1 == 7", True),
        ("4 < step.turns <= 6", True),
        ("step.turns in [1, -2, 6]", True),
        ('profile.goal in ("walk daily", "run")', True),
        ("step.turns > -1", True),
        ("true", True),
        ("false or none", False),
        ("judgements.risk.flag == False", True),
        ("profile.goal", True),
    ],
)
def test_allowed_forms_evaluate_like_python(source, expected):
    assert check(source) == Evaluation(expected)


def test_keys_named_like_dict_methods_read_the_data():
    assert check('profile.items == "shoes"').value is True


def test_a_missing_judgement_is_false_and_says_which_key():
    result = check('judgements.ended.response == "yes"')
    assert result == Evaluation(False, "'judgements.ended' is not set")


def test_a_missing_root_is_false_and_says_which_root():
    assert check("step.turns > 1", {}) == Evaluation(False, "'step' is not set")


def test_a_missing_key_in_a_branch_not_taken_does_no_harm():
    assert check("step.turns > 5 or judgements.ended.response").value is True


def test_reading_a_key_of_text_is_false_with_an_error():
    result = check("profile.goal.upper")
    assert result.value is False
    assert "'profile.goal' is 'walk daily'" in (result.error or "")


def test_an_index_past_the_end_is_false_with_an_error():
    assert check('notes.TOPICS[5] == "x"') == Evaluation(False, "'notes.TOPICS[5]' is not set")


def test_comparing_text_with_a_number_is_false_with_an_error():
    result = check("profile.goal < 3")
    assert result.value is False
    assert "not supported between instances of 'str' and 'int'" in (result.error or "")


def test_adding_to_text_from_the_context_is_false_with_an_error():
    result = check("profile.goal + 1 == 2")
    assert result.value is False
    assert "numbers only" in (result.error or "")


def test_evaluate_returns_only_the_bool():
    condition = compile_condition("judgements.ended.flag", ROOTS)
    assert condition.evaluate(CONTEXT) is False
    assert compile_condition("step.turns == 6", ROOTS).evaluate(CONTEXT) is True


def test_names_lists_the_dotted_references_used():
    condition = compile_condition(
        'judgements.engaged.response == "yes" and step.turns > 5 and not true', ROOTS
    )
    assert condition.names() == {"judgements.engaged.response", "step.turns"}


def test_names_join_text_keys_and_stop_at_list_positions():
    condition = compile_condition('profile["goal name"] == notes.TOPICS[0]', ROOTS)
    assert condition.names() == {"profile.goal name", "notes.TOPICS"}


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("().__class__", "names starting with '_' are not allowed: '__class__'"),
        ("__import__('os')", "calls are not allowed: '__import__(...)' at column 1"),
        ("step.__class__", "names starting with '_' are not allowed: '__class__'"),
        ("step._secret", "names starting with '_' are not allowed: '_secret'"),
        ('profile["__dict__"]', "names starting with '_' are not allowed: '__dict__'"),
        ("[x for x in notes.TOPICS]", "comprehensions are not allowed"),
        ("any(t for t in notes.TOPICS)", "calls are not allowed: 'any(...)'"),
        ('f"{step}"', "f-strings are not allowed"),
        ("step.turns if step else 0", "'x if y else z' expressions (use and/or) are not allowed"),
        ('"a" * 10**9', "the '*' operator is not allowed"),
        ("step.turns ** 2 > 4", "the '**' operator is not allowed"),
        ("step.turns / 2 > 1", "the '/' operator is not allowed"),
        ("~step.turns", "the '~' operator is not allowed"),
        ("+step.turns", "the 'unary +' operator is not allowed"),
        ('"a" + "b" == "ab"', "+ and - work on numbers only: '\"a\"'"),
        ("lambda: 1", "lambdas are not allowed"),
        ("(step := 1)", "assignments (:=) are not allowed"),
        ("[*notes.TOPICS]", "starred expressions are not allowed"),
        ("{'a': 1}", "dictionaries are not allowed"),
        ("step.turns in {1, 2}", "sets are not allowed"),
        ("notes.TOPICS[0:2]", "[...] needs a fixed text key or whole number"),
        ("notes.TOPICS[step.turns]", "[...] needs a fixed text key or whole number"),
        ("step.turns is None", "'is' is not allowed, use == or != instead"),
        ('profile.goal == b"x"', "only text, numbers, true/false and none can be values"),
        ("step.turns == 1j", "only text, numbers, true/false and none can be values"),
        ("step.turns in [step.minutes]", "lists may only hold fixed values"),
        ('"abc".upper', "'.' and [...] can only follow a name such as 'profile'"),
        ("usr.name", "unknown name: 'usr' at column 1; known names: judgements, measurements"),
        ("judgement.risk", "unknown name: 'judgement' at column 1; did you mean 'judgements'?"),
        ("x" * 501, "the condition is too long (501 characters, max 500)"),
        ("step.turns in [" + "1," * 210 + "]", "the condition is too complex (214 parts, max 200)"),
        ("   ", "the condition is empty"),
    ],
)
def test_forms_outside_the_allow_list_are_refused_at_load(source, message):
    assert message in reject(source)


def test_the_column_of_the_offending_part_is_reported():
    assert reject("step.turns > len(notes)").endswith(
        "calls are not allowed: 'len(...)' at column 14"
    )


def test_columns_count_characters_not_bytes():
    error = pytest.raises(ConditionError, compile_condition, "'sí' == f(1)", ROOTS).value
    assert error.column == 9


def test_syntax_errors_become_condition_errors_with_a_column():
    message = reject("step.turns > > 5")
    assert message == "not a valid condition (invalid syntax) at column 14"


def test_a_condition_over_several_lines_is_told_to_use_parentheses():
    assert "wrap a condition that spans lines in parentheses" in reject("step.turns > 5\n and true")


def test_a_root_may_be_named_like_an_alias():
    condition = compile_condition("true.x == 1", {"true"})
    assert condition.evaluate({"true": {"x": 1}}) is True


ATOMS = st.one_of(
    st.builds(
        "".join,
        st.tuples(
            st.sampled_from(sorted(ROOTS) + ["other"]),
            st.lists(
                st.sampled_from([".a", ".b", ".items", "[0]", "[-1]", '["a"]']), max_size=3
            ).map("".join),
        ),
    ),
    st.sampled_from(["1", "-2", "2.5", '"a"', '""', "true", "none", "[1, 'a']", "()", "1e999"]),
)
OPERATORS = st.sampled_from(["==", "!=", "<", ">=", "in", "not in", "and", "or", "+", "-", "*"])
EXPRESSIONS = st.recursive(
    ATOMS,
    lambda inner: st.one_of(
        st.builds("({} {} {})".format, inner, OPERATORS, inner),
        inner.map("not {}".format),
        inner.map("-({})".format),
    ),
    max_leaves=12,
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "b", "items", "0"]), inner, max_size=4)
    ),
    max_leaves=15,
)
CONTEXTS = st.dictionaries(st.sampled_from(sorted(ROOTS)), JSON)
NOISY_SOURCES = st.one_of(
    st.text(max_size=60),
    EXPRESSIONS,
    st.builds(lambda a, b, c: a + b + c, EXPRESSIONS, st.text(max_size=3), EXPRESSIONS),
)


@given(NOISY_SOURCES)
def test_any_text_either_compiles_or_raises_condition_error(source):
    try:
        compile_condition(source, ROOTS)
    except ConditionError:
        pass


@given(EXPRESSIONS, CONTEXTS)
def test_compiled_conditions_never_raise_on_json_like_contexts(source, context):
    try:
        condition = compile_condition(source, ROOTS)
    except ConditionError:
        return
    result = condition.check(context)
    assert isinstance(result.value, bool)
    assert result.value is False or result.error is None


# Boundaries single-change mutants of bot/interventions/language/expressions.py survived
# (make mutation)


def test_a_condition_of_exactly_500_characters_and_200_parts_is_accepted():
    longest = "(" + "step.turns == 1" + " " * 483 + ")"  # 500 characters, not stripped
    assert compile_condition(longest, ROOTS).names() == {"step.turns"}
    biggest = "step.turns in [" + "1," * 196 + "]"  # 200 parts
    assert compile_condition(biggest, ROOTS).check(CONTEXT) == Evaluation(False)
    assert "201 parts, max 200" in reject("step.turns in [" + "1," * 197 + "]")
    assert "501 characters, max 500" in reject("(" + "step.turns == 1" + " " * 484 + ")")


# The edges of each message and value (make mutation: bot/interventions/language/expressions.py and
# bot/interventions/interpreter/conditions.py)


def test_a_refused_part_of_40_characters_is_shown_whole():
    part = "{" + "1" * 38 + "}"
    assert reject(part) == f"sets are not allowed: '{part}' at column 1"


def test_a_refused_part_of_41_characters_is_cut_to_37_and_dots():
    part = "{" + "1" * 39 + "}"
    assert reject(part) == "sets are not allowed: '{" + "1" * 36 + "...' at column 1"


def test_the_column_of_a_part_on_the_second_line_counts_that_lines_characters():
    message = reject('(step.turns > 1 or\n"é" == f())')
    assert message == "calls are not allowed: 'f(...)' at column 8 of line 2"


def test_a_syntax_error_on_the_second_line_names_the_line():
    assert reject("(1 +\n  > 2)") == (
        "not a valid condition (invalid syntax) at column 3 of line 2"
        " (wrap a condition that spans lines in parentheses)"
    )


def test_a_syntax_error_at_the_first_character_has_column_1():
    error = pytest.raises(ConditionError, compile_condition, ")", ROOTS).value
    assert (str(error), error.column, error.line) == (
        "not a valid condition (unmatched ')') at column 1",
        1,
        1,
    )


def test_a_null_character_is_refused_without_a_column():
    error = pytest.raises(ConditionError, compile_condition, "step.turns >\x00 1", ROOTS).value
    assert (str(error), error.column, error.line) == (
        "not a valid condition (source code string cannot contain null bytes)",
        None,
        1,
    )


def test_a_condition_too_deep_for_the_parser_is_refused():
    source = "-" * 3000 + "1"
    with pytest.raises(ConditionError, match="^the condition is nested too deeply$"):
        compile_condition(source, ROOTS, max_length=10_000, max_nodes=10_000)


def test_a_condition_too_big_for_memory_is_refused(monkeypatch):
    def out_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr("bot.interventions.language.expressions.ast.parse", out_of_memory)
    assert reject("step.turns > 1") == "the condition is nested too deeply"


def test_an_expression_too_deep_to_evaluate_is_false_with_an_error():
    source = "-" * 700 + "step.turns"
    condition = compile_condition(source, ROOTS, max_length=10_000, max_nodes=10_000)
    assert condition.check(CONTEXT) == Evaluation(False, "the expression is nested too deeply")


@pytest.mark.parametrize(
    ("arguments", "message", "line"),
    [
        (("x",), "x", 1),
        (("x", 4), "x at column 4", 1),
        (("x", 4, 2), "x at column 4 of line 2", 2),
        (("x", 4, 3), "x at column 4 of line 3", 3),
        (("x", None, 3), "x", 3),
        (("x", 4, 1, "; hint"), "x at column 4; hint", 1),
    ],
)
def test_a_condition_error_says_the_line_only_after_a_column_past_line_1(arguments, message, line):
    error = ConditionError(*arguments)
    assert (str(error), error.line) == (message, line)


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("-step.turns", -6),
        ("-(2)", -2),
        ("0 - 3", -3),
        ("-step.minutes - 0.5", -12.5),
        ("-measurements.mood.first", -4),
        ("- -step.turns", 6),
    ],
)
def test_a_minus_gives_the_negated_number(source, value):
    found = compile_condition(source, ROOTS).value(CONTEXT)
    assert (found, type(found)) == (value, type(value))


def test_a_minus_before_a_fractional_number_negates_it():
    context = {**CONTEXT, "step": {"turns": 6, "minutes": 2.5}}
    assert compile_condition("-step.minutes", ROOTS).value(context) == -2.5


def test_a_minus_before_text_is_false_with_an_error():
    assert check("-profile.goal == 1") == Evaluation(
        False, "'-' works on numbers only, not 'walk daily'"
    )


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("notes.TOPICS[-1]", "work"),
        ("notes.TOPICS[-2]", "sleep"),
        ("notes.TOPICS[0]", "sleep"),
        ("notes.TOPICS[1]", "work"),
    ],
)
def test_a_list_index_reads_from_either_end(source, value):
    assert compile_condition(source, ROOTS).value(CONTEXT) == value


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ('notes.TOPICS[-3] == "sleep"', "'notes.TOPICS[-3]' is not set"),
        ('notes.TOPICS[2] == "sleep"', "'notes.TOPICS[2]' is not set"),
        ("step[0] == 6", "'step[0]' is not set"),
        ('notes.TOPICS.first == "sleep"', "'notes.TOPICS.first' is not set"),
        ('profile.goal[0] == "w"', "'profile.goal[0]' is not set: 'profile.goal' is 'walk daily'"),
    ],
)
def test_an_index_or_key_the_data_does_not_have_is_not_set(source, error):
    assert check(source) == Evaluation(False, error)


def test_evaluations_and_conditions_cannot_be_changed():
    condition = compile_condition("step.turns > 1", ROOTS)
    evaluation = condition.check(CONTEXT)
    with pytest.raises(dataclasses.FrozenInstanceError):
        evaluation.value = False  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        condition.source = "true"  # type: ignore[misc]


def test_a_condition_shows_and_compares_as_its_text():
    first, again = (compile_condition("step.turns > 1", ROOTS) for _ in range(2))
    assert repr(first) == "Condition(source='step.turns > 1')"
    assert first == again
    assert hash(first) == hash(again)


def test_conditions_of_one_text_are_equal_whatever_names_they_read():
    as_a_root, as_an_alias = compile_condition("true", {"true"}), compile_condition("true", set())
    assert (as_a_root.names(), as_an_alias.names()) == ({"true"}, set())
    assert as_a_root == as_an_alias


def test_no_condition_always_holds_and_reads_nothing():
    assert holds(None, CONTEXT) == (True, {})


def test_a_condition_holds_with_the_values_it_read():
    found = holds('judgements.engaged.response == "yes" and step.turns > 5', CONTEXT)
    assert found == (True, {"judgements.engaged.response": "yes", "step.turns": 6})


def test_a_dotted_name_is_looked_up_key_by_key():
    assert lookup(CONTEXT, "measurements.mood.last") == 7
    assert lookup(CONTEXT, "measurements.mood.none") is None
    assert lookup(CONTEXT, "profile.goal.x") is None


def test_a_condition_is_compiled_once():
    assert condition("step.turns > 1") is condition("step.turns > 1")
