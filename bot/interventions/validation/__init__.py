"""The validator: everything wrong with an intervention folder, said for its author as
`file:line: message`. `validate.validate_folder` checks one (with `validate_config`,
`validate_forms`, `validate_libraries`, `references` for the names in conditions and the targets
of actions, and `samples`, which renders each template over a sample context);
`decisions_check` checks decision points; `catalogue` lists the usable interventions.

The top layer of bot.interventions: it dry-runs parts of an intervention through the
interpreter (conditions compiled, samples rendered, forms extracted), so it sits above both the
interpreter and the language, and neither imports it.
May import: `bot.interventions.interpreter`, `bot.interventions.language`, `bot.conversation`,
`bot.channel`, `bot.timers`, `bot.store`, `bot.core`.
"""
