"""Bands tile the score range: random band partitions are accepted exactly when they cover
every score once (whole-number edges for whole-number scores), and a score falls in the band
that holds it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.instruments.checks import band_problems, instrument_problems
from bot.instruments.format import Band, Instrument
from bot.instruments.scoring import band_of

EDGE = st.integers(-3, 3)


@st.composite
def partitions(draw: Any, step: float = 1.0) -> tuple[float, float, list[Band]]:
    """A score range and bands over it: a tiling, often with one edge moved (a gap or an
    overlap), in any order. `step` 1: whole-number scores; below 1: fractional scores."""
    low = draw(st.integers(0, 4)) * step
    width = draw(st.integers(1, 24))
    high = low + width * step
    cuts = st.sets(st.integers(1, width - 1), max_size=5) if width > 1 else st.just(set())
    inner = sorted(draw(cuts))
    edges = [low, *(low + cut * step for cut in inner), high + (step if step == 1 else 0)]
    last = 1 if step == 1 else 0  # whole-number bands end one below the next band's start
    pairs = [[start, end - last] for start, end in zip(edges, edges[1:], strict=False)]
    if draw(st.booleans()):
        band, end = draw(st.integers(0, len(pairs) - 1)), draw(st.integers(0, 1))
        pairs[band][end] += draw(EDGE) * (1 if step == 1 else step)
    order = draw(st.permutations(range(len(pairs))))
    bands = [Band(name=f"b{i}", min=pairs[i][0], max=pairs[i][1]) for i in order]
    return low, high, bands


def tiles_whole(low: float, high: float, bands: list[Band]) -> bool:
    """The oracle: each whole score in [low, high] is in exactly one band, none outside."""
    if any(band.min > band.max for band in bands):
        return False
    covered = [s for band in bands for s in range(int(band.min), int(band.max) + 1)]
    return sorted(covered) == list(range(int(low), int(high) + 1))


def tiles_fractional(low: float, high: float, bands: list[Band]) -> bool:
    """The oracle for fractional scores: sorted, each band ends where the next begins."""
    ordered = sorted(bands, key=lambda band: band.min)
    if any(band.min > band.max for band in bands):
        return False
    joined = all(a.max == b.min for a, b in zip(ordered, ordered[1:], strict=False))
    return joined and ordered[0].min == low and ordered[-1].max == high


@settings(max_examples=200, deadline=None)
@given(partitions())
def test_whole_number_bands_are_accepted_exactly_when_they_tile_the_range(
    case: tuple[float, float, list[Band]],
) -> None:
    low, high, bands = case
    assert (band_problems(bands, low, high, integral=True) == []) == tiles_whole(low, high, bands)


@settings(max_examples=200, deadline=None)
@given(partitions(step=0.25))
def test_fractional_bands_are_accepted_exactly_when_each_ends_where_the_next_begins(
    case: tuple[float, float, list[Band]],
) -> None:
    low, high, bands = case
    accepted = band_problems(bands, low, high, integral=False) == []
    assert accepted == tiles_fractional(low, high, bands)


@settings(max_examples=100, deadline=None)
@given(partitions(), st.data())
def test_a_fractional_edge_is_refused_for_a_whole_number_score(
    case: tuple[float, float, list[Band]], data: st.DataObject
) -> None:
    low, high, bands = case
    index = data.draw(st.integers(0, len(bands) - 1))
    moved = Band(name=bands[index].name, min=bands[index].min + 0.5, max=bands[index].max)
    bands = [*bands[:index], moved, *bands[index + 1 :]]
    assert band_problems(bands, low, high, integral=True) != []


@settings(max_examples=100, deadline=None)
@given(partitions())
def test_every_whole_score_falls_in_the_one_band_that_holds_it(
    case: tuple[float, float, list[Band]],
) -> None:
    low, high, bands = case
    if band_problems(bands, low, high, integral=True):
        return
    for value in range(int(low), int(high) + 1):
        holding = [band.name for band in bands if band.min <= value <= band.max]
        assert [band_of(bands, value, integral=True)] == holding


def test_a_fractional_score_on_an_edge_belongs_to_the_higher_band() -> None:
    bands = [Band(name="low", min=0, max=1.5), Band(name="high", min=1.5, max=3)]
    assert band_problems(bands, 0, 3, integral=False) == []
    assert [band_of(bands, v, integral=False) for v in (0, 1.49, 1.5, 3)] == [
        "low",
        "low",
        "high",
        "high",
    ]


@settings(max_examples=60, deadline=None)
@given(partitions())
def test_an_instrument_refuses_its_bands_exactly_when_they_do_not_tile_its_total(
    case: tuple[float, float, list[Band]],
) -> None:
    low, high, bands = case
    items = [{"id": f"i{n}", "text": f"Item {n}"} for n in range(int(high - low))]
    shifted = [Band(name=b.name, min=b.min - low, max=b.max - low) for b in bands]
    instrument = Instrument.model_validate(
        {
            "title": "Property",
            "citation": "test",
            "answer": {"type": "yes/no"},
            "items": items,
            "bands": [band.model_dump() for band in shifted],
        }
    )
    refused = any(path[:1] == ("bands",) for path, _ in instrument_problems(instrument))
    assert instrument.score_range() == (0, high - low)
    assert refused == (not tiles_whole(0, high - low, shifted))
