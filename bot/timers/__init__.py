"""Durable timers: kinds and their policies, the firing decision, handlers, schedules.

The package is pure except `firing` (one short transaction per timer); APScheduler lives only in
`bot/scheduler.py`. Nothing is imported here so that `bot.config` can use `kinds` cheaply.
"""
