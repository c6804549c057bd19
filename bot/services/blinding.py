"""What each role is shown of a participant's arm (docs/studies.md, "Blinding"): in a study
that is not blinded, everyone but a supervisor sees the arm; in a `blinded: true` study a
researcher (and the API) sees no arm and no intervention, an admin sees the arm's code (see
bot.studies.blinding), and only an unblinding (an admin act, recorded) shows the arm itself.
Supervisors never see arms."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.reporting.arm_mask import NAMES, ArmMask
from bot.studies.blinding import arm_code
from bot.studies.catalogue import StudyCatalogue
from bot.studies.seed import study_seed

API_ROLE = "researcher"  # an API token acts as a researcher
CODED_ROLES = ("admin", "statistician")  # shown a blinded study's arm codes
NO_ARMS_ROLES = ("supervisor",)


def blinded_for(role: str | None, study: str | None, studies: StudyCatalogue | None) -> bool:
    """Whether `role` may not see arm names of `study` (a study that cannot be read counts
    as blinded: too little shown rather than too much)."""
    if not study:
        return False
    if role in NO_ARMS_ROLES or role is None:
        return True
    return studies is None or studies.blinded(study)


def shown_arm(
    role: str | None,
    study: str | None,
    arm: str | None,
    studies: StudyCatalogue | None,
    master_key: str | None,
) -> str | None:
    """The arm as `role` is shown it: its name, its code (admins, blinded study) or None."""
    if not study or not arm:
        return arm
    if not blinded_for(role, study, studies):
        return arm
    if role in CODED_ROLES and master_key:
        return arm_code(study_seed(study, master_key), arm)
    return None


def shown_row(
    row: Mapping[str, Any],
    role: str | None,
    studies: StudyCatalogue | None,
    master_key: str | None,
) -> dict[str, Any]:
    """A participants row as `role` may see it: the arm shown (above) and, where the arm is
    hidden, the intervention too (it would name the arm)."""
    study, arm = row.get("study"), row.get("arm")
    if not study or not blinded_for(role, study, studies):
        return dict(row)
    return {
        **row,
        "arm": shown_arm(role, study, arm, studies, master_key),
        "intervention": None,
    }


def export_arms(
    role: str | None,
    studies: StudyCatalogue | None,
    master_key: str | None,
    *,
    unblinded: bool = False,
) -> ArmMask:
    """How an export by `role` shows the arms (bot.reporting.arm_mask): a blinded study's arms
    as codes for admins, statisticians and the operator (`tandem export`, role None), or not
    at all for researchers; `unblinded` (the operator's `--unblinded`): names everywhere. A
    study that cannot be read is treated as blinded, its arms without codes (blank)."""
    if unblinded:
        return NAMES
    open_studies: set[str] = set()
    open_arms: set[str] = set()
    codes: dict[str, dict[str, str]] = {}
    for slug in studies.slugs() if studies is not None else []:
        if studies is not None and studies.refusal(slug) is None and not studies.blinded(slug):
            open_studies.add(slug)
            open_arms |= set(studies.study(slug).arms)
        elif studies is not None and studies.refusal(slug) is None and master_key:
            seed = study_seed(slug, master_key)
            codes[slug] = {arm: arm_code(seed, arm) for arm in studies.study(slug).arms}
    omit = role not in (*CODED_ROLES, None)
    return ArmMask(frozenset(open_studies), frozenset(open_arms), codes, omit=omit)


def hidden_interventions(role: str | None, studies: StudyCatalogue | None) -> set[str]:
    """The interventions the arms of studies blinded for `role` run: a filter or a count by
    one of them would sort participants by arm."""
    hidden: set[str] = set()
    if studies is None:
        return hidden
    for slug in studies.slugs():
        if studies.refusal(slug) is None and blinded_for(role, slug, studies):
            hidden |= {arm.intervention for arm in studies.study(slug).arms.values()}
    return hidden


@dataclass(frozen=True)
class Viewer:
    """Who asks, for acts that must not sort participants by a blinded arm (broadcasts):
    `role` None is the operator or the system itself (`tandem broadcast`, a study's declared
    broadcasts), who may target arms."""

    role: str | None
    studies: StudyCatalogue | None
    master_key: str | None = None

    def conceals(self, study: str | None, arm: str | None = None) -> bool:
        """Whether the role may not see `study`'s arms; with no study, whether `arm` is an arm
        of some study blinded for the role."""
        if self.role is None:
            return False
        if study:
            return blinded_for(self.role, study, self.studies)
        studies = self.studies
        if studies is None:
            return bool(arm)
        return any(
            studies.refusal(slug) is None
            and arm in studies.study(slug).arms
            and blinded_for(self.role, slug, studies)
            for slug in studies.slugs()
        )


def concealed_filter(viewer: Viewer, filter: Mapping[str, Any]) -> str | None:
    """Why `viewer` may not target this audience (an arm, or an arm's intervention, of a
    study blinded for their role), or None."""
    if viewer.role is None:
        return None
    study, arm, intervention = filter.get("study"), filter.get("arm"), filter.get("intervention")
    if arm and viewer.conceals(study, arm):
        where = f"study {study}" if study else "a study"
        return (
            f"the arms of {where} are concealed from your role ({viewer.role}): an admin can "
            "send to an arm from `tandem broadcast`, or the study can declare the broadcast"
        )
    if intervention and intervention in hidden_interventions(viewer.role, viewer.studies):
        return (
            f"{intervention} is run by an arm of a study blinded for your role ({viewer.role}):"
            " a broadcast to it would sort participants by arm"
        )
    return None


def shown_filter(viewer: Viewer, filter: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A broadcast's filter as `viewer` may see it: a blinded study's arm as its code (admins,
    statisticians) or hidden, and an arm's intervention hidden."""
    if filter is None or viewer.role is None:
        return dict(filter) if filter is not None else None
    shown = dict(filter)
    study = shown.get("study")
    if shown.get("arm") and viewer.conceals(study, shown["arm"]):
        code = shown_arm(viewer.role, study, shown["arm"], viewer.studies, viewer.master_key)
        code = code if study else None
        shown["arm"] = code or "(blinded)"
    if shown.get("intervention") in hidden_interventions(viewer.role, viewer.studies):
        shown["intervention"] = "(blinded)"
    return shown
