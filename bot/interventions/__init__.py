"""Interventions as folders of files, in three layers, each importing only the ones below it:

- `validation/` checks a folder for its author (`validate.validate_folder`, the references of
  names and actions, the catalogue of usable interventions, the decision points' check); it
  renders samples and compiles conditions through the interpreter, so it sits on top;
- `interpreter/` runs an intervention: the condition evaluator over a participant's context,
  actions, moves, forms and extraction, judgements, retrieval, completion, and the turn the step
  module runs (`turn.run_turn`, pure: the LLM comes in as callables), plus what the conversation
  applies for each intervention (`applied.AppliedByIntervention`, read from its configuration);
- `language/` says what an intervention is: the format of its files (intervention.yaml is its
  configuration, `format.Configuration`), the loader, author-facing problems, templates,
  libraries, the expression language, the types of names and the type checker, JSON Schema,
  the Mermaid graph, the decision points' format.

Words: the process's `Settings` (bot.core.config) are the server's; an intervention's
configuration is its intervention.yaml; what the flow applies to a participant is `Applied`.
Nothing is imported here. Tool and module names are handed in by the caller, never imported.
May import: `bot.conversation`, `bot.channel`, `bot.timers`, `bot.store`, `bot.core`.
"""
