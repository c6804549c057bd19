"""Counted nouns on the console's pages: "1 row", "2 rows", never "1 rows"."""

from __future__ import annotations

from bot.console.blueprint import console


@console.app_template_filter("counted")
def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and the noun, singular for exactly one."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
