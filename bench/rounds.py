"""Alternating rounds: run Tandem and its baselines in turn, report min and median of each."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence


def alternate(cases: Sequence[tuple[str, Callable[[], float]]], rounds: int) -> dict[str, list]:
    """Run every case once per round, in order, `rounds` times; the figures of each case.

    Alternating (A B C A B C ...) rather than running each case to the end spreads the noise of
    a shared machine (other processes, CPU frequency) over every case alike.
    """
    figures: dict[str, list[float]] = {name: [] for name, _ in cases}
    for _ in range(rounds):
        for name, run in cases:
            figures[name].append(run())
    return figures


def summary(values: Sequence[float]) -> tuple[float, float]:
    """(min, median) of a case's figures."""
    return min(values), statistics.median(values)


def best(values: Sequence[float]) -> tuple[float, float]:
    """(max, median) of rates, where more is better."""
    return max(values), statistics.median(values)
