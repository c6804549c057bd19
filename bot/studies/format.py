"""The study format as pydantic models: study.yaml, its arms, its allocation methods and the
optional second stage. docs/studies.md explains every key; cross-checks live in checks.py."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from bot.interventions.language.format import Duration, FieldSpec, Strict, Text

ArmValue = str | int | float | bool
Ratio = dict[str, Annotated[int, Field(ge=1)]]
METHODS = ("simple", "blocks", "stratified", "minimisation")


class Arm(Strict):
    """What participants allocated to the arm get: an intervention, and values of the study's
    declared variables that the intervention reads as `arm.<name>`."""

    intervention: str
    description: str | None = None
    variables: dict[str, ArmValue | list[str]] = {}


class Simple(Strict):
    """Each participant independently, with probability proportional to the arm's ratio."""

    method: Literal["simple"]
    ratio: Ratio


class Blocks(Strict):
    """Permuted blocks, each of a size drawn at random from `block_sizes`."""

    method: Literal["blocks"]
    ratio: Ratio
    block_sizes: list[Annotated[int, Field(ge=1)]] = Field(min_length=1)


class Stratified(Strict):
    """Permuted blocks, one sequence per stratum (each combination of the `strata` fields)."""

    method: Literal["stratified"]
    ratio: Ratio
    block_sizes: list[Annotated[int, Field(ge=1)]] = Field(min_length=1)
    strata: list[str] = Field(min_length=1)


class Minimisation(Strict):
    """Pocock-Simon minimisation over `factors`: the arm that least unbalances the factors'
    margins is taken with `probability`, another arm otherwise."""

    method: Literal["minimisation"]
    ratio: Ratio
    factors: list[str] = Field(min_length=1)
    probability: float = 0.8

    @field_validator("probability")
    @classmethod
    def _above_half(cls, value: float) -> float:
        if not 0.5 < value <= 1:
            raise ValueError(
                f"the probability of the preferred arm must be above 0.5 and at most 1, not "
                f"{value:g} (0.5 would be simple randomisation)"
            )
        return value


AllocationMethod = Annotated[
    Simple | Blocks | Stratified | Minimisation, Field(discriminator="method")
]


class Trigger(Strict):
    """When stage 2 happens: on entering a step of the stage-1 arm's intervention (a
    transition), or a time after the stage-1 allocation (a timer)."""

    step: str | None = None
    after: Duration | None = None

    @field_validator("step")
    @classmethod
    def _named(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("name the step whose entry starts stage 2")
        return value

    @model_validator(mode="after")
    def _one(self) -> Trigger:
        if (self.step is None) == (self.after is None):
            raise ValueError("stage 2 starts either at a `step` or `after` a time, one of them")
        return self


class Stage2(Strict):
    """Re-randomisation (SMART designs): at `at`, participants of the `after` arms for whom
    `when` holds are randomised again among the arms of `allocation.ratio`."""

    at: Trigger
    when: str
    after: list[str] | None = None  # the stage-1 arms concerned (default: all of them)
    allocation: AllocationMethod


class Study(Strict):
    """study.yaml."""

    title: Text
    version: Text = "1"
    description: str | None = None
    blinded: bool = False
    baseline: dict[str, FieldSpec] = {}
    variables: dict[str, FieldSpec] = {}
    arms: dict[str, Arm]
    allocation: AllocationMethod
    stage2: Stage2 | None = None
