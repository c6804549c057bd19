"""The scenario harness's fixtures (tests/scenarios/fixtures.py), to run decision points."""

from tests.scenarios.fixtures import llm, make_harness, twilio  # noqa: F401
