"""Interventions as folders of files: the format, its loader and validator, the condition
language (`expressions`, `conditions`), the Mermaid graph, the templates with their completion
slots, each intervention's own settings as the conversation applies them (`settings`), and the
turn the step module runs.

Nothing is imported here. `loader.load_intervention` reads a folder; `validate.validate_folder`
checks one; `runtime.run_turn` decides a turn (pure: the LLM comes in as callables). Tool and
module names are handed in by the caller, never imported.
May import: `bot.conversation`, `bot.channel`, `bot.timers`, `bot.store`, `bot.core`.
"""
