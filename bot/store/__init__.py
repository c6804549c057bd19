"""Storage, the bottom of the stack above `bot.core`: the append-only `events` table and its
typed payloads, the projections kept beside it in the same transaction, and what reads them.

Owns: `events` (the event model), `event_types` (the catalogue), `projections` (pure reducers),
`schema` and `database` (the tables and engines on SQLite and PostgreSQL), `event_store`
(append, load), `sealing` (personal fields sealed at append, opened at read), `replay`, `jobs`
(whole-table work shared out to processes), `migrate`, `leases`, `queries`, and `services` (what
a process hands its parts). Reporting is `bot.reporting`; key erasure and rotation `bot.keys`.
May import: `bot.core` only.
"""
