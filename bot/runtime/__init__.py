"""The process: the composition root and the background threads.

Owns: `bootstrap` (builds the real adapters from settings), `routing` (hands the conversation
its modules, tools and what applies per intervention), `tool_registry` (every tool by name),
`worker` (claims a participant's queue and runs turns), `threads` (worker, dispatcher and scheduler
threads of one process), `broadcaster` (sends due broadcast recipients at the configured
rate) and `background` (`tandem serve`'s child process that runs them).
May import: `modules`, `tools`, `bot.interventions`, `bot.conversation`, `bot.channel`,
`bot.timers`, `bot.store`, `bot.core`; never the entry points (`bot.web`, `bot.cli`,
`bot.sandbox`).
"""
