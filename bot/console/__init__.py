"""The researcher console: staff sign-in and roles, participants, alerts, under `/console/`.

Owns: staff accounts and sessions (`accounts`, `guard`, `throttle`, `roles`), CSRF, and the
server-rendered pages (Jinja2 templates and vendored static files in this package). It is
mounted by `bot.web`'s app factory; Flask request objects are allowed here.
May import: `bot.runtime` and every layer below it; never `bot.web`, `bot.cli` or `bot.sandbox`.
"""
