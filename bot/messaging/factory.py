"""`build_messenger(settings)`: the console messenger or the Twilio one, as MESSENGER says."""

from __future__ import annotations

import logging

from bot.config import Settings
from bot.messaging.messenger import Messenger

log = logging.getLogger(__name__)


def build_messenger(settings: Settings) -> Messenger:
    """The configured messenger; Twilio's with an explicit timeout and our status callbacks."""
    if settings.messenger == "console":
        from bot.messaging.console import ConsoleMessenger

        return ConsoleMessenger()
    from twilio.rest import Client

    from bot.messaging.twilio_messenger import TwilioMessenger, twilio_http_client

    if not settings.public_base_url:
        log.warning(
            "PUBLIC_BASE_URL is not set: no status callbacks, so a send whose outcome is unknown "
            "can never reconcile and delivery is never reported"
        )
    client = Client(
        settings.twilio_account_sid,
        settings.twilio_auth_token,
        http_client=twilio_http_client(
            settings.twilio_api_base_url, settings.twilio_timeout_seconds
        ),
    )
    return TwilioMessenger(
        client,
        from_number=settings.twilio_from_number,
        messaging_service_sid=settings.twilio_messaging_service_sid,
        public_base_url=settings.public_base_url,
    )
