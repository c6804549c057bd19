"""How an export shows the arms of blinded studies (docs/studies.md, "Blinding"), by who runs
it: each arm as its code (`codes`: admins, statisticians, `tandem export`), or no arm at all
(`omit`: researchers), for the participants of a study that is not known to be open. A
participant of a blinded study also has their intervention blanked (it would name the arm).

Only the cells that name an arm change: `arm`, a stage-2 `sequence` (`s2/<stage-1 arm>`),
`p_<arm>` and `conditional_p_<arm>` (renamed to the code), and in events.csv the payloads of
`participant.allocated`, `participant.enrolled` and `participant.updated`. With `omit`, the
`arm` columns are left out and the files made of arms (allocations, events) are not written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any, Literal

from bot.store.events import participant_of

ARM_FILES = ("allocations", "events")  # files made of arms: not written when arms are omitted
PER_ARM = ("p_", "conditional_p_")
NAMING_EVENTS = ("participant.allocated", "participant.enrolled", "participant.updated")
Shown = Literal["names", "codes", "omitted"]


@dataclass(frozen=True)
class ArmMask:
    """`open_studies`: studies whose arms are shown by name (not blinded); every other study's
    participants are masked. `codes[study][arm]`: the arm's code (bot.studies.blinding); an
    arm without one is blank, never its name. `hidden`: each masked participant's study (read
    by the export from its snapshot: `with_participants`). A per-arm column (`p_<arm>`) is an
    arm's only if the arm is one of a masked study's (decisions.csv's `p_<option>` are not)."""

    open_studies: frozenset[str] = frozenset()
    open_arms: frozenset[str] = frozenset()  # the arms of the open studies (their p_ columns)
    codes: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    omit: bool = False
    masking: bool = True  # False: names everywhere (`tandem export --unblinded`)
    hidden: Mapping[str, str] = field(default_factory=dict)

    @property
    def shown(self) -> Shown:
        """What the export's rows carry for a blinded study's arm (recorded with it)."""
        if not self.masking:
            return "names"
        return "omitted" if self.omit else "codes"

    def masks(self, study: str | None) -> bool:
        return self.masking and bool(study) and study not in self.open_studies

    def with_participants(self, rows: Iterable[tuple[str, str | None]]) -> ArmMask:
        """The mask knowing each participant's study (`rows`: participant id, study)."""
        hidden = {pid: str(study) for pid, study in rows if self.masks(study)}
        return replace(self, hidden=hidden)

    def writes(self, name: str) -> bool:
        """Whether the file is written at all (an arm file is not, when arms are omitted)."""
        return not (self.masking and self.omit and name in ARM_FILES and self.hidden)

    def columns(self, columns: Sequence[str]) -> tuple[str, ...]:
        """A file's columns: without `arm` when arms are omitted; per-arm probabilities of a
        masked study's arms named by their codes."""
        if not self.masking or not self.hidden:
            return tuple(columns)
        found: list[str] = []
        for column in columns:
            if column == "arm" and self.omit:
                continue
            prefix, arm = _per_arm(column)
            coded = [c[arm] for _, c in sorted(self.codes.items()) if arm in c] if prefix else []
            if not self.omit:
                found += [prefix + code for code in coded if prefix + code not in found]
            if not coded or arm in self.open_arms:
                found.append(column)
        return tuple(found)

    def record(self, record: dict[str, Any]) -> dict[str, Any]:
        """A row of any file, its arm cells masked if its participant's study is."""
        study = self.hidden.get(str(record.get("participant_id") or ""))
        if study is None:
            return record
        known = self.codes.get(study, {})
        codes = {} if self.omit else known
        masked: dict[str, Any] = {}
        for key, value in record.items():
            prefix, arm = _per_arm(key)
            if prefix and arm in known:
                if arm in codes:
                    masked[prefix + codes[arm]] = value
                continue
            masked[key] = value
        if "arm" in masked:
            masked["arm"] = codes.get(str(masked["arm"])) if masked["arm"] else None
        if str(masked.get("sequence") or "").startswith("s2/"):
            masked["sequence"] = "s2/" + (codes.get(masked["sequence"][3:]) or "")
        if "intervention" in masked:
            masked["intervention"] = None
        return masked

    def event(self, raw: Any) -> Any:
        """An events row (as the export reads it) with what names a masked arm replaced."""
        if raw.event_type == "broadcast.created" and type(raw.data) is dict:
            return self._broadcast(raw)
        pid = participant_of(str(raw.stream_id))
        study = self.hidden.get(pid or "")
        if study is None or raw.event_type not in NAMING_EVENTS or type(raw.data) is not dict:
            return raw
        codes = self.codes.get(study, {})
        data = dict(raw.data)
        if raw.event_type == "participant.allocated":
            for key in ("arm", "first_arm"):
                if data.get(key):
                    data[key] = codes.get(str(data[key]))
            if str(data.get("sequence") or "").startswith("s2/"):
                data["sequence"] = "s2/" + (codes.get(data["sequence"][3:]) or "")
            for key in ("probabilities", "conditional", "scores"):
                if isinstance(data.get(key), dict):
                    data[key] = {codes[a]: p for a, p in data[key].items() if a in codes}
        elif raw.event_type == "participant.enrolled" and "intervention" in data:
            data["intervention"] = None
        elif isinstance(data.get("changes"), dict) and "intervention" in data["changes"]:
            data["changes"] = {**data["changes"], "intervention": None}
        return _with_data(raw, data)

    def _broadcast(self, raw: Any) -> Any:
        """A broadcast's filter names an arm: its code if its study is masked (the recipients
        would otherwise be known to be in that arm); blank if it names no study and the arm
        is a masked study's."""
        given = raw.data.get("filter")
        if not self.masking or not isinstance(given, dict) or not given.get("arm"):
            return raw
        study, arm = given.get("study"), str(given["arm"])
        if study and self.masks(study):
            shown = self.codes.get(str(study), {}).get(arm)
        elif not study and any(arm in codes for codes in self.codes.values()):
            shown = None
        else:
            return raw
        return _with_data(raw, {**raw.data, "filter": {**given, "arm": shown}})


NAMES = ArmMask(masking=False)  # every arm by its name
# What an events row (bot.reporting.export.event_values) is read for, but its payload.
RAW_FIELDS = (
    "seq",
    "event_id",
    "stream_id",
    "stream_version",
    "event_type",
    "schema_version",
    "occurred_at",
    "recorded_at",
    "idempotency_key",
    "meta",
)


def _with_data(raw: Any, data: dict[str, Any]) -> Any:
    return SimpleNamespace(**{n: getattr(raw, n) for n in RAW_FIELDS}, data=data)


def _per_arm(column: str) -> tuple[str, str]:
    """(`conditional_p_` or `p_`, the arm) of a per-arm probability column; ("", "") if not."""
    for prefix in sorted(PER_ARM, key=len, reverse=True):
        if column.startswith(prefix):
            return prefix, column.removeprefix(prefix)
    return "", ""
