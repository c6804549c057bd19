"""The `save_user_profile` tool: merge what was learned into the profile, clear fields on
request, and adapt the tone (bot.conversation.tone) when tone tags are proposed."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from bot.conversation import tone
from bot.conversation.tooling import ToolContext, ToolOutcome, ToolSpec
from bot.store.event_types.conversation import ProfileSaved

TEXT_FIELDS = (
    "habit_domain",
    "prompt_anchor",
    "motivational_frame",
    "preferred_time",
    "additional_info",
    "last_successful_prompt",
    "last_barrier",
    "last_motivator",
    "last_tweak",
)
MAX_TEXT = 1000
Clearable = Literal[
    "habit_domain",
    "prompt_anchor",
    "motivational_frame",
    "preferred_time",
    "additional_info",
    "last_successful_prompt",
    "last_barrier",
    "last_motivator",
    "last_tweak",
]


class SaveUserProfile(BaseModel):
    """Save what you learned about the participant to their profile, whenever you learn it.
    Give only the fields you have; a value replaces the saved one only if it is non-empty and
    different, so leave a field null to keep it. To remove a saved value (the participant
    withdrew it or it is wrong), name the field in `clear`. Tone: when the participant asks for
    a style ("no emojis please") send the tags with tone_update_source "explicit"; when you only
    notice a style, send "implicit" (such updates count for little and at most every 3 minutes).
    The result shows the saved profile."""

    model_config = ConfigDict(extra="forbid")

    habit_domain: str | None = Field(None, description='The habit area, e.g. "healthy eating".')
    prompt_anchor: str | None = Field(
        None, description='The moment the habit follows, e.g. "after coffee".'
    )
    motivational_frame: str | None = Field(None, description="Why the habit matters to them.")
    preferred_time: str | None = Field(
        None, description='When they want the prompt, e.g. "9am", "morning", "randomly".'
    )
    additional_info: str | None = Field(None, description="Anything else that personalises.")
    last_successful_prompt: str | None = Field(None, description="A prompt that worked.")
    last_barrier: str | None = Field(None, description="What last got in the way.")
    last_motivator: str | None = Field(None, description="What last helped them do it.")
    last_tweak: str | None = Field(None, description="A change they asked for.")
    tone_tags: list[str] | None = Field(
        None, description="Tone tags, from: " + ", ".join(tone.TAGS) + "."
    )
    tone_update_source: Literal["explicit", "implicit"] | None = Field(
        None, description="explicit: they asked for it; implicit (default): you noticed it."
    )
    tone_confidence: float | None = Field(None, description="Your confidence, 0 to 1.")
    intensity: Literal["low", "normal", "high"] | None = Field(
        None, description="How demanding the daily habit should be."
    )
    clear: list[Clearable] | None = Field(None, description="Fields whose value to remove.")

    @model_validator(mode="before")
    @classmethod
    def _legacy_last_blocker(cls, data: Any) -> Any:
        # PromptPipe's old name for last_barrier; it wins only where last_barrier is empty.
        if isinstance(data, dict) and "last_blocker" in data:
            data = dict(data)
            blocker = data.pop("last_blocker")
            if not data.get("last_barrier"):
                data["last_barrier"] = blocker
        return data

    @field_validator(*TEXT_FIELDS)
    @classmethod
    def _text(cls, value: str | None, info: Any) -> str | None:
        if value is None or not value.strip():
            return None
        if len(value) > MAX_TEXT:
            raise ValueError(
                f"{info.field_name} is {len(value)} characters; the limit is {MAX_TEXT}"
            )
        return value.strip()

    @field_validator("tone_confidence")
    @classmethod
    def _confidence(cls, value: float | None) -> float | None:
        if value is not None and not (math.isfinite(value) and 0 <= value <= 1):
            raise ValueError(f"tone_confidence must be between 0 and 1, got {value}")
        return value

    @field_validator("clear", mode="before")
    @classmethod
    def _clearable(cls, value: Any) -> Any:
        for name in value or []:
            if name not in TEXT_FIELDS:
                raise ValueError(
                    f"clear: {name!r} is not a profile field that can be cleared; use any of: "
                    + ", ".join(TEXT_FIELDS)
                )
        return value

    @model_validator(mode="after")
    def _not_set_and_cleared(self) -> SaveUserProfile:
        both = [f for f in TEXT_FIELDS if f in (self.clear or []) and getattr(self, f)]
        if both:
            raise ValueError(
                f"{', '.join(both)}: a field cannot be both given a value and cleared; "
                "give the value to replace it, or clear it"
            )
        return self


def run(args: SaveUserProfile, ctx: ToolContext) -> ToolOutcome:
    """A `profile.saved` with the changed and cleared fields, or NOOP if nothing changes."""
    profile = dict(ctx.participant.get("profile") or {})
    changes: dict[str, Any] = {
        f: getattr(args, f)
        for f in (*TEXT_FIELDS, "intensity")
        if getattr(args, f) is not None and getattr(args, f) != profile.get(f)
    }
    cleared = list(dict.fromkeys(f for f in args.clear or [] if f in profile))
    tone_changes, notes = _tone(args, profile, ctx)
    changes.update(tone_changes)
    if not changes and not cleared:
        return _result("noop", profile, [], [], notes)
    kept = {k: v for k, v in profile.items() if k not in cleared}
    saved = ProfileSaved(changes=changes, cleared=cleared, source="tool")
    return _result("success", {**kept, **changes}, list(changes), cleared, notes, saved)


def _tone(
    args: SaveUserProfile, profile: dict[str, Any], ctx: ToolContext
) -> tuple[dict[str, Any], list[str]]:
    """The tone fields that change, and what the model should know about the proposal."""
    if args.tone_tags is None:
        if args.tone_update_source is not None or args.tone_confidence is not None:
            return {}, ["tone_update_source/tone_confidence ignored: no tone_tags were given"]
        return {}, []
    proposal = tone.validate(args.tone_tags, args.tone_update_source)
    notes = []
    if proposal.dropped:
        notes.append(
            "dropped unknown tone tags: "
            + ", ".join(proposal.dropped)
            + " (allowed: "
            + ", ".join(tone.TAGS)
            + ")"
        )
    current = tone.Tone.from_profile(profile)
    update = tone.apply(current, proposal, ctx.now)
    if not update.changed:
        notes.append(_why_unchanged(update, current, ctx))
        return {}, notes
    new = update.tone.as_profile()
    return {k: v for k, v in new.items() if profile.get(k) != v}, notes


def _why_unchanged(update: tone.Update, current: tone.Tone, ctx: ToolContext) -> str:
    if update.reason == "rate_limited" and current.last_updated_at is not None:
        ago = (ctx.now - current.last_updated_at).total_seconds()
        return (
            "tone not updated: implicit tone updates are limited to one every 3 minutes and "
            f"the last was {ago:.0f} s ago; use tone_update_source 'explicit' only if the "
            "participant asked for this style"
        )
    if update.reason == "no_tags":
        return "tone not updated: no known tone tags were given"
    return "tone not updated: the scores are already at those values"


def _result(
    status: Literal["success", "noop"],
    profile: dict[str, Any],
    updated: Sequence[str],
    cleared: Sequence[str],
    notes: list[str],
    saved: ProfileSaved | None = None,
) -> ToolOutcome:
    if status == "noop":
        headline = "NOOP: profile already up to date; no changes were saved."
    else:
        done = f"{len(updated)} field(s) updated" + (f": {', '.join(updated)}" if updated else "")
        if cleared:
            done += f"; {len(cleared)} field(s) cleared: {', '.join(cleared)}"
        headline = f"SUCCESS: profile saved ({done})"
    body: dict[str, Any] = {"status": status}
    if status == "success":
        body |= {"updated_fields": updated, "cleared_fields": cleared}
    body |= {"notes": notes} if notes else {}
    body["profile_snapshot"] = profile
    text = headline + "\n" + json.dumps(body, ensure_ascii=False, default=str)
    return ToolOutcome(True, text, [saved] if saved else [])


TOOL = ToolSpec(name="save_user_profile", arguments=SaveUserProfile, run=run)
