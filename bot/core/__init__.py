"""The bottom layer: settings, the clock, in-process wake-ups, and the value rules every layer
shares (participant-local time, phone addresses, SMS segments).

Owns: `config`, `clock`, `signals`, `localtime`, `addresses`, `segments`.
May import: the standard library and third-party packages only, never another `bot` package.
"""
