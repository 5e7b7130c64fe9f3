"""Each source's confidence mapped to the precision it had where it was shown."""

import json
import random
import shutil
from pathlib import Path

import pytest

import model.fim.calibrate_sources
from model.fim.calibrate_sources import calibrate_shown
from model.fim.completion_request import Candidate, CompletionRequest
from model.fim.fim_patterns import AGREE_1, AGREE_3
from model.fim.inference import FimCompleter
from model.fim.left_to_right import KIND as LEFT_TO_RIGHT
from model.fim.shown_calibration import (
    CANVAS,
    CONFIG_KEY,
    COPY,
    MIN_WINS,
    Recalibration,
    ShownCalibration,
    Win,
    fit_shown,
    source_of,
)
from model.model_folder import SHIPPED_DIR
from model.runtime.served_model import ServedModel
from model.tokenizer import CodeTokenizer


def _wins(source: str, count: int, confidence: float, precision: float, seed: int = 0) -> list[Win]:
    rng = random.Random(seed)
    return [Win(source, min(0.95, max(0.05, confidence + rng.uniform(-0.05, 0.05))), rng.random() < precision)
            for _ in range(count)]


def test_a_source_right_less_often_where_it_wins_is_mapped_down_and_a_calibrated_one_kept() -> None:
    wins = _wins(CANVAS, 400, 0.6, 0.1) + _wins(LEFT_TO_RIGHT, 400, 0.6, 0.6, seed=1)
    shown = fit_shown(wins + _wins("phrase", MIN_WINS - 1, 0.6, 0.1, seed=2))
    assert shown.confidence(CANVAS, 0.6) < 0.2
    assert shown.confidence(LEFT_TO_RIGHT, 0.6) == pytest.approx(0.6, abs=0.08)
    assert "phrase" not in shown.by_source and shown.confidence("phrase", 0.6) == 0.6  # too few wins to fit


def test_a_threshold_on_the_shown_confidence_is_one_on_the_source_s_own() -> None:
    shown = ShownCalibration({CANVAS: Recalibration(0.8, -1.5)})
    for threshold in (0.1, 0.3, 0.5, 0.9):
        own = shown.source_threshold(CANVAS, threshold)
        assert own is not None and shown.confidence(CANVAS, own) == pytest.approx(threshold)
    assert shown.source_threshold(LEFT_TO_RIGHT, 0.3) == 0.3  # unmapped
    assert shown.source_threshold(CANVAS, None) is None and shown.source_threshold(CANVAS, 0.0) == 0.0


def test_the_maps_round_trip_and_a_malformed_or_decreasing_one_is_ignored() -> None:
    shown = ShownCalibration({CANVAS: Recalibration(0.8, -1.5), COPY: Recalibration(1.2, 0.1)})
    assert ShownCalibration.from_dict(json.loads(json.dumps(shown.to_dict()))) == shown
    raw = {CANVAS: {"slope": -1.0, "intercept": 0.0}, COPY: "x", LEFT_TO_RIGHT: {"slope": 1.0}}
    assert ShownCalibration.from_dict(raw) == ShownCalibration() == ShownCalibration.from_dict(None)


def test_every_copied_line_bucket_is_one_source() -> None:
    assert source_of("") == CANVAS and source_of(AGREE_1) == source_of(AGREE_3) == COPY
    assert source_of(LEFT_TO_RIGHT) == LEFT_TO_RIGHT


ONE = "import os\nvalue = compute(1)\nprint(value)\nval"


def _completer(network: object, shown: ShownCalibration) -> FimCompleter:
    """A tiny random network (its own answers far from confident) and a copied-line bucket of 0.3."""
    tokenizer = CodeTokenizer.load(SHIPPED_DIR / "tokenizer.json")
    calibration = {"fim_copy": {AGREE_1: {"precision": 0.3, "cases": 50}}, CONFIG_KEY: shown.to_dict()}
    return FimCompleter(ServedModel(network, tokenizer, {"calibration": calibration}))  # type: ignore[arg-type]


def test_the_completer_answers_with_the_mapped_confidence(tokenizer_free_network: object) -> None:
    request = CompletionRequest(ONE, "\n", candidates=3)
    plain = {c.text: c for c in _completer(tokenizer_free_network, ShownCalibration()).complete(request)}
    assert plain["ue = compute(1)"].confidence == pytest.approx(0.3)
    lifted = ShownCalibration({COPY: Recalibration(1.0, 1.0)})
    mapped = {c.text: c for c in _completer(tokenizer_free_network, lifted).complete(request)}
    assert mapped["ue = compute(1)"].confidence == pytest.approx(lifted.confidence(COPY, 0.3))
    canvas = [c for c in mapped.values() if c.copied == ""]
    assert canvas and all(c.confidence == pytest.approx(plain[c.text].confidence) for c in canvas)  # unmapped


class _Scripted:
    """Stands in for the completer: the canvas answers "x", as sure as the span's prefix
    says; the head answers the spans marked so; nothing answers the rest."""

    def __init__(self, loaded: object) -> None:
        pass

    def complete(self, request: CompletionRequest) -> list[Candidate]:
        kind, _, confidence = request.prefix.partition(" ")
        if kind == "none":
            return []
        return [Candidate("x", float(confidence), 1, 1, copied="" if kind == "canvas" else LEFT_TO_RIGHT)]


def test_calibration_fits_the_maps_on_the_winners_and_stores_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "model"
    shutil.copytree(SHIPPED_DIR, folder)
    # The canvas wins at 0.8 and is right 2 times in 5, at 0.3 and right 1 time in 20; the
    # head wins too rarely to map; some spans get no answer.
    cases = []
    for i in range(100):
        cases.append(("canvas 0.8", "x" if i % 5 < 2 else "y", "", None))
        cases.append(("canvas 0.3", "x" if i % 20 == 0 else "y", "", None))
        cases.append(("none", "x", "", None))
        if i % 10 == 0:
            cases.append(("head 0.9", "x", "", None))
    monkeypatch.setattr(model.fim.calibrate_sources, "with_workspace", lambda files, count, seed: cases)
    monkeypatch.setattr(model.fim.calibrate_sources, "FimCompleter", _Scripted)
    report = calibrate_shown(folder, [])
    assert f"{len(cases)} held-out spans completed as served" in report and f"{LEFT_TO_RIGHT} 5 (kept)" in report
    stored = ShownCalibration.from_dict(json.loads((folder / "config.json").read_text())["calibration"][CONFIG_KEY])
    assert set(stored.by_source) == {CANVAS}
    assert stored.confidence(CANVAS, 0.8) == pytest.approx(0.4, abs=0.05)
    assert stored.confidence(CANVAS, 0.3) == pytest.approx(0.05, abs=0.03)
