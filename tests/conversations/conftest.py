"""The golden conversations run through the scenario harness (tests/scenarios/fixtures.py)."""

from tests.scenarios.fixtures import h, llm, make_harness, twilio  # noqa: F401
