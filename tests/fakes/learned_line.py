"""A learned crisis line that scores by a table (a `LearnedLine`: anything with `score(text)`),
to put a message in the review band deterministically. Handed to the composition root
(`build_handler(..., learned_line=...)`) exactly where the shipped model is loaded."""

from __future__ import annotations

from collections.abc import Mapping

from bot.conversation.learned import LearnedVerdict


class TableLine:
    """Scores each message listed in `scores`, and `default` every other one."""

    version = "test-table-1"

    def __init__(self, scores: Mapping[str, float], default: float = 0.0) -> None:
        self.scores, self.default = dict(scores), default
        self.seen: list[str] = []

    def score(self, text: str) -> LearnedVerdict:
        self.seen.append(text)
        score = self.scores.get(text, self.default)
        return LearnedVerdict(score=score, category="suicide", language="en", version=self.version)
