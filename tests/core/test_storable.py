"""Text no database stores (NUL, lone surrogates) is replaced, and the original stays whole."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.core.storable import original, storable, storable_json, unstorable_paths, walked


def test_ordinary_text_is_kept_as_it_is() -> None:
    assert storable("héllo ✓ 👋") == ("héllo ✓ 👋", None)


def test_a_nul_and_a_lone_surrogate_become_the_replacement_character() -> None:
    clean, kept = storable("a\x00b\ud800c")
    assert clean == "a\ufffdb\ufffdc"
    assert kept is not None and original(kept) == "a\x00b\ud800c"


@given(st.text(alphabet=st.characters(codec=None)))
def test_any_text_round_trips_and_what_is_stored_has_no_unstorable_character(text: str) -> None:
    clean, kept = storable(text)
    assert "\x00" not in clean
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in clean)
    assert (original(kept) if kept is not None else clean) == text


def test_a_json_value_keeps_each_original_by_its_path() -> None:
    value = {"body": "x\x00", "changes": {"name": "A\x00"}, "media": [{"url": "u", "t": "\x00"}]}
    clean, kept = storable_json(value)
    assert clean == {
        "body": "x\ufffd",
        "changes": {"name": "A\ufffd"},
        "media": [{"url": "u", "t": "\ufffd"}],
    }
    assert {path: original(k) for path, k in kept.items()} == {
        "body": "x\x00",
        "changes.name": "A\x00",
        "media[0].t": "\x00",
    }


def test_a_clean_json_value_is_returned_unchanged() -> None:
    value = {"body": "fine", "n": 3, "list": ["a", {"b": None}]}
    clean, kept = storable_json(value)
    assert clean is value and kept == {}


def test_unstorable_paths_name_keys_and_values() -> None:
    assert list(unstorable_paths({"ok": "x", "bad\x00": 1, "list": ["\ud800"]})) == [
        "bad\x00",
        "list[0]",
    ]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(JSON)
def test_any_json_value_is_made_storable_as_the_walk_alone_makes_it(value: object) -> None:
    assert storable_json(value) == walked(value)


def test_a_text_that_spells_a_nul_escape_is_kept_and_a_nul_key_is_left_to_the_walk() -> None:
    spelt = {"a": "back\\u0000slash", "k\x00": ["\x00"]}
    assert storable_json(spelt) == (
        {"a": "back\\u0000slash", "k\x00": ["\ufffd"]},
        {"k\x00[0]": "AA=="},
    )
