"""Storage, the bottom of the stack above `bot.core`: the append-only `events` table and its
typed payloads, the projections kept beside it in the same transaction, and what reads them.

Owns: `events` (the event model), `event_types` (the catalogue), `projections` (pure reducers),
`schema` and `engine` (the tables on SQLite and PostgreSQL), `event_store` (append, load),
`replay`, `migrate`, `leases`, `queries`, `services` (what a process hands its parts), and the
store-level reads `transcript` and `export`.
May import: `bot.core` only.
"""
