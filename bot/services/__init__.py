"""Services: the acts a person or a process takes, one module each — enroll (`enrollment`),
update (`participant_update`), unenroll (`unenrollment`), withdraw (`withdrawal`), erase
(`erasure`), take over, hand back and send as staff (`takeover`), acknowledge and resolve
alerts (`alerts`), export (`export`), allocate to a study arm (`allocation`), audit a study's
allocations (`study_audit`), broadcast to a filtered group (`broadcasts`: create or dry-run,
list, show, cancel; each recipient settled by `broadcast_sending`, the audience and texts by
`broadcast_audience`).

Every entry point (the API, the console, the CLI, the sandbox) calls these functions and only
translates a request into a call, and a result or a `Refused` (`refusal`) into its own answer,
so that an act has one set of rules wherever it is asked for. Each act decides on a
participant under their stream's lock (`participant_lock`).
May import: `bot.reporting`, `bot.studies`, `bot.instruments`, `bot.analysis`,
`bot.interventions`, `bot.conversation`, `bot.channel`, `bot.timers`, `bot.keys`, `bot.store`,
`bot.core`.
"""
