"""The acts a person or a process takes (enroll, withdraw, take over, ...), one module each.

Every entry point (the API, the console, the CLI, the sandbox) calls these functions and only
translates a request into a call and a result or a `Refused` into its own response, so that an
act has one set of rules wherever it is asked for. A service may import bot.reporting,
bot.studies, bot.instruments, bot.analysis, bot.interventions, bot.conversation, bot.channel,
bot.timers, bot.keys, bot.store and bot.core; nothing below it imports it.
"""
