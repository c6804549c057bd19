"""Conversation modules: intake, step and feedback, one file each."""
