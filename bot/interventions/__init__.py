"""Interventions as folders of files: the format, its loader and validator, the Mermaid graph,
the templates with their completion slots, and the turn the step module runs.

Nothing is imported here. `loader.load_intervention` reads a folder; `validate.validate_folder`
checks one; `runtime.run_turn` decides a turn (pure: the LLM comes in as callables).
"""
