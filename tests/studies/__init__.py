"""Tests of bot.studies."""
