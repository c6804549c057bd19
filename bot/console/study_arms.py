"""The study overview's allocation section: for each study, its participants per arm and per
stratum (stage 1), and the allocation balance (per stratum, the spread of the arms' counts
divided by their ratio: 0 is exactly on the ratio). Arm names are shown as the staff member's
role may see them (bot.services.blinding): a researcher of a blinded study sees each
stratum's total only, an admin or statistician the arms'
codes."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.console import arm_view, study_forms
from bot.console.blueprint import services
from bot.services.blinding import CODED_ROLES, blinded_for, shown_arm
from bot.store.allocations import arm_counts

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

    def arm_total(self, arm: str) -> int:
        return sum(n for (_, a), n in self.counts.items() if a == arm)


def overview() -> list[StudyArms]:
    """Every usable study with at least one allocation, as this role may see it."""
    studies = arm_view.catalogue()
    key = services().settings.master_key
    found = []
    for slug in study_forms.usable(studies):
        study = studies.study(slug)
        with services().store.reading() as conn:
            counts = {
                (s, a): n for (stage, s, a), n in arm_counts(conn, slug).items() if stage == 1
            }
        if not counts:
            continue
        ratio = study.allocation.ratio
        hidden = blinded_for(arm_view.role(), slug, studies)
        table = StudyArms(slug, str(study.title), study.allocation.method, hidden)
        table.strata = sorted({s or ALL for s, _ in counts})
        for (stratum, arm), n in counts.items():
            place = stratum or ALL
            table.totals[place] = table.totals.get(place, 0) + n
            if not hidden:
                label = shown_arm(arm_view.role(), slug, arm, studies, key) or arm
                table.counts[(place, label)] = table.counts.get((place, label), 0) + n
        if hidden and arm_view.role() in CODED_ROLES:
            table.hidden = False
            for (stratum, arm), n in counts.items():
                label = shown_arm("admin", slug, arm, studies, key) or "?"
                place = stratum or ALL
                table.counts[(place, label)] = table.counts.get((place, label), 0) + n
        labels = {a: shown_arm(arm_view.role(), slug, a, studies, key) or a for a in ratio}
        table.arms = [labels[a] for a in ratio] if not table.hidden else []
        for place in [*table.strata, ALL]:
            per = {
                a: sum(n for (s, b), n in counts.items() if b == a and (place in (ALL, s or ALL)))
                for a in ratio
            }
            shares = [per[a] / ratio[a] for a in ratio]
            table.balance[place] = round(max(shares) - min(shares), 2)
        found.append(table)
    return found
