"""The allocation algorithms, as one pure function: (study, seed, earlier allocations, this
participant's baseline values) -> the arm and everything the `participant.allocated` event
records. Nothing here reads a clock, a file or a database.

Probabilities. `probabilities` is the design probability of each arm for this participant, the
one an analyst uses (inverse-probability weights, randomisation tests): for simple
randomisation and permuted blocks it is the ratio share, since every position of a uniformly
permuted block is each arm with that probability before the sequence is drawn; for
minimisation it is the probability the biased coin really had, given the margins at that
moment. `conditional` is the probability given the earlier allocations of the same block (the
remaining contents over the remaining places): what someone who knew the block would have
predicted; 1 at a block's last place. For simple and minimisation it equals `probabilities`.

Sequences. Stage 1 is one sequence ("s1"); stage 2 is a separate randomisation within each
stage-1 arm ("s2/<arm>"): its blocks, counters and margins only count that arm's participants.
Within a sequence, allocations are numbered from 0 in the order they were made; the caller
must allocate one participant of a study at a time (a serial stream of the study's events).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from bot.studies.format import AllocationMethod, Blocks, Minimisation, Simple, Stratified, Study
from bot.studies.seed import Stream

TIE = 1e-9  # minimisation scores closer than this are equal


@dataclass(frozen=True)
class Prior:
    """An earlier allocation as the algorithms read it (its own baseline values and arm)."""

    arm: str
    baseline: Mapping[str, Any]
    stage: int = 1
    first_arm: str | None = None  # stage 2: the arm the participant had at stage 1


@dataclass(frozen=True)
class Allocation:
    """One allocation: the arm and how it was drawn (module docstring: the probabilities)."""

    arm: str
    method: str
    stage: int
    sequence: str  # "s1", or "s2/<stage-1 arm>"
    number: int  # 0-based, in the order of its sequence
    probabilities: dict[str, float]
    conditional: dict[str, float]
    stratum: str = ""  # "field=value,..." for stratified blocks; "" otherwise
    block: int | None = None  # 0-based block index within the stratum
    block_size: int | None = None
    position: int | None = None  # 1-based place within the block
    scores: dict[str, float] = field(default_factory=dict)  # minimisation: imbalance per arm
    first_arm: str | None = None  # stage 2: the participant's stage-1 arm

    @property
    def block_id(self) -> str | None:
        """The block, named across the study: "<sequence>/<stratum or all>/<index>"."""
        return (
            None if self.block is None else f"{self.sequence}/{self.stratum or 'all'}/{self.block}"
        )


def allocate(
    study: Study,
    seed: bytes,
    history: Sequence[Prior],
    baseline: Mapping[str, Any],
    stage: int = 1,
    first_arm: str | None = None,
) -> Allocation:
    """The arm for a participant with `baseline` values, given every earlier allocation of
    the study in order (`history`). Stage 2 needs the participant's stage-1 arm."""
    method, sequence = _method(study, stage, first_arm)
    if study.stage2 is None:
        earlier = history  # every allocation is a stage-1 one
    else:
        earlier = [
            p for p in history if p.stage == stage and (stage == 1 or p.first_arm == first_arm)
        ]
    if isinstance(method, Simple):
        found = _simple(method, seed, sequence, stage, len(earlier))
    elif isinstance(method, Blocks | Stratified):
        found = _blocks(method, seed, sequence, stage, earlier, baseline)
    else:
        found = _minimise(method, seed, sequence, stage, earlier, baseline)
    return replace(found, first_arm=first_arm if stage == 2 else None)


def stratum_key(method: AllocationMethod, baseline: Mapping[str, Any]) -> str:
    """The participant's stratum: "field=value,..." over the method's strata, "" if none."""
    if not isinstance(method, Stratified):
        return ""
    missing = [name for name in method.strata if baseline.get(name) is None]
    if missing:
        raise ValueError(f"no baseline value for the stratum field(s) {', '.join(missing)}")
    return ",".join(f"{name}={_shown(baseline[name])}" for name in method.strata)


def _method(study: Study, stage: int, first_arm: str | None) -> tuple[AllocationMethod, str]:
    if stage == 1:
        return study.allocation, "s1"
    if stage != 2 or study.stage2 is None:
        raise ValueError(f"the study has no stage {stage}")
    if first_arm is None or first_arm not in study.arms:
        raise ValueError("stage 2 needs the participant's stage-1 arm")
    if first_arm not in (study.stage2.after or study.allocation.ratio):
        raise ValueError(f"stage 2 does not concern the stage-1 arm {first_arm!r}")
    return study.stage2.allocation, f"s2/{first_arm}"


def _shares(ratio: Mapping[str, int]) -> dict[str, float]:
    total = sum(ratio.values())
    return {arm: weight / total for arm, weight in ratio.items()}


def _cumulative(ratio: Mapping[str, int]) -> list[tuple[str, int]]:
    """Each arm with the running total of the ratio up to and including it."""
    running, found = 0, list[tuple[str, int]]()
    for arm, weight in ratio.items():
        running += weight
        found.append((arm, running))
    return found


def _simple(method: Simple, seed: bytes, sequence: str, stage: int, number: int) -> Allocation:
    draw = Stream(seed, f"{sequence}:simple:{number}").below(sum(method.ratio.values()))
    arm = next(arm for arm, upto in _cumulative(method.ratio) if draw < upto)
    shares = _shares(method.ratio)
    return Allocation(arm, "simple", stage, sequence, number, shares, shares)


@lru_cache(maxsize=4096)
def block_contents(
    seed: bytes, label: str, ratio: tuple[tuple[str, int], ...], sizes: tuple[int, ...]
) -> tuple[str, ...]:
    """The arms of one block in order: its size drawn from `sizes`, then each arm ratio-many
    times per ratio sum, shuffled (Fisher-Yates), all from the stream of `label`."""
    stream = Stream(seed, label)
    size = sizes[stream.below(len(sizes))]
    total = sum(weight for _, weight in ratio)
    arms = [arm for arm, weight in ratio for _ in range(weight * size // total)]
    for i in range(len(arms) - 1, 0, -1):
        j = stream.below(i + 1)
        arms[i], arms[j] = arms[j], arms[i]
    return tuple(arms)


def _blocks(
    method: Blocks | Stratified,
    seed: bytes,
    sequence: str,
    stage: int,
    earlier: Sequence[Prior],
    baseline: Mapping[str, Any],
) -> Allocation:
    stratum = stratum_key(method, baseline)
    number = sum(stratum_key(method, p.baseline) == stratum for p in earlier)
    ratio, sizes = tuple(method.ratio.items()), tuple(method.block_sizes)
    index, start = 0, 0
    while True:
        contents = block_contents(seed, f"{sequence}:block:{stratum}:{index}", ratio, sizes)
        if number < start + len(contents):
            break
        index, start = index + 1, start + len(contents)
    place = number - start
    left = contents[place:]
    conditional = {arm: left.count(arm) / len(left) for arm in method.ratio}
    return Allocation(
        contents[place],
        method.method,
        stage,
        sequence,
        number,
        _shares(method.ratio),
        conditional,
        stratum,
        index,
        len(contents),
        place + 1,
    )


def _minimise(
    method: Minimisation,
    seed: bytes,
    sequence: str,
    stage: int,
    earlier: Sequence[Prior],
    baseline: Mapping[str, Any],
) -> Allocation:
    """Pocock-Simon: for each arm, the participant is added to it in thought; on each factor
    the counts at the participant's level, each divided by its arm's ratio, spread by
    max - min; the spreads are summed. The lowest sum is preferred (ties shared)."""
    missing = [name for name in method.factors if baseline.get(name) is None]
    if missing:
        raise ValueError(f"no baseline value for the factor(s) {', '.join(missing)}")
    arms = list(method.ratio)
    counts = {(name, arm): 0 for name in method.factors for arm in arms}
    for prior in earlier:
        for name in method.factors:
            if prior.arm in method.ratio and prior.baseline.get(name) == baseline[name]:
                counts[name, prior.arm] += 1
    scores: dict[str, float] = {}
    for candidate in arms:
        total = 0.0
        for name in method.factors:
            level = [(counts[name, arm] + (arm == candidate)) / method.ratio[arm] for arm in arms]
            total += max(level) - min(level)
        scores[candidate] = total
    low = min(scores.values())
    best = [arm for arm in arms if scores[arm] - low < TIE]
    if len(best) == len(arms):
        probabilities = _shares(method.ratio)
    else:
        rest = len(arms) - len(best)
        probabilities = {
            arm: method.probability / len(best) if arm in best else (1 - method.probability) / rest
            for arm in arms
        }
    draw = Stream(seed, f"{sequence}:min:{len(earlier)}").uniform()
    arm = [candidate for candidate in arms if probabilities[candidate] > 0][-1]
    for candidate in arms:
        if draw < probabilities[candidate]:
            arm = candidate
            break
        draw -= probabilities[candidate]
    return Allocation(
        arm, "minimisation", stage, sequence, len(earlier), probabilities, probabilities,
        scores=scores,
    )  # fmt: skip


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
