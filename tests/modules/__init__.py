"""Tests of the conversation modules and their prompts."""
