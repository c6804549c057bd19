"""The services of the app that is handling the current request."""

from __future__ import annotations

from flask import current_app

from bot.interventions.validation.catalogue import Catalogue
from bot.store.services import Services
from bot.studies.catalogue import StudyCatalogue


def services() -> Services:
    """The services of the app handling the current request."""
    return current_app.extensions["tandem"]


def interventions() -> Catalogue:
    """The interventions participants of this app may be enrolled in."""
    return current_app.extensions["tandem.interventions"]


def studies() -> StudyCatalogue:
    """The studies participants of this app may be enrolled in (studies/)."""
    return current_app.extensions["tandem.studies"]
