"""The web entry point: the researcher API, the Twilio webhooks, `/health` and the console.

Owns: the app factory (`app.create_app`, re-exported here as the WSGI factory
`bot.web:create_app()` that the Procfile names), request authentication, the API's models and
handlers. Flask request objects live only here (and in the console).
May import: every `bot` package below the entry points (the console, which it mounts under
`/console/`, included); never `bot.cli` or `bot.sandbox`.
"""

from bot.web.app import create_app

__all__ = ["create_app"]
