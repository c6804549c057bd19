"""The conversation flow: one work item of one participant in, all of the turn's events out.

`engine.ConversationFlow` is the handler the worker calls; `module` is the interface the
conversation modules (modules/) implement; `context` and `working` are pure helpers. Nothing is
imported here, so that modules can import `bot.flow.module` without pulling in the LLM client.
"""
