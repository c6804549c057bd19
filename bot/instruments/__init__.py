"""Questionnaires ("instruments"): their definitions (`instruments/<name>.yaml`), scoring and
answer parsing. This package owns the format (`format`), reading and checking the files
(`loader`, `checks`, `yaml_text`, `wording`), scoring (`scoring`), the messages an
administration sends (`asking`), reading SMS replies (`parsing`) and the typed result of one
administration with its export row (`result`), and the adapter an intervention administers
its instruments through in a conversation (`administration`: the events of each reply).

It is pure but for the loader reading the author's files: no clock, no storage, no SDK.
May import: `bot.interventions` (format, problems, types, the instrument port), the event
types of `bot.store` and `bot.core`.
"""
