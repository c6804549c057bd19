"""The study's secret seed and the random streams drawn from it."""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter

import pytest
from scipy.stats import chisquare

from bot.studies.seed import Stream, seed_fingerprint, study_seed

KEY = "a master key of at least thirty-two characters"


def test_the_seed_is_the_hmac_of_the_slug_under_the_master_key() -> None:
    expected = hmac.new(KEY.encode(), b"study-seed:walk-pilot", hashlib.sha256).digest()

    assert study_seed("walk-pilot", KEY) == expected


def test_each_study_has_its_own_seed() -> None:
    assert study_seed("walk-pilot", KEY) != study_seed("walk-pilot-2", KEY)


def test_a_statisticians_seed_is_used_instead_of_the_master_key() -> None:
    assert study_seed("walk-pilot", KEY, provided="sealed envelope 2026") == b"sealed envelope 2026"


def test_a_short_provided_seed_is_refused() -> None:
    with pytest.raises(ValueError, match="16"):
        study_seed("walk-pilot", KEY, provided="1234")


def test_without_a_master_key_or_a_seed_nothing_can_be_allocated() -> None:
    with pytest.raises(ValueError, match="TANDEM_MASTER_KEY"):
        study_seed("walk-pilot", None)


def test_the_fingerprint_names_the_seed_without_revealing_it() -> None:
    seed = study_seed("walk-pilot", KEY)

    assert seed_fingerprint(seed) != seed_fingerprint(study_seed("other", KEY))
    assert seed.hex()[:16] not in seed_fingerprint(seed)


def test_a_stream_draws_each_whole_number_equally_often() -> None:
    stream = Stream(b"sixteen byte key", "s1:simple:0")

    counts = Counter(stream.below(3) for _ in range(6000))

    assert chisquare([counts[0], counts[1], counts[2]]).pvalue > 0.001


def test_a_stream_is_regenerated_from_its_seed_and_label() -> None:
    first, again = Stream(b"k" * 16, "label"), Stream(b"k" * 16, "label")

    assert [first.below(100) for _ in range(20)] == [again.below(100) for _ in range(20)]
