"""What a process that runs participants' conversations checks before it starts, in one round:
the settings, the supervisor route, the master key, every intervention (with the configured
`INTERVENTION`) and every study, so that an operator sees every problem at once instead of one
kind at a time."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from bot.conversation.supervisors import check_supervisor_route
from bot.core.config import ConfigError, Settings, load_settings
from bot.interventions.validation.catalogue import Catalogue
from bot.runtime.bootstrap import check_master_key
from bot.runtime.routing import check_interventions, check_studies
from bot.studies.catalogue import STUDIES, StudyCatalogue

DEFAULT_INTERVENTION = str(Settings.model_fields["intervention"].default)


def startup_settings(
    catalogue: Catalogue,
    environ: Mapping[str, str] | None = None,
    env_file: str | Path | None = ".env",
    studies: StudyCatalogue | None = None,
) -> Settings:
    """The settings, or ConfigError listing every problem of the settings, the supervisor
    route, the master key, the interventions under `catalogue`'s root and the studies
    (default: those under studies/, read against `catalogue`) together. With
    malformed settings the other checks run on the rest (the malformed ones at their
    defaults) when those validate, and the interventions are checked in any case."""
    try:
        settings = load_settings(environ, env_file)
    except ConfigError as exc:
        problems = list(exc.problems)
        checked = exc.partial
        configured = exc.values.get("INTERVENTION") or DEFAULT_INTERVENTION
    else:
        problems, checked, configured = [], settings, settings.intervention
    if checked is not None:
        seen = checked
        problems += _problems(lambda: check_supervisor_route(seen), problems)
        problems += _problems(lambda: check_master_key(seen), problems)
    configured_settings = Settings.model_validate({"INTERVENTION": configured})
    problems += _problems(lambda: check_interventions(configured_settings, catalogue), problems)
    read = studies or StudyCatalogue(STUDIES, catalogue)
    problems += _problems(lambda: check_studies(read), problems)
    if problems:
        raise ConfigError(problems)
    assert checked is not None  # no problem: the settings validated
    return checked


def _problems(check: Callable[[], None], found: list[str]) -> list[str]:
    """The problems `check` raises that are not in `found` already."""
    try:
        check()
    except ConfigError as exc:
        return [p for p in exc.problems if p not in found]
    return []
