"""Studies: the study language (studies/<slug>/study.yaml: arms, baseline fields, allocation,
an optional second stage) and concealed, auditable allocation, as pure code.

It owns the format, the loader, the allocation algorithms, the seed and its streams, and the
audit that regenerates every allocation. It may import `bot.interventions` (format, problems,
types, expressions) and `bot.core`; events, storage and entry points wire it in from above.
"""
