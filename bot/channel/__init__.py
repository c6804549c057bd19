"""The channel: what crosses the Twilio boundary in both directions.

Owns: inbound messages and consent keywords (`inbound`, `consent`), status callbacks, building
outbound messages (`outbound`), the outbox dispatcher, the Twilio and console messengers, and the
webhook signature check. `twilio` is imported only in `twilio_messenger` and `signature`.
May import: `bot.timers` (what opting out does to pending timers), `bot.store`, `bot.core`.
"""
