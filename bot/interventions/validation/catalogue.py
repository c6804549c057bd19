"""The interventions a deployment offers: every folder under its root, validated once, so that
a slug that names no intervention, or one that does not validate, is refused where it is named
(the API, `INTERVENTION`, `tandem chat`) instead of reaching a participant."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from bot.interventions.language.loader import CONFIG, read_intervention
from bot.interventions.language.problems import Problem, errors
from bot.interventions.validation.needs import needs_of
from bot.interventions.validation.validate import Attach, validate_folder

# Validating takes a moment; a folder is validated again only when one of its files changes.
_VALIDATED: dict[tuple[Path, tuple[tuple[str, int, int], ...]], list[Problem]] = {}
_NEEDS: dict[tuple[Path, tuple[tuple[str, int, int], ...]], dict[str, list[str]]] = {}
_TEMPLATES: dict[tuple[Path, tuple[tuple[str, int, int], ...]], str | None] = {}
_QUIET: dict[tuple[Path, tuple[tuple[str, int, int], ...]], str | None] = {}


@dataclass(frozen=True)
class Catalogue:
    """The interventions under `root`; tool and module names are handed in by the composition
    root (bot.runtime.routing), which owns their registries."""

    root: Path
    tools: Collection[str] | None = None
    modules: Collection[str] | None = field(default=None)
    attach: Attach | None = None  # bot.instruments.administration.attach

    def slugs(self) -> list[str]:
        """Every folder under the root that holds an intervention.yaml."""
        if not self.root.is_dir():
            return []
        return sorted(p.parent.name for p in self.root.glob(f"*/{CONFIG}"))

    def problems(self, slug: str) -> list[Problem]:
        """Why `slug` cannot be used (nothing: it exists and validates)."""
        if slug not in self.slugs():
            known = ", ".join(self.valid()) or "none"
            return [Problem(str(self.root / slug), None, f"no such intervention; known: {known}")]
        folder = self.root / slug
        key = (folder.resolve(), _stamp(folder))
        if key not in _VALIDATED:  # warnings are the author's to read, not a reason to refuse
            found = validate_folder(folder, self.tools, self.modules, self.attach)
            _VALIDATED[key] = errors(found)
        return _VALIDATED[key]

    def needs(self, slug: str) -> dict[str, list[str]]:
        """What `slug` needs from the deployment, and why (bot.interventions.validation.needs);
        nothing for a slug that does not load."""
        folder = self.root / slug
        if slug not in self.slugs():
            return {}
        key = (folder.resolve(), _stamp(folder))
        if key not in _NEEDS:
            intervention, _ = read_intervention(folder)
            _NEEDS[key] = needs_of(intervention) if intervention is not None else {}
        return _NEEDS[key]

    def whatsapp_template(self, slug: str) -> str | None:
        """The approved template `slug` greets WhatsApp participants with (`whatsapp_template`
        in its intervention.yaml), if it names one."""
        folder = self.root / slug
        if slug not in self.slugs():
            return None
        key = (folder.resolve(), _stamp(folder))
        if key not in _TEMPLATES:
            intervention, _ = read_intervention(folder)
            _TEMPLATES[key] = intervention.config.whatsapp_template if intervention else None
        return _TEMPLATES[key]

    def quiet_hours(self, slug: str) -> str | None:
        """`slug`'s own `quiet_hours` as written ("22:00-08:00"; None: QUIET_HOURS applies)."""
        folder = self.root / slug
        if slug not in self.slugs():
            return None
        key = (folder.resolve(), _stamp(folder))
        if key not in _QUIET:
            intervention, _ = read_intervention(folder)
            _QUIET[key] = (intervention.config.quiet_hours or None) if intervention else None
        return _QUIET[key]

    def valid(self) -> list[str]:
        """The slugs that can be used."""
        return [slug for slug in self.slugs() if not self.problems(slug)]

    def refusal(self, slug: str) -> str | None:
        """A one-line reason to refuse `slug`, naming the usable slugs (None: it is usable)."""
        problems = self.problems(slug)
        if not problems:
            return None
        known = ", ".join(self.valid()) or "none"
        if slug not in self.slugs():
            return f"no intervention {slug!r}; known: {known}"
        return (
            f"intervention {slug!r} does not validate ({len(problems)} problem(s), first: "
            f"{problems[0]}); usable: {known}"
        )

    def startup_problems(self, configured: str) -> list[Problem]:
        """Every problem of every intervention under the root and of the configured default:
        a process does not start with any."""
        found = [p for slug in self.slugs() for p in self.problems(slug)]
        if configured not in self.slugs():
            found += self.problems(configured)
        return found


def _stamp(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """Each file's path, size and modification time: changes when a file does."""
    return tuple(
        (str(p), p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    )
