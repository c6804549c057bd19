"""`tandem chat`'s sandbox: one participant and the whole engine in process (see engine.py)."""

from bot.sandbox.engine import DEFAULT_PHONE, Sandbox, SandboxError

__all__ = ["DEFAULT_PHONE", "Sandbox", "SandboxError"]
