"""`build_messenger(settings)`: the console messenger or the Twilio one, as MESSENGER says."""

from __future__ import annotations

import logging

from bot.channel.messenger import Messenger
from bot.core.config import Settings

log = logging.getLogger(__name__)


def build_messenger(settings: Settings) -> Messenger:
    """The configured messenger; Twilio's with an explicit timeout and our status callbacks."""
    if settings.messenger == "console":
        from bot.channel.console import ConsoleMessenger

        return ConsoleMessenger()
    from bot.channel.twilio_messenger import TwilioMessenger

    if not settings.public_base_url:
        log.warning(
            "PUBLIC_BASE_URL is not set: no status callbacks, so a send whose outcome is unknown "
            "can never reconcile and delivery is never reported"
        )
    return TwilioMessenger.from_settings(settings)
