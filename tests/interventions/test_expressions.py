"""Tests for transition conditions: what authors may write, what is refused, how it evaluates."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.interventions.expressions import ConditionError, Evaluation, compile_condition

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


# Boundaries single-change mutants of bot/interventions/expressions.py survived (make mutation)


def test_a_condition_of_exactly_500_characters_and_200_parts_is_accepted():
    longest = "(" + "step.turns == 1" + " " * 483 + ")"  # 500 characters, not stripped
    assert compile_condition(longest, ROOTS).names() == {"step.turns"}
    biggest = "step.turns in [" + "1," * 196 + "]"  # 200 parts
    assert compile_condition(biggest, ROOTS).check(CONTEXT) == Evaluation(False)
    assert "201 parts, max 200" in reject("step.turns in [" + "1," * 197 + "]")
    assert "501 characters, max 500" in reject("(" + "step.turns == 1" + " " * 484 + ")")
