"""How an export or a replay in parts cuts its participants into chunks (bot.store.jobs):
`chunk_shares`, largest first, and `cut`, which places the shares on the participants' rows."""

from __future__ import annotations

import math

import pytest

from bot.store.jobs import EQUAL_CHUNKS, chunk_shares, cut, equal_shares


def _sizes(weights: list[int], shares: list[float]) -> list[int]:
    """The rows in each chunk `cut` makes."""
    ends = [*cut(weights, shares), len(weights) - 1]
    return [end - start for start, end in zip([-1, *ends], ends, strict=False)]


@pytest.mark.parametrize(
    ("processes", "participants", "per_part"),
    [(2, 4000, 200), (2, 400, 200), (3, 5000, 200), (4, 801, 200), (3, 5, 1), (2, 10**6, 200)],
)
def test_each_chunk_is_a_share_of_what_is_left_largest_first(
    processes: int, participants: int, per_part: int
) -> None:
    shares = chunk_shares(processes, participants, per_part)
    least = max(per_part // 2, 1) / participants
    assert math.isclose(sum(shares), 1.0)
    assert len(shares) >= processes  # every process has a chunk to take
    left = 1.0
    for share in shares[:-1]:
        # a 2 x processes-th of what is left, or the least a chunk holds
        assert math.isclose(share, max(left / (2 * processes), least))
        left -= share
    assert least - 1e-9 <= shares[-1] < 2 * least + 1e-9  # what is left: never a sliver
    assert shares[:-1] == sorted(shares[:-1], reverse=True)


def test_the_last_chunks_are_small_so_the_processes_end_together() -> None:
    """4,000 participants of as many events each, 2 processes: a quarter first, then ever
    smaller chunks down to 100 participants (half of 200), not eight equal ones of 500."""
    sizes = _sizes([11] * 4000, chunk_shares(2, 4000, 200))
    assert sizes[0] == 1000 and sizes[1] == 750
    assert sum(sizes) == 4000 and max(sizes[-4:]) <= 101  # a row either way: floats
    assert sizes == sorted(sizes, reverse=True)


def test_equal_shares_cut_rows_of_equal_weight_equally() -> None:
    assert _sizes([3] * 12, [0.25] * 4) == [3, 3, 3, 3]
    assert _sizes([3] * 12, [1.0]) == [12]
    assert cut([5], [0.5, 0.5]) == []  # one row: one chunk


def test_a_heavy_row_makes_its_chunk_larger_and_the_rest_share_what_is_left() -> None:
    """The second row holds 32 of 52 events: it closes the first chunk (its share, a third,
    is 17), and the other four share the 16 left in two chunks of 8, not the 52's thirds."""
    weights = [4, 32, 4, 4, 4, 4]
    assert _sizes(weights, [1 / 3] * 3) == [2, 2, 2]
    assert cut(weights, [1 / 3] * 3) == [1, 3]


def test_no_chunk_is_empty_however_heavy_a_row() -> None:
    weights = [1, 1000, 1, 1]
    sizes = _sizes(weights, [0.25] * 4)
    assert all(size >= 1 for size in sizes) and sum(sizes) == 4
    assert len(sizes) <= 4


def test_a_replays_chunks_are_equal_four_for_each_process_and_never_fewer_than_processes() -> None:
    assert equal_shares(2, 4000, 200) == [1 / (2 * EQUAL_CHUNKS)] * (2 * EQUAL_CHUNKS)
    # at least 100 participants a chunk: 400 participants make 4 chunks, not 8
    assert equal_shares(2, 400, 200) == [0.25] * 4
    assert equal_shares(3, 3, 1) == [1 / 3] * 3
