"""The study overview's allocation section: for each study, its participants per arm and per
stratum, at stage 1 and in each stage-2 sequence (the participants of one stage-1 arm
randomised again, SMART designs), and the allocation balance (per stratum, the spread of the
arms' counts divided by their ratio: 0 is exactly on the ratio). Arm names are shown as the
staff member's role may see them (bot.services.blinding): a researcher of a blinded study
sees each stratum's total only (and stage 2 as one table, since a sequence is named by a
stage-1 arm), an admin or statistician the arms' codes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.console import arm_view, study_forms
from bot.console.blueprint import services
from bot.services.blinding import CODED_ROLES, blinded_for, shown_arm
from bot.store.allocations import sequence_counts
from bot.studies.catalogue import StudyCatalogue

ALL = "(all)"


@dataclass
class StudyArms:
    slug: str
    title: str
    method: str
    hidden: bool  # arms not shown to this role: totals only
    arms: list[str] = field(default_factory=list)  # as shown (names or codes)
    strata: list[str] = field(default_factory=list)
    counts: dict[tuple[str, str], int] = field(default_factory=dict)  # (stratum, arm shown)
    totals: dict[str, int] = field(default_factory=dict)  # per stratum
    balance: dict[str, float] = field(default_factory=dict)  # per stratum, and ALL
    stage: int = 1
    after: str | None = None  # stage 2: the stage-1 arm of the sequence, as shown (None: hidden)

    def arm_total(self, arm: str) -> int:
        return sum(n for (_, a), n in self.counts.items() if a == arm)


def overview() -> list[StudyArms]:
    """Every usable study with at least one allocation, as this role may see it: its stage-1
    table, then one per stage-2 sequence with allocations."""
    studies = arm_view.catalogue()
    found = []
    for slug in study_forms.usable(studies):
        study = studies.study(slug)
        with services().store.reading() as conn:
            counted = sequence_counts(conn, slug)
        first = {(s, a): n for (stage, _, s, a), n in counted.items() if stage == 1}
        if not first:
            continue
        title, allocation = str(study.title), study.allocation
        found.append(_table(slug, title, allocation.method, allocation.ratio, first, studies))
        if study.stage2 is None:
            continue
        second = study.stage2.allocation
        sequences = sorted({f for (stage, f, _, _) in counted if stage == 2})
        hidden = blinded_for(arm_view.role(), slug, studies)
        if hidden and arm_view.role() not in CODED_ROLES:
            sequences = [""] if sequences else []  # one table: a sequence names a stage-1 arm
        for sequence in sequences:
            counts: dict[tuple[str, str], int] = {}
            for (stage, f, s, a), n in counted.items():
                if stage == 2 and sequence in ("", f):
                    counts[(s, a)] = counts.get((s, a), 0) + n
            table = _table(slug, title, second.method, second.ratio, counts, studies)
            table.stage = 2
            after = _shown(slug, sequence, studies) if sequence else None
            table.after = after
            found.append(table)
    return found


def _shown(slug: str, arm: str, studies: StudyCatalogue) -> str | None:
    """`arm` as this role sees it: its name, or its code for admins of a blinded study."""
    role, key = arm_view.role(), services().settings.master_key
    shown = shown_arm(role, slug, arm, studies, key)
    if shown is None and role in CODED_ROLES:
        shown = shown_arm("admin", slug, arm, studies, key)
    return shown


def _table(
    slug: str,
    title: str,
    method: str,
    ratio: Mapping[str, int],
    counts: Mapping[tuple[str, str], int],
    studies: StudyCatalogue,
) -> StudyArms:
    """One sequence's counts (stratum, arm) per arm and stratum, with their balance against
    `ratio`, as this role may see them."""
    hidden = blinded_for(arm_view.role(), slug, studies)
    if hidden and arm_view.role() in CODED_ROLES:
        hidden = False  # codes, not names
    table = StudyArms(slug, title, method, hidden)
    table.strata = sorted({s or ALL for s, _ in counts})
    for (stratum, arm), n in counts.items():
        place = stratum or ALL
        table.totals[place] = table.totals.get(place, 0) + n
        if not hidden:
            label = _shown(slug, arm, studies) or "?"
            table.counts[(place, label)] = table.counts.get((place, label), 0) + n
    table.arms = [_shown(slug, a, studies) or "?" for a in ratio] if not hidden else []
    for place in [*table.strata, ALL]:
        per = {
            a: sum(n for (s, b), n in counts.items() if b == a and (place in (ALL, s or ALL)))
            for a in ratio
        }
        shares = [per[a] / ratio[a] for a in ratio]
        table.balance[place] = round(max(shares) - min(shares), 2)
    return table
