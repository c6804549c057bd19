"""The intervention language: what an intervention is, read from its folder and typed, with
nothing run and nothing checked beyond the format. `format` (the pydantic models of the files;
`Configuration` is intervention.yaml), `loader.load_intervention`/`read_intervention`,
`problems` (`Problem`, `InterventionError`, `unknown` names said with a "did you mean"),
`intervention.Intervention`, `templates`, `libraries`, `results`, `expressions` (the condition
language, compiled and allow-listed), `types` and `typecheck`, `schema` (JSON Schema for
editors), `graph` and `module_graph` (Mermaid), `decisions_format` (decision points).

The bottom layer of bot.interventions: the interpreter and the validator build on it, and it
never imports them.
May import: `bot.conversation`, `bot.channel`, `bot.timers`, `bot.store`, `bot.core`.
"""
