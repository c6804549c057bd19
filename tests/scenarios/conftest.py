"""The scenario harness's fixtures (tests/scenarios/fixtures.py)."""

from tests.scenarios.fixtures import h, llm, make_harness, twilio  # noqa: F401
