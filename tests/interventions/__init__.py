"""Tests of interventions: the format, loader, validator, templates, completion and graph."""
