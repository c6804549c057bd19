"""Studies: the study language (studies/<slug>/study.yaml: arms, baseline fields, allocation,
an optional second stage) and concealed, auditable allocation, as pure code.

Owns: `format` (the pydantic models), `loader` and `checks` (reading and validating a study at
file:line), `schema` (its JSON Schema), `seed` (the secret seed and its streams), `allocation`
(the algorithms: one pure function), `stage2` (who is re-randomised), `baseline` (enrollment
values checked) and `audit` (every allocation recomputed). Events, storage and entry points
wire it in from above.
May import: `bot.interventions` (format, problems, types, expressions, conditions) and
`bot.core`.
"""
