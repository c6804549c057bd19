"""End-to-end acceptance scenarios (reference §10.2) through the real webhook, flow and SDKs."""
