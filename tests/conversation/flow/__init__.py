"""Tests of the conversation flow."""
