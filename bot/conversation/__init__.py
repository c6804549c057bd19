"""The conversation: one work item of one participant in, all of the turn's events out.

Owns: the flow (`flow.ConversationFlow`), the module interface (`module`), the tool loop and
the tool interface (`tool_loop`, `tooling`), the LLM client (`llm`, the only `openai` import),
prompt files, the transcript the LLM sees, tone, thinking, the crisis screen (`safety`,
`crisis`), supervisor texts, debug traces, what a fired timer does (`timer_turns`) and the daily
habit cycle. Modules and tools are not imported here: the composition root (`bot.runtime`)
hands the flow its modules, tools and what applies per intervention (`applied`).
May import: `bot.channel`, `bot.timers`, `bot.store`, `bot.core`.
"""
