"""The life of participants' data keys: erasing one (`erasure.shred`: the key destroyed, the
phone's hash dropped, derived files scrubbed) and re-wrapping them all under a new master key
(`rotation.rotate`). Sealing and opening at append and read stay in `bot.store.sealing`, because
the store seals every payload it writes; this package holds the acts that end or move keys.
May import: `bot.store`, `bot.core`.
"""
