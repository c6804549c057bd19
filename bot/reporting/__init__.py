"""Reporting: what a researcher reads and analyses, made from the events — the export
(`export`: every file of `tandem export`, written by `cells`, events.csv put in order by
`merge`), the analysis tables folded from a participant's events (`results`, `form_results`,
`messages`; participants' lifecycle and allocations: `lifecycle`), the transcript staff read
(`transcript`), a pseudonymised export's redaction of free text (`redact`), and the codebook
that describes every exported variable and column (`codebook`, with `columns`).

Nothing here writes an event but the record of an export itself; every row is rebuilt from the
event table on each run.
May import: `bot.interventions`, `bot.conversation`, `bot.channel`, `bot.timers`, `bot.keys`,
`bot.store`, `bot.core`.
"""
