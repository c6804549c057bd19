"""Messaging: the Twilio and console adapters and the channel's text rules."""
