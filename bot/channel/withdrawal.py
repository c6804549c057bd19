"""Who may ask for a withdrawal: the values `participant.withdrawn` records in `requested_by`.

The act itself (suppress, cancel, end a takeover, record) is `bot.services.withdrawal`; this
list stays below it because the participant page's form (bot.console.participant_page) and
the services both name it.
"""

from __future__ import annotations

from typing import get_args

from bot.store.event_types.participants import ParticipantWithdrawn

REQUESTERS: tuple[str, ...] = get_args(ParticipantWithdrawn.model_fields["requested_by"].annotation)
