"""Deterministic multilingual crisis screen run on every inbound message before any LLM call."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.conversation.phrase_index import PhraseIndex, Starts
from bot.conversation.screen_context import clauses, contrasted, mask_media_quotes, negated

DEFAULT_PHRASES = Path(__file__).with_name("crisis_phrases.yaml")
EXTRA_RULE_ID = "intervention.extra"
EXTRA_CATEGORY = "custom"
_MASK = "~"  # stands in for an excluded span; it is not a word, so no phrase can match across it
_GAP = r"(?: \w+){0,3}"
_MIN_LITERAL_CHARS = 3

_APOSTROPHES = re.compile(r"['’‘`´ʼ]")
_SYMBOL_BEFORE_LETTER = re.compile(r"[@$](?=[^\W\d_])")
_SEPARATORS = re.compile(r"[\W_]+")
_REPEATED_LETTER = re.compile(r"([^\W\d_])\1+")
_LEET_DIGITS = str.maketrans("013457", "oieast")
_SLOT = re.compile(r"\{([a-z_]+)\}")
_ATOM = re.compile(r"[^\W_][\w'’-]*\*?")
_ID = r"^[a-z]{2,3}(\.[a-z_]+)+$"
_LANGUAGE = r"^[a-z]{2,3}$"


class PhraseError(ValueError):
    """A crisis phrase, exclusion or catalogue entry that cannot be compiled."""


def fold(text: str) -> list[str]:
    """Fold case, accents, punctuation, repeated letters and leetspeak; return the words."""
    text = _APOSTROPHES.sub("", text.casefold())
    text = "".join(
        c
        for c in unicodedata.normalize("NFKD", text)
        if unicodedata.category(c) not in {"Mn", "Cf"}
    )
    text = _SYMBOL_BEFORE_LETTER.sub(lambda m: "a" if m.group() == "@" else "s", text)
    words = []
    for word in _SEPARATORS.sub(" ", text).split():
        if word[0].isalpha():  # a leading digit is a quantity ("5km"), not leetspeak ("k1ll")
            word = word.translate(_LEET_DIGITS)
        words.append(_REPEATED_LETTER.sub(r"\1", word))
    return words


@dataclass(frozen=True, slots=True)
class ScreenResult:
    """The verdict on one message: which rule matched, if any, and the phrase that did."""

    crisis: bool
    rule: str | None = None
    category: str | None = None
    language: str | None = None
    phrase: str | None = None


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(pattern=_ID)
    language: str = Field(pattern=_LANGUAGE)
    description: str = Field(min_length=1)
    phrases: tuple[str, ...] = Field(min_length=1)


class _Rule(_Entry):
    category: str = Field(pattern=r"^[a-z_]+$")


class _Catalogue(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    version: Literal[1]
    substitutions: dict[str, str] = {}
    slots: dict[str, tuple[str, ...]] = {}
    rules: tuple[_Rule, ...] = Field(min_length=1)
    exclusions: tuple[_Entry, ...] = ()


def _parse_catalogue(raw: Any, source: str) -> _Catalogue:
    try:
        catalogue = _Catalogue.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc, where = error["loc"], ".".join(str(part) for part in error["loc"]) or "top level"
        if len(loc) > 1 and loc[0] in ("rules", "exclusions") and isinstance(loc[1], int):
            entry = raw[loc[0]][loc[1]]
            name = entry.get("id", "?") if isinstance(entry, dict) else "?"
            where = f"{loc[0][:-1]} {name!r} ({where})"
        raise PhraseError(f"{source}: {where}: {error['msg']}") from None
    seen: set[str] = set()
    for entry in (*catalogue.rules, *catalogue.exclusions):
        if entry.id in seen:
            raise PhraseError(f"{source}: duplicate id {entry.id!r}")
        if not entry.id.startswith(f"{entry.language}."):
            raise PhraseError(f"{source}: id {entry.id!r} must start with its language")
        seen.add(entry.id)
    return catalogue


@cache
def _default_catalogue() -> _Catalogue:
    raw = yaml.safe_load(DEFAULT_PHRASES.read_text(encoding="utf-8"))
    return _parse_catalogue(raw, DEFAULT_PHRASES.name)


class _Compiler:
    """Turns phrases written in the catalogue's small grammar into anchored regexes."""

    def __init__(self, catalogue: _Catalogue) -> None:
        self.substitutions: dict[str, tuple[str, ...]] = {}
        for key, value in catalogue.substitutions.items():
            folded, replacement = fold(key), tuple(fold(value))
            if len(folded) != 1 or not replacement:
                raise PhraseError(f"substitution {key!r}: must map one word to some words")
            self.substitutions[folded[0]] = replacement
        # A slot counts as many letters as its shortest entry, so "{intent} {harm_verb} {other}"
        # is specific enough while "{other}" alone is not.
        self.slots: dict[str, tuple[str, int]] = {}
        self.slot_entries = catalogue.slots
        for name, entries in catalogue.slots.items():
            try:
                bodies = [self._sequence(entry, allow_slots=False) for entry in entries]
            except PhraseError as exc:
                raise PhraseError(f"slot {{{name}}}: {exc} (entries: {list(entries)})") from None
            if not bodies:
                raise PhraseError(f"slot {{{name}}}: needs at least one entry")
            regex = "(?:" + "|".join(body for body, _ in bodies) + ")"
            self.slots[name] = (regex, min(chars for _, chars in bodies))

    def words(self, text: str) -> list[str]:
        return [out for word in fold(text) for out in self.substitutions.get(word, (word,))]

    def phrase(self, phrase: str) -> str:
        body, literal_chars = self._sequence(phrase, allow_slots=True)
        if literal_chars < _MIN_LITERAL_CHARS:
            raise PhraseError(f"too broad, needs {_MIN_LITERAL_CHARS}+ required letters")
        return rf"{body}(?!\S)"

    def starts(self, phrase: str) -> Starts:
        """The words a (compiled, so valid) phrase can start with: its first token's."""
        token = phrase.split()[0]
        if token in ("#", "##"):
            return Starts(number=True)
        if slot := _SLOT.fullmatch(token):
            found = Starts()
            for entry in self.slot_entries[slot.group(1)]:
                found |= self.starts(entry)
            return found
        words, stems = set(), set()
        for atom in token.split("|"):
            if atom.endswith("*") and len(fold(atom[:-1])) == 1:
                stems.add(fold(atom[:-1])[0])  # `stem\w*`
            else:  # a word, or the first of several (the stem is the last one)
                words.add((fold(atom[:-1]) if atom.endswith("*") else self.words(atom))[0])
        return Starts(frozenset(words), frozenset(stems))

    def _sequence(self, phrase: str, allow_slots: bool) -> tuple[str, int]:
        tokens = phrase.split() if isinstance(phrase, str) else None
        if not tokens:
            raise PhraseError("a phrase must be non-empty text")
        for edge in (tokens[0], tokens[-1]):
            if edge == "..." or (edge.endswith("?") and len(edge) > 1):
                raise PhraseError("must start and end with a required word")
        body, literal_chars = "", 0
        for index, token in enumerate(tokens):
            if token == "...":
                body += _GAP
                continue
            optional = token.endswith("?") and len(token) > 1
            regex, chars = self._token(token.removesuffix("?") if optional else token, allow_slots)
            piece = f"(?:{'' if index == 0 else ' '}{regex})"
            body += piece + "?" if optional else piece
            literal_chars += 0 if optional else chars
        return body, literal_chars

    def _token(self, token: str, allow_slots: bool) -> tuple[str, int]:
        if token == "#":
            return r"\d+", 0
        if token == "##":  # a quantity of ten or more ("took 30 paracetamol")
            return r"[1-9]\d+", 0
        if slot := _SLOT.fullmatch(token):
            if not allow_slots or slot.group(1) not in self.slots:
                raise PhraseError(f"unknown slot {token}")
            return self.slots[slot.group(1)]
        regexes, chars = [], []
        for atom in token.split("|"):
            if not _ATOM.fullmatch(atom):
                raise PhraseError(f"unexpected characters in {token!r}")
            prefix = atom.endswith("*")
            words = fold(atom[:-1]) if prefix else self.words(atom)
            if not words:
                raise PhraseError(f"{atom!r} has no letters or digits")
            regexes.append(" ".join(map(re.escape, words)) + (r"\w*" if prefix else ""))
            chars.append(sum(map(len, words)))
        return "(?:" + "|".join(regexes) + ")", min(chars)


@dataclass(frozen=True, slots=True)
class _Source:
    rule: str
    category: str
    language: str
    phrase: str


@dataclass(frozen=True, slots=True, repr=False)
class CrisisScreen:
    """A compiled, immutable crisis screen; `check` is pure and safe to share across threads."""

    _index: PhraseIndex
    _exclusions: re.Pattern[str] | None
    _sources: tuple[_Source, ...]
    _substitutions: Mapping[str, tuple[str, ...]]

    @classmethod
    def from_default(
        cls, extra_phrases: Iterable[str] = (), extra_exclusions: Iterable[str] = ()
    ) -> CrisisScreen:
        """The maintained catalogue in crisis_phrases.yaml plus an intervention's extensions."""
        return cls._build(_default_catalogue(), extra_phrases, extra_exclusions)

    @classmethod
    def from_catalogue(
        cls,
        raw: Mapping[str, Any],
        extra_phrases: Iterable[str] = (),
        extra_exclusions: Iterable[str] = (),
        source: str = "catalogue",
    ) -> CrisisScreen:
        """A screen from an already-parsed catalogue with the same schema as the YAML file."""
        return cls._build(_parse_catalogue(raw, source), extra_phrases, extra_exclusions)

    @classmethod
    def _build(
        cls, catalogue: _Catalogue, extra_phrases: Iterable[str], extra_exclusions: Iterable[str]
    ) -> CrisisScreen:
        compiler = _Compiler(catalogue)
        rules = [(rule.id, rule.category, rule.language, rule.phrases) for rule in catalogue.rules]
        extra = _extensions(extra_phrases, "extra_phrases")
        rules.append((EXTRA_RULE_ID, EXTRA_CATEGORY, "any", extra))
        sources: list[_Source] = []
        branches: list[str] = []
        starts: list[Starts] = []
        for rule_id, category, language, phrases in rules:
            for phrase in phrases:
                branches.append(f"(?P<p{len(sources)}>{_compiled(compiler, rule_id, phrase)})")
                starts.append(compiler.starts(phrase))
                sources.append(_Source(rule_id, category, language, phrase))
        masks = [
            _compiled(compiler, entry.id, phrase)
            for entry in catalogue.exclusions
            for phrase in entry.phrases
        ]
        masks += [
            _compiled(compiler, "extra exclusion", phrase)
            for phrase in _extensions(extra_exclusions, "extra_exclusions")
        ]
        return cls(
            PhraseIndex(branches, starts),
            _anchored(masks) if masks else None,
            tuple(sources),
            MappingProxyType(compiler.substitutions),
        )

    def __repr__(self) -> str:
        return f"CrisisScreen({len(self._sources)} phrases)"

    def normalise(self, text: str) -> str:
        """The folded, substituted words the phrases are matched against (for debugging only)."""
        return " ".join(
            out for word in fold(text) for out in self._substitutions.get(word, (word,))
        )

    def check(self, text: str) -> ScreenResult:
        """Screen one message, clause by clause; in each, the leftmost phrase that is not denied
        by a negation wins (ties go to catalogue order). Quoted titles and lyrics are skipped."""
        parts = [self._words(part) for part in clauses(mask_media_quotes(text, fold, _MASK))]
        for index, words in enumerate(parts):
            position = 0
            while (match := self._index.search(words, position)) is not None:
                before = words[: match.start()].split()
                after = [*words[match.end() :].split(), *" ".join(parts[index + 1 :]).split()]
                if negated(before) and not contrasted(after):
                    position = match.start() + 1
                    continue
                source = self._sources[int(str(match.lastgroup)[1:])]
                return ScreenResult(
                    True, source.rule, source.category, source.language, source.phrase
                )
        return ScreenResult(crisis=False)

    def _words(self, clause: str) -> str:
        words = self.normalise(clause)
        return words if self._exclusions is None else self._exclusions.sub(_MASK, words)


def _extensions(phrases: Iterable[str], name: str) -> tuple[str, ...]:
    if isinstance(phrases, str):
        raise PhraseError(f"{name} must be a list of phrases, not a single string")
    return tuple(phrases)


def _compiled(compiler: _Compiler, owner: str, phrase: str) -> str:
    try:
        return compiler.phrase(phrase)
    except PhraseError as exc:
        raise PhraseError(f"{owner}: phrase {phrase!r}: {exc}") from None


def _anchored(branches: list[str]) -> re.Pattern[str]:
    # One word-start check before the alternation lets the engine skip mid-word positions cheaply.
    return re.compile(r"(?<!\S)(?:" + "|".join(branches) + ")")
