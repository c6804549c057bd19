"""The `tandem` commands by name: the module that defines each and the first paragraph of its
help, so that `tandem --help` lists them, and `tandem X` finds X, without importing any command
module it does not run (tests/cli/test_command_table.py keeps the table equal to the commands)."""

from __future__ import annotations

from typing import NamedTuple


class Entry(NamedTuple):
    module: str  # the module whose import registers the command on the group
    summary: str  # the first paragraph of the command's help, on one line


COMMANDS: dict[str, Entry] = {
    "analyze": Entry("bot.cli.analyze", "Analyses of a study's data."),
    "broadcast": Entry(
        "bot.cli.broadcast",
        "One message to a filtered group of participants (docs/broadcasts.md).",
    ),
    "chat": Entry(
        "bot.cli.chat",
        "Talk to an intervention as a participant: a sandbox for intervention authors.",
    ),
    "decisions": Entry(
        "bot.cli.decisions",
        "Micro-randomised decision points (decisions/<name>.md): audit their draws.",
    ),
    "enroll": Entry(
        "bot.cli.enroll",
        "Enroll PHONE (E.164, or national in DEFAULT_REGION) in an intervention, or in a study "
        "(an arm is drawn, concealed, and its intervention run); the worker sends the first "
        "message shortly after. Refused (exit 1, naming every problem) for an invalid number or"
        " timezone, an intervention or study that does not exist or validate, a missing or "
        "invalid baseline field, or a number already enrolled; exit 2 when the intervention "
        "needs what is not configured (an LLM: OPENAI_API_KEY). The arm is printed unless the "
        "study is blinded.",
    ),
    "erase": Entry(
        "bot.cli.erase",
        "Erase PARTICIPANT (an id or a phone number): their data key is destroyed, so every "
        "personal field of their events (phone, name, messages, profile, LLM prompts) reads "
        "`[erased]` in the API, transcripts, exports and replay; their stored rows are rebuilt "
        "without it, unsent messages are suppressed and timers cancelled. With --phone NUMBER "
        "instead: the messages of an unknown sender (a number that matches no participant, or "
        "an erased participant texting again) are erased the same way, their key destroyed and"
        " recorded as `sender.erased`. Needs TANDEM_MASTER_KEY. It cannot be undone: you are "
        "asked to type the participant id (or the number) unless --yes.",
    ),
    "events": Entry(
        "bot.cli.events",
        "Print events in global order, one JSON object per line (exit 1 when a filter matches "
        "none).",
    ),
    "export": Entry(
        "bot.cli.export",
        "Write participants, messages, results, retrievals, forms, instruments and events "
        "files, and a codebook, for analysis.",
    ),
    "interventions": Entry(
        "bot.cli.interventions",
        "Intervention folders: check them, draw them, and describe their keys for editors.",
    ),
    "keys": Entry(
        "bot.cli.keys",
        "The master key (TANDEM_MASTER_KEY) that wraps the participants' data keys (and seals "
        "the staff's TOTP secrets).",
    ),
    "maintenance": Entry(
        "bot.cli.maintenance",
        "Destroy the keys of unknown senders older than UNKNOWN_SENDER_RETENTION_DAYS, then "
        "rewrite the data_keys table (VACUUM FULL) and VACUUM every other table, so that no "
        "data key destroyed by an erasure stays in the database files; recorded as "
        "`maintenance.completed`. Run it with the schema owner's DATABASE_URL (the app role may"
        " not VACUUM), from cron at least daily (docs/operations.md); it refuses as the app "
        "role.",
    ),
    "migrate": Entry(
        "bot.cli.store",
        "Create or upgrade the database schema to the newest revision (idempotent).",
    ),
    "replay": Entry(
        "bot.cli.store",
        "Rebuild every projection from the events and print how the stored tables differ.",
    ),
    "safety": Entry(
        "bot.cli.safety",
        "The crisis screen run on every inbound message (and the LLM classifier beside it).",
    ),
    "serve": Entry(
        "bot.cli.run",
        "Run everything with one command: the web app, workers, the dispatcher and the scheduler.",
    ),
    "simulate": Entry(
        "bot.cli.simulate",
        "Rehearse TARGET (an intervention folder or slug, or a study: studies/<slug>) with "
        "synthetic participants.",
    ),
    "study": Entry(
        "bot.cli.study",
        "Studies (studies/<slug>/study.yaml): validate them, audit their allocations, unblind a "
        "participant.",
    ),
    "timers": Entry("bot.cli.timers", "List durable timers, or cancel one."),
    "users": Entry(
        "bot.cli.users",
        "Add, list or disable the staff accounts of the researcher console (/console/), or "
        "reset a lost second factor.",
    ),
    "withdraw": Entry(
        "bot.cli.withdraw",
        "Withdraw PARTICIPANT (an id or a phone number): every unsent message is suppressed, "
        "every timer cancelled and an active takeover ended; nothing more is ever sent, and "
        "their data is kept. Erasing it is a separate act.",
    ),
    "worker": Entry(
        "bot.cli.run",
        "Run background work: conversations, sending, and (if elected) the timer scheduler.",
    ),
}
