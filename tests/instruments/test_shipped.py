"""The shipped instruments load cleanly, with their published wording, scoring, bands and
citations."""

from __future__ import annotations

from bot.instruments.loader import SHIPPED, load_instruments, read_instruments

INSTRUMENTS = load_instruments()
RESPONSES = {
    0: "Not at all",
    1: "Several days",
    2: "More than half the days",
    3: "Nearly every day",
}


def _bands(name: str) -> list[tuple[str, float, float]]:
    return [(band.name, band.min, band.max) for band in INSTRUMENTS[name].bands]


def test_the_shipped_folder_has_no_problems() -> None:
    assert read_instruments(SHIPPED)[1] == []


def test_the_shipped_instruments_are_phq9_gad7_and_craving() -> None:
    assert sorted(INSTRUMENTS) == ["craving", "gad7", "phq9"]


def test_phq9_has_the_published_stem_responses_and_nine_items() -> None:
    phq9 = INSTRUMENTS["phq9"]
    assert phq9.instructions == (
        "Over the last 2 weeks, how often have you been bothered by any of the following problems?"
    )
    assert phq9.answer is not None and phq9.answer.codes == RESPONSES
    assert [item.id for item in phq9.items] == [f"i{n}" for n in range(1, 10)]
    assert phq9.items[0].text == "Little interest or pleasure in doing things"


def test_phq9_bands_are_kroenke_spitzer_and_williams_2001() -> None:
    assert INSTRUMENTS["phq9"].score_range() == (0, 27)
    assert _bands("phq9") == [
        ("minimal", 0, 4),
        ("mild", 5, 9),
        ("moderate", 10, 14),
        ("moderately severe", 15, 19),
        ("severe", 20, 27),
    ]
    assert "Kroenke K, Spitzer RL, Williams JBW" in INSTRUMENTS["phq9"].citation


def test_gad7_bands_are_spitzer_et_al_2006() -> None:
    gad7 = INSTRUMENTS["gad7"]
    assert gad7.score_range() == (0, 21)
    assert _bands("gad7") == [
        ("minimal", 0, 4),
        ("mild", 5, 9),
        ("moderate", 10, 14),
        ("severe", 15, 21),
    ]
    assert gad7.answer is not None and gad7.answer.codes == RESPONSES
    assert (
        "Spitzer RL, Kroenke K, Williams JBW, Löwe B" in gad7.citation and "2006" in gad7.citation
    )


def test_phq9_and_gad7_say_they_are_in_the_public_domain() -> None:
    assert all("Public domain" in (INSTRUMENTS[name].licence or "") for name in ("phq9", "gad7"))


def test_craving_is_one_item_from_0_to_10_without_bands() -> None:
    craving = INSTRUMENTS["craving"]
    assert ([item.id for item in craving.items], craving.score_range(), craving.bands) == (
        ["craving"],
        (0, 10),
        [],
    )
