"""Questionnaires ("instruments"): their definitions (`instruments/<name>.yaml`), scoring and
answer parsing. This package owns the format (`format`), reading and checking the files
(`loader`, `checks`, `yaml_text`, `wording`), scoring (`scoring`), the messages an
administration sends (`asking`), reading SMS replies (`parsing`) and the typed result of one
administration with its export row (`result`).

It is pure but for the loader reading the author's files: no clock, no storage, no SDK.
The conversation that asks the items, the events and the export file are wired elsewhere.
May import: `bot.interventions` (format, problems, types) and `bot.core`.
"""
