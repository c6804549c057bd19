"""The intervention interpreter: running a loaded intervention over a participant's state.
`turn.run_turn` decides one turn of the step module (pure: the LLM comes in as callables), from
`context` (the names conditions see), `conditions`, `actions`, `moves`, `forms` and
`extraction`, `judging`, `retrieval`, `completion`, `answers`, `questions` and `failures`;
`decision_draws` draws a decision point's option; `applied.AppliedByIntervention` is what the
conversation applies to each intervention's participants, read from its configuration.

The middle layer of bot.interventions: it imports the language, never the validator.
May import: `bot.interventions.language`, `bot.conversation`, `bot.channel`, `bot.timers`,
`bot.store`, `bot.core`.
"""
