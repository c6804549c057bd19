"""The study part of checking an enrollment: the study named exists and validates, its seed
can be derived, and the baseline values are those its fields declare, of their types."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.core.config import Settings
from bot.studies.baseline import field_problems, read_text
from bot.studies.catalogue import StudyCatalogue
from bot.studies.format import Study
from bot.studies.seed import study_seed

NO_STUDIES = "no studies are available here"


def joined(
    given: Mapping[str, Any],
    as_text: bool,
    slug: str | None,
    settings: Settings,
    studies: StudyCatalogue | None,
    problems: dict[str, str],
) -> tuple[Study | None, bytes, dict[str, Any]]:
    """The study joined (None: none), its seed and the baseline values read (`as_text`: from
    text, by each field's type); what is wrong goes into `problems` (`study`,
    `baseline.<field>` in the study's order, `baseline` when given without a study)."""
    if slug is None:
        if any(str(v).strip() for v in given.values() if v is not None):
            problems["baseline"] = "baseline values go with a study: name the study"
        return None, b"", {}
    refusal = NO_STUDIES if studies is None else studies.refusal(slug)
    if refusal is not None or studies is None:
        problems["study"] = refusal or NO_STUDIES
        return None, b"", {}
    design = studies.study(slug)
    unreadable: dict[str, str] = {}
    if as_text:
        values, unreadable = read_text(design, {k: str(v or "") for k, v in given.items()})
    else:
        values = {k: v for k, v in given.items() if v is not None}
    wrong = field_problems(design, values) | unreadable
    for name in [*design.baseline, *(n for n in wrong if n not in design.baseline)]:
        if name in wrong:
            problems[f"baseline.{name}"] = wrong[name]
    try:
        seed = study_seed(slug, settings.master_key)
    except ValueError as exc:
        problems.setdefault("study", str(exc))
        seed = b""
    return design, seed, values
