"""Small studies for the allocation tests, built from plain data like a study.yaml."""

from __future__ import annotations

import random
from typing import Any

from bot.studies.format import Study

LEVELS = {"level": ["low", "high"], "sex": ["f", "m"], "age": ["young", "mid", "old"]}
BASELINE = {name: {"type": "choice", "options": options} for name, options in LEVELS.items()}


def study(allocation: dict[str, Any], stage2: dict[str, Any] | None = None) -> Study:
    """A study of arms `a`, `b` (and `c`, `d` for stage 2) with the baseline fields LEVELS."""
    arms = {name: {"intervention": "demo"} for name in ("a", "b", "c", "d")}
    data: dict[str, Any] = {"title": "T", "baseline": BASELINE, "arms": arms}
    return Study.model_validate({**data, "allocation": allocation, "stage2": stage2})


def participants(n: int, seed: int) -> list[dict[str, str]]:
    """`n` participants' baseline values, each level equally likely (a seeded draw)."""
    draw = random.Random(seed)
    return [{name: draw.choice(options) for name, options in LEVELS.items()} for _ in range(n)]
