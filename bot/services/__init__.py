"""Services: one module per act a person or a process takes (enroll, allocate, withdraw,
erase, take over, acknowledge, export, audit a study), each a plain function over the store's
ports, used by every entry point (API, console, CLI, sandbox), which only translate requests to
calls and results to responses.
May import: `bot.reporting`, `bot.studies`, `bot.instruments`, `bot.analysis`,
`bot.interventions`, `bot.conversation`, `bot.channel`, `bot.timers`, `bot.keys`, `bot.store`,
`bot.core`.
"""
