"""Which model to call and how: name, temperature and max_tokens, each left to the next level."""

from __future__ import annotations

from dataclasses import dataclass

# PromptPipe's values, so that scripts moved from it sample the same way.
DEFAULT_TEMPERATURE = 0.1
DEFAULT_MAX_TOKENS = 1000


@dataclass(frozen=True)
class ModelChoice:
    """A prompt file's or an intervention's model settings; None leaves the setting to the
    level below (prompt file > intervention > TANDEM_MODEL / TANDEM_TEMPERATURE /
    TANDEM_MAX_TOKENS)."""

    name: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None

    @classmethod
    def of(cls, model: str | ModelChoice | None) -> ModelChoice:
        """A bare model name (or None) as a choice of that name only."""
        return model if isinstance(model, ModelChoice) else cls(name=model)

    def over(self, below: str | ModelChoice | None) -> ModelChoice:
        """This choice, with what it leaves open taken from `below`."""
        base = ModelChoice.of(below)
        return ModelChoice(
            name=self.name if self.name is not None else base.name,
            temperature=self.temperature if self.temperature is not None else base.temperature,
            max_tokens=self.max_tokens if self.max_tokens is not None else base.max_tokens,
        )
