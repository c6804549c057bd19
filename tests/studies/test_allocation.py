"""Simple randomisation and permuted blocks: frequencies, balance, and what is drawn."""

from __future__ import annotations

from collections import Counter
from functools import cache

from scipy.stats import chisquare

from bot.studies.allocation import Allocation, Prior, allocate, block_contents
from bot.studies.seed import study_seed
from tests.studies.studies import participants, study

SEED = study_seed("trial", master_key="k" * 32)
ALPHA = 0.001


@cache
def simple_counts(a: int, b: int, n: int = 10_000) -> tuple[int, int]:
    """How many of `n` seeded simple allocations under the ratio a:b went to each arm."""
    trial = study({"method": "simple", "ratio": {"a": a, "b": b}})
    history: list[Prior] = []
    for _ in range(n):
        history.append(Prior(allocate(trial, SEED, history, {}).arm, {}))
    counts = Counter(prior.arm for prior in history)
    return counts["a"], counts["b"]


def p_value(observed: tuple[int, int], a: int, b: int) -> float:
    total = sum(observed)
    return float(chisquare(observed, [total * a / (a + b), total * b / (a + b)]).pvalue)


def test_simple_allocation_frequencies_pass_a_chi_square_test_against_the_ratio() -> None:
    assert p_value(simple_counts(1, 2), 1, 2) > ALPHA


def test_simple_allocation_under_another_ratio_fails_the_chi_square_test() -> None:
    assert p_value(simple_counts(1, 1), 1, 2) < ALPHA


def test_the_chi_square_test_refuses_the_ratio_the_allocations_did_not_follow() -> None:
    assert p_value(simple_counts(1, 2), 1, 1) < ALPHA


def run(allocation: dict, n: int, seed: bytes = SEED) -> list[Allocation]:
    """`n` seeded participants allocated in turn."""
    trial, history, made = study(allocation), list[Prior](), list[Allocation]()
    for baseline in participants(n, seed=3):
        made.append(allocate(trial, seed, history, baseline))
        history.append(Prior(made[-1].arm, baseline))
    return made


STRATIFIED = {
    "method": "stratified",
    "ratio": {"a": 1, "b": 2},
    "block_sizes": [3, 6],
    "strata": ["level", "sex"],
}


def test_permuted_blocks_are_exactly_balanced_at_each_block_end_within_each_stratum() -> None:
    counts: Counter[tuple[str, str]] = Counter()
    ends = 0
    for made in run(STRATIFIED, 600):
        counts[made.stratum, made.arm] += 1
        if made.position == made.block_size:
            ends += 1
            assert 2 * counts[made.stratum, "a"] == counts[made.stratum, "b"], made.block_id
    assert ends >= 100


def test_each_stratum_has_its_own_block_sequence() -> None:
    made = run(STRATIFIED, 200)

    first = {m.stratum: (m.number, m.block, m.position) for m in reversed(made)}
    assert first == {f"level={lv},sex={sx}": (0, 0, 1) for lv in ("low", "high") for sx in "fm"}


def test_block_sizes_are_drawn_at_random_from_the_declared_list() -> None:
    ratio = (("a", 1), ("b", 2))
    sizes = Counter(len(block_contents(SEED, f"s1:block::{i}", ratio, (3, 6))) for i in range(2000))

    assert set(sizes) == {3, 6}
    assert chisquare([sizes[3], sizes[6]]).pvalue > ALPHA


def test_the_first_place_of_a_block_follows_the_ratio_so_it_cannot_be_guessed() -> None:
    ratio = (("a", 1), ("b", 2))
    first = Counter(block_contents(SEED, f"s1:block::{i}", ratio, (3, 6))[0] for i in range(3000))

    assert chisquare([first["a"], first["b"]], [1000, 2000]).pvalue > ALPHA


def test_a_block_holds_each_arm_its_ratios_share() -> None:
    contents = block_contents(SEED, "s1:block::0", (("a", 1), ("b", 2)), (6,))

    assert Counter(contents) == {"a": 2, "b": 4}


def test_blocks_log_the_ratio_as_the_probability_and_the_block_as_the_condition() -> None:
    made = run({"method": "blocks", "ratio": {"a": 1, "b": 1}, "block_sizes": [4]}, 4)

    assert all(m.probabilities == {"a": 0.5, "b": 0.5} for m in made)
    assert made[-1].conditional[made[-1].arm] == 1.0 and made[0].conditional == {"a": 0.5, "b": 0.5}


def test_the_same_seed_and_history_give_the_same_allocations() -> None:
    assert run(STRATIFIED, 60) == run(STRATIFIED, 60)


def test_another_seed_gives_another_sequence() -> None:
    other = study_seed("trial", master_key="m" * 32)

    assert [m.arm for m in run(STRATIFIED, 60)] != [m.arm for m in run(STRATIFIED, 60, other)]
