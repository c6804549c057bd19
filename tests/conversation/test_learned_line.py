"""The learned crisis line: scoring, bands, its trainer's thresholds, and a reproducible rebuild."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from bot.conversation import safety_train
from bot.conversation.learned import (
    MODEL_DIR,
    Head,
    LazyLine,
    LearnedLine,
    LearnedVerdict,
    LinearLine,
    Matrix,
    Thresholds,
    band,
    load_line,
    read_card,
)
from bot.conversation.safety import ScreenResult
from bot.conversation.safety_eval import Labelled, read_corpus
from bot.conversation.safety_lines import LearnedSetup, three_lines
from bot.store.event_types.safety import SafetyScored, SafetyScreened

CORPUS = Path(__file__).resolve().parents[1] / "safety_corpus"


class WordEmbedder:
    """A deterministic stand-in embedder: hashed word counts, L2-normalised."""

    name = "test-words"

    def embed(self, texts: Sequence[str]) -> Matrix:
        rows = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                rows[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1.0, norms)


def test_a_score_at_the_alert_threshold_alerts_and_the_band_below_it_is_review() -> None:
    limits = Thresholds(alert=0.8, review=0.5)

    assert [band(s, limits) for s in (0.8, 0.79, 0.5, 0.49)] == [
        "alert",
        "review",
        "review",
        "none",
    ]


def test_a_threshold_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match="in 0..1"):
        Thresholds(alert=1.2, review=0.6)
    with pytest.raises(ValueError, match="in 0..1"):
        Thresholds(alert=0.9, review=-0.1)


def test_with_a_review_score_the_review_threshold_applies_to_it_not_to_the_crisis_score() -> None:
    limits = Thresholds(alert=0.8, review=0.9)

    assert band(0.85, limits, review_score=0.95) == "alert"  # the crisis score decides first
    assert band(0.2, limits, review_score=0.95) == "review"  # a look-alike: a person looks
    assert band(0.7, limits, review_score=0.89) == "none"  # an ordinary text


class Fixed:
    name = "fixed"

    def embed(self, texts: Sequence[str]) -> Matrix:
        return np.tile(np.array([[0.2, 1.0, 0.5]], dtype=np.float32), (len(texts), 1))


def _seven_class_line(review_on_everyday: bool) -> LinearLine:
    head = Head(("everyday", "none", "suicide"), np.eye(3) * 3.0, np.zeros(3))
    language = Head(("en", "es"), np.array([[1.0, 0, 0], [0, 1.0, 0]]), np.zeros(2))
    return LinearLine(Fixed(), head, language, "v2", review_on_everyday=review_on_everyday)


def test_an_older_card_gives_the_review_score_and_leaves_the_crisis_score_and_category() -> None:
    verdict = _seven_class_line(review_on_everyday=True).score("anything")

    p = np.exp([0.6, 3.0, 1.5]) / np.exp([0.6, 3.0, 1.5]).sum()
    assert verdict.score == pytest.approx(p[2])  # 1 - P(none) - P(everyday)
    assert verdict.review_score == pytest.approx(1 - p[0])
    assert verdict.category == "suicide"


def test_the_review_band_is_on_the_crisis_score_unless_the_card_asks_otherwise() -> None:
    verdict = _seven_class_line(review_on_everyday=False).score("anything")

    p = np.exp([0.6, 3.0, 1.5]) / np.exp([0.6, 3.0, 1.5]).sum()
    assert verdict.review_score is None and verdict.review == pytest.approx(p[2])


def test_a_scenario_and_its_translations_share_a_cross_validation_group() -> None:
    def example(source: str, category: str, line: int) -> safety_train.Example:
        return safety_train.Example(Labelled("x", category, source[:2], line), False, source)

    examples = [
        *(example("en_scenes.tsv", "suicide", n) for n in range(2, 7)),
        *(example("pt_scenes.tsv", "suicide", n) for n in range(2, 7)),
        example("pt_scenes.tsv", "abuse", 7),
        example("en_suicide.tsv", "suicide", 9),
        example("en_suicide.tsv", "suicide", 10),
        example("es_suicide.tsv", "suicide", 9),
    ]

    groups = safety_train.groups(examples)

    assert groups[0] == groups[3] == groups[5] == groups[8]  # first four of each, both languages
    assert groups[4] == groups[9] != groups[0]  # the fifth scenario starts the next group
    assert groups[10] not in groups[:10]  # another category
    assert len({groups[11], groups[12], groups[13]}) == 3  # first batch: blocks of a file


def test_a_third_batch_scenario_is_one_group_up_to_its_next_comment_line() -> None:
    def example(source: str, line: int) -> safety_train.Example:
        return safety_train.Example(Labelled("x", "suicide", source[:2], line), False, source)

    # en_batch3_crisis.tsv: comment on lines 1 and 5, a blank line 8, lines 2-4, 6-7, 9.
    lines = (2, 3, 4, 6, 7, 9)
    examples = [example("en_batch3_crisis.tsv", n) for n in lines]
    examples += [example("es_batch3_crisis.tsv", n) for n in (2, 3, 5)]
    examples.append(example("es_batch3_none_hardneg.tsv", 2))

    groups = safety_train.groups(examples)

    assert groups[0] == groups[1] == groups[2]  # one scenario
    assert groups[3] == groups[4] != groups[0]  # the next, after a comment line
    assert groups[5] not in groups[:5]  # a blank line also starts a scenario
    assert groups[6] == groups[7] == groups[0]  # its re-voicing in another language
    assert groups[8] == groups[3]
    assert groups[9] not in groups[:9]  # another kind of file


def test_a_fourth_batch_scenario_is_grouped_like_the_third_but_apart_from_it() -> None:
    def example(source: str, line: int) -> safety_train.Example:
        return safety_train.Example(Labelled("x", "suicide", source[:2], line), False, source)

    examples = [example("en_batch3_crisis.tsv", n) for n in (2, 3)]
    examples += [example("en_batch4_crisis.tsv", n) for n in (3, 4, 6)]
    examples += [example("pt_batch4_crisis.tsv", n) for n in (3, 5)]

    groups = safety_train.groups(examples)

    assert groups[2] == groups[3] != groups[4]  # a block, then the next after a comment line
    assert groups[2] not in groups[:2]  # the third batch's first block is another group
    assert groups[5] == groups[2] and groups[6] == groups[4]  # same-numbered block in pt


@pytest.mark.parametrize(
    ("before", "batch"),
    [
        ("batch4", "batch5"),
        ("batch5", "batch6"),
        ("batch6", "batch7"),
        ("batch7", "batch8"),
        ("batch8", "batch9"),
    ],
)
def test_a_later_batch_block_is_grouped_like_the_one_before_but_apart_from_it(
    before: str, batch: str
) -> None:
    def example(source: str, line: int) -> safety_train.Example:
        return safety_train.Example(Labelled("x", "suicide", source[:2], line), False, source)

    examples = [example(f"en_{before}_crisis.tsv", n) for n in (3, 4)]
    examples += [example(f"en_{batch}_crisis.tsv", n) for n in (3, 4, 6)]
    examples += [example(f"es_{batch}_crisis.tsv", n) for n in (3, 5)]
    examples.append(example(f"en_{batch}_none_hardneg.tsv", 3))

    groups = safety_train.groups(examples)

    assert groups[2] == groups[3] != groups[4]  # a block, then the next after a comment line
    assert groups[2] not in groups[:2]  # the earlier batch's first block is another group
    assert groups[5] == groups[2] and groups[6] == groups[4]  # same-numbered block in es
    assert groups[7] not in groups[:7]  # another kind of file


def test_the_score_is_one_minus_p_none_and_the_category_the_likeliest_crisis_class() -> None:
    # One dimension per class: the embedding picks the logits directly.
    classes = ("abuse", "none", "suicide")
    head = Head(classes, np.eye(3) * 3.0, np.zeros(3))
    language = Head(("en", "es"), np.array([[1.0, 0, 0], [0, 1.0, 0]]), np.zeros(2))

    class Fixed:
        name = "fixed"

        def embed(self, texts: Sequence[str]) -> Matrix:
            return np.tile(np.array([[0.0, 1.0, 0.5]], dtype=np.float32), (len(texts), 1))

    verdict = LinearLine(Fixed(), head, language, "v1").score("anything")

    p = np.exp([0.0, 3.0, 1.5]) / np.exp([0.0, 3.0, 1.5]).sum()
    assert verdict.score == pytest.approx(1 - p[1])
    assert (verdict.category, verdict.language, verdict.version) == ("suicide", "es", "v1")


def test_the_lazy_line_loads_once_on_first_use() -> None:
    loads: list[int] = []

    def load() -> object:
        loads.append(1)
        return object()

    lazy = LazyLine(load)  # type: ignore[arg-type]  # any object stands in for the line

    assert not lazy.loaded
    assert lazy.get() is lazy.get()
    assert loads == [1]


def _examples(seed: int, crisis_mean: float) -> tuple[np.ndarray, list[safety_train.Example]]:
    rng = np.random.default_rng(seed)
    examples, scores = [], []
    for i in range(3000):
        kind = ("suicide", "none", "none")[i % 3]
        everyday = kind == "none" and i % 2 == 0
        examples.append(safety_train.Example(Labelled(str(i), kind, "en", i), everyday))
        scores.append(rng.beta(8, 2) if kind != "none" else rng.beta(2, 8 - 6 * crisis_mean))
    return np.array(scores), examples


def test_chosen_thresholds_hold_the_false_alarm_and_review_targets_on_the_scores_they_saw() -> None:
    scores, examples = _examples(seed=7, crisis_mean=0.5)
    everyday = np.array([e.everyday for e in examples])
    hard = np.array([e.item.category == "none" for e in examples]) & ~everyday
    rng = np.random.default_rng(3)
    # The phrase screen flags a third of the crisis lines and 8 % of the hard negatives.
    phrase = np.where(
        hard, rng.uniform(size=len(scores)) < 0.08, rng.uniform(size=len(scores)) < 0.33
    )
    phrase &= ~everyday

    limits = safety_train.choose_thresholds(scores, examples, phrase)
    alerted, flagged = safety_train.triage(scores, phrase, limits)

    assert alerted[hard].mean() <= safety_train.ALERT_FALSE_ALARMS
    assert alerted[hard].mean() > safety_train.ALERT_FALSE_ALARMS / 2
    assert (phrase & hard).mean() / hard.mean() > safety_train.ALERT_FALSE_ALARMS  # so: confirm
    assert limits.confirm is not None and 0 < limits.confirm < 1
    in_band = flagged & ~alerted
    assert in_band[everyday].mean() <= safety_train.REVIEW_RATE
    # Not trivially safe: the band holds some everyday texts, and the alert is not at 1.
    assert in_band[everyday].mean() > safety_train.REVIEW_RATE / 2 and limits.alert < 1.0
    assert flagged[phrase].all()  # a phrase hit is never let go: alerted or reviewed
    crisis_hits = phrase & np.array([e.item.category != "none" for e in examples])
    assert (crisis_hits & ~alerted).sum() <= safety_train.DEMOTED_HITS * crisis_hits.sum()


def test_the_confirm_threshold_never_demotes_more_than_its_share_of_phrase_crisis_hits() -> None:
    # Freeing the hard negatives' budget (by confirming phrase hits) would let the learned line
    # alert on 300 crisis lines just under its threshold, at the cost of demoting 50 phrase hits
    # the model scores low (short explicit messages it never learned). Without the cap the
    # trade is worth it by recall; with it, at most 2 % of the phrase screen's crisis hits go.
    rng = np.random.default_rng(5)
    parts = [  # (category, everyday, phrase hit, scores)
        ("none", False, True, rng.uniform(0.0, 0.6, 25)),
        ("none", False, False, rng.beta(2, 8, 975)),
        ("none", True, False, rng.beta(1, 9, 1000)),
        ("suicide", False, True, rng.uniform(0.9, 1.0, 250)),
        ("suicide", False, True, rng.uniform(0.0, 0.6, 50)),
        ("suicide", False, False, rng.uniform(0.5, 0.62, 300)),
        ("suicide", False, False, rng.beta(8, 2, 400)),
    ]
    examples, scores, phrase = [], [], []
    for category, everyday, hit, values in parts:
        for value in values:
            n = len(examples)
            examples.append(safety_train.Example(Labelled(str(n), category, "en", n), everyday))
            scores.append(value)
            phrase.append(hit)
    crisis = np.array([e.item.category != "none" for e in examples])
    hits = np.array(phrase) & crisis

    limits = safety_train.choose_thresholds(np.array(scores), examples, np.array(phrase))
    alerted, _ = safety_train.triage(np.array(scores), np.array(phrase), limits)

    assert (hits & ~alerted).sum() <= safety_train.DEMOTED_HITS * hits.sum()  # 6 of 300


def test_thresholds_that_cannot_keep_both_promises_are_refused() -> None:
    scores, examples = _examples(seed=13, crisis_mean=0.5)
    everyday = np.array([e.everyday for e in examples])
    # The phrase screen flags every crisis line and every hard negative, and the model scores
    # them alike: no confirm threshold spares the hard negatives without demoting crisis hits.
    phrase = ~everyday
    scores = np.where(phrase, 0.5, scores)

    with pytest.raises(ValueError, match="no confirm threshold keeps"):
        safety_train.choose_thresholds(scores, examples, phrase)


def _corpus(directory: Path) -> None:
    directory.mkdir()
    lines = {
        "en_suicide.tsv": [f"i want to end it all {i}\tsuicide\ten" for i in range(20)],
        "en_abuse.tsv": [f"he hits me every night {i}\tabuse\ten" for i in range(20)],
        "en_none_everyday.tsv": [f"walked the dog today {i}\tnone\ten" for i in range(20)],
        "es_none_hardneg.tsv": [f"me muero de risa {i}\tnone\tes" for i in range(20)],
    }
    for name, rows in lines.items():
        (directory / name).write_text("# test\n" + "\n".join(rows) + "\n", encoding="utf-8")


def test_retraining_on_the_same_corpus_writes_identical_weights(tmp_path: Path) -> None:
    _corpus(tmp_path / "training")
    first = safety_train.train(WordEmbedder(), "test", tmp_path / "a", tmp_path / "training")
    second = safety_train.train(WordEmbedder(), "test", tmp_path / "b", tmp_path / "training")

    weights = [(tmp_path / d / "weights.npz").read_bytes() for d in ("a", "b")]
    assert weights[0] == weights[1]
    assert first == second
    assert first["weights_sha256"] == hashlib.sha256(weights[0]).hexdigest()


def test_a_trained_model_loads_with_its_n_gram_head_and_scores_as_its_trainer_did(
    tmp_path: Path,
) -> None:
    _corpus(tmp_path / "training")
    card = safety_train.train(WordEmbedder(), "test", tmp_path / "m", tmp_path / "training")

    line = load_line(tmp_path / "m", WordEmbedder())

    assert line.ngram is not None and card["review_on"] == "crisis"
    assert line.ngram.embedding_weight == safety_train.EMBEDDING_WEIGHT
    texts = ["i want to end it all tonight", "walked the dog today"]
    recipe = safety_train.Recipe()
    with np.load(tmp_path / "m" / "weights.npz") as weights:
        arrays = {name: weights[name] for name in weights.files}
    classes, probabilities = safety_train.predict_category(
        recipe, arrays, WordEmbedder().embed(texts), texts
    )
    crisis, _ = safety_train.two_scores(probabilities, classes)
    assert [v.score for v in line.score_many(texts)] == pytest.approx(crisis)
    assert line.score(texts[0]).review_score is None


def test_a_changed_corpus_changes_the_recorded_corpus_hash(tmp_path: Path) -> None:
    _corpus(tmp_path / "training")
    _, before = safety_train.read_training(tmp_path / "training")
    with (tmp_path / "training" / "en_abuse.tsv").open("a", encoding="utf-8") as f:
        f.write("she locks me in\tabuse\ten\n")

    assert safety_train.read_training(tmp_path / "training")[1] != before


def test_the_committed_model_was_trained_on_the_committed_training_corpus() -> None:
    card = read_card()
    _, corpus_hash = safety_train.read_training()

    assert card.raw["training_corpus_sha256"] == corpus_hash
    weights = (MODEL_DIR / "weights.npz").read_bytes()
    assert card.raw["weights_sha256"] == hashlib.sha256(weights).hexdigest()
    assert card.version.endswith(card.raw["weights_sha256"][:12])


def test_the_committed_card_reviews_on_the_crisis_score_within_its_targets() -> None:
    card = read_card()
    figures = card.raw["out_of_fold"]

    assert card.raw["review_on"] == "crisis" and card.thresholds.confirm is not None
    assert card.thresholds.review <= card.thresholds.alert
    assert figures["hard_negative_alerts"] <= card.raw["targets"]["hard_negative_alerts"] == 0.03
    assert figures["everyday_review_band"] <= card.raw["targets"]["everyday_review_band"] == 0.035
    assert figures["phrase_hits_demoted"] <= card.raw["targets"]["phrase_hits_demoted"] == 0.03


@pytest.mark.parametrize("name", ["heldout_v3.tsv", "heldout_v4.tsv"])
def test_no_held_out_crisis_line_is_in_the_training_corpus(name: str) -> None:
    # Short controls ("yes", "oui", a common idiom) do recur by chance (docs/safety.md lists
    # them); a crisis line shared with training would inflate the reported recall.
    examples, _ = safety_train.read_training()
    training = {e.item.text.casefold() for e in examples}
    lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
    crisis = {i.text.casefold() for i in read_corpus(lines, name) if i.category != "none"}

    assert len(crisis) > 250
    assert not training & crisis


def _setup(load: Callable[[], LearnedLine]) -> LearnedSetup:
    return LearnedSetup(LazyLine(load), Thresholds(alert=0.8, review=0.5))


def test_a_failing_learned_line_leaves_the_verdict_to_the_other_lines() -> None:
    def broken() -> LearnedLine:
        raise ImportError("no model")

    acted, events = three_lines(_setup(broken), None, ScreenResult(False), "hi", "hi", "m1")

    assert acted == ScreenResult(False)
    assert events == []


@pytest.mark.parametrize(
    ("score", "crisis", "band"), [(0.9, True, "alert"), (0.6, False, "review")]
)
def test_only_an_alert_band_score_turns_a_silent_screen_into_a_crisis(
    score: float, crisis: bool, band: str
) -> None:
    class Fixed:
        version = "v9"

        def score(self, text: str) -> LearnedVerdict:
            return LearnedVerdict(score, "overdose", "pt", self.version)

    acted, events = three_lines(_setup(Fixed), None, ScreenResult(False), "x", "x", "m1")

    assert (acted.crisis, acted.rule if crisis else None) == (crisis, "learned" if crisis else None)
    screened, scored = events
    assert isinstance(screened, SafetyScreened) and not screened.crisis
    assert isinstance(scored, SafetyScored)
    assert (scored.band, scored.model_version, scored.category) == (band, "v9", "overdose")
