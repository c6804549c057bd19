"""The daily habit cycle: the habit prompt timer (`prompt.register`) and answers to its
questions (`replies.on_reply`). See docs/daily_cycle.md.

May import: the rest of `bot.conversation` below the flow, `bot.channel`, `bot.timers`,
`bot.store`, `bot.core`. The tools it runs (the habit prompt generator, the scheduler) are
handed to `register` by the composition root.
"""
