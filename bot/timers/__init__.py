"""Durable timers: kinds and their policies, the firing decision, schedules, what a status
change does to pending timers (`lifecycle`), leadership and the scheduler.

The package is pure except `firing` (one short transaction per timer), `leadership` and
`scheduler` (the only APScheduler import; run by the elected leader only). What a fired timer
does in a conversation is `bot.conversation.timer_turns`. Nothing is imported here.
May import: `bot.store`, `bot.core`.
"""
