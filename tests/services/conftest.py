"""Fixtures for the services: the console's app (which also serves the API), its staff, and a
participant enrolled through the service itself."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.runtime.routing import intervention_catalogue
from bot.services import enrollment
from bot.store.services import Services
from tests.console.conftest import app, services, signed_in  # noqa: F401  (fixtures)


@pytest.fixture
def enrolled(services: Services) -> Callable[[str], str]:  # noqa: F811  (the fixture above)
    """Enroll a phone through the service; returns the participant's id."""

    def make(phone: str = "+14155552671") -> str:
        done = enrollment.enroll(
            services.store,
            services.settings,
            intervention_catalogue(),
            enrollment.Enrollment(phone=phone),
            source="api",
            actor="test",
        )
        return done.participant_id

    return make
