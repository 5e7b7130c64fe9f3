"""Each source's confidence mapped to the precision it had where it was shown."""

import json
import random
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

import model.fim.calibrate_shown
from model.data.corpus import SourceFile
from model.fim.calibrate_shown import calibrate_shown
from model.fim.completion_request import Candidate, CompletionRequest
from model.fim.cursor_place import EMPTY, END, INSIDE, place_of
from model.fim.fim_patterns import AGREE_1, AGREE_3
from model.fim.inference import FimCompleter
from model.fim.left_to_right import KIND as LEFT_TO_RIGHT
from model.fim.shown_calibration import (
    CANVAS,
    CONFIG_KEY,
    COPY,
    MIN_WINS,
    PYTHON_AT,
    PYTHON_FAMILY,
    Recalibration,
    ShownAt,
    ShownCalibration,
    Win,
    fit_shown,
    leave_package_out,
    source_of,
)
from model.languages import TYPESCRIPT
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
    # head wins too rarely to map; some spans get no answer. Four packages; one TypeScript file.
    cases = []
    for i in range(100):
        source = SourceFile(f"package{i % 4}", "a.py", "")
        cases.append((source, "canvas 0.8", "x" if i % 5 < 2 else "y", ""))
        cases.append((source, "canvas 0.3", "x" if i % 20 == 0 else "y", ""))
        cases.append((source, "none", "x", ""))
        if i % 10 == 0:
            cases.append((source, "head 0.9", "x", ""))
    cases.append((SourceFile("package0", "b.ts", ""), "canvas 0.8", "x", ""))
    monkeypatch.setattr(model.fim.calibrate_shown, "cut_from_files", lambda files, count, seed: cases)
    monkeypatch.setattr(model.fim.calibrate_shown, "workspaces", lambda files: defaultdict(lambda: ({}, None)))
    monkeypatch.setattr(model.fim.calibrate_shown, "RelatedLines", lambda *args, **kwargs: None)
    monkeypatch.setattr(model.fim.calibrate_shown, "FimCompleter", _Scripted)
    report = calibrate_shown(folder, [])
    assert f"{len(cases)} held-out spans completed as served, from 4 packages" in report
    assert f"python: {len(cases) - 1} spans; winners by source: canvas 200, {LEFT_TO_RIGHT} 10" in report
    assert "javascript: 1 spans" in report
    # Each source's wins and what of them clears the default threshold (none here: 0.4 at best).
    assert "by source, mapped as above, at threshold 0.75:" in report
    assert any(line.split()[:4] == [CANVAS, "200", "0", "0"] for line in report.splitlines())
    stored = ShownCalibration.from_dict(json.loads((folder / "config.json").read_text())["calibration"][CONFIG_KEY])
    assert set(stored.by_source) == {CANVAS} and stored.by_family == {"javascript": {}}  # one win: too few
    assert stored.confidence(CANVAS, 0.8) == pytest.approx(0.4, abs=0.05)
    assert stored.confidence(CANVAS, 0.3) == pytest.approx(0.05, abs=0.03)
    # JavaScript has its own (empty) maps: its confidences are its sources' own, not Python's.
    assert stored.confidence(CANVAS, 0.8, ShownAt("javascript", EMPTY)) == 0.8


def test_each_cursor_place_gets_its_own_offset_and_thresholds_stay_exact_there() -> None:
    rng = random.Random(3)
    # The same confidence is right 7 times in 10 on an empty line, 2 in 10 inside a line.
    wins = [Win(CANVAS, 0.5 + rng.uniform(-0.05, 0.05), rng.random() < precision, ShownAt(PYTHON_FAMILY, place))
            for place, precision in ((EMPTY, 0.7), (INSIDE, 0.2), (END, 0.5)) for _ in range(300)]
    shown = fit_shown(wins)
    empty, inside = ShownAt(PYTHON_FAMILY, EMPTY), ShownAt(PYTHON_FAMILY, INSIDE)
    assert shown.confidence(CANVAS, 0.5, empty) == pytest.approx(0.7, abs=0.08)
    assert shown.confidence(CANVAS, 0.5, inside) == pytest.approx(0.2, abs=0.08)
    for at in (empty, inside):
        own = shown.source_threshold(CANVAS, 0.6, at)
        assert own is not None and shown.confidence(CANVAS, own, at) == pytest.approx(0.6)
    assert ShownCalibration.from_dict(json.loads(json.dumps(shown.to_dict()))) == shown


def _graded(precision: float, at: ShownAt = PYTHON_AT, package: str = "", seed: int = 0) -> list[Win]:
    """Wins at 0.5 and 0.7, right ``precision`` ∓ 0.1 of the time: more often when surer."""
    rng = random.Random(seed)
    return [Win(CANVAS, confidence, rng.random() < precision + step, at, package)
            for confidence, step in ((0.5, -0.1), (0.7, 0.1)) for _ in range(150)]


def test_another_language_family_is_mapped_on_its_own_wins_and_python_s_stay_the_fallback() -> None:
    python = _graded(0.6)
    javascript = _graded(0.15, ShownAt("javascript", EMPTY), seed=4)
    shown = fit_shown(python + javascript)
    assert shown.confidence(CANVAS, 0.6) == pytest.approx(0.6, abs=0.08)
    assert shown.confidence(CANVAS, 0.6, ShownAt("javascript", EMPTY)) < 0.25
    assert shown.confidence(CANVAS, 0.6, ShownAt("go", EMPTY)) == shown.confidence(CANVAS, 0.6)  # no maps of its own


def test_leave_package_out_scores_each_package_by_maps_fitted_on_the_others() -> None:
    # Package "b" is right far less often: the maps fitted without it can't know that.
    wins = _graded(0.6, package="a") + _graded(0.15, package="b", seed=5)
    mapped = leave_package_out(wins)
    assert mapped[-1] == pytest.approx(0.7, abs=0.1)  # "b"'s surer win, by "a"'s map
    assert mapped[0] < 0.15  # "a"'s less sure win, by "b"'s


def test_a_request_s_place_is_where_its_cursor_stands_on_its_line() -> None:
    assert place_of("x = f(", ")\n") == INSIDE and place_of("x = f(", "\nnext") == END
    assert place_of("def f():\n    ", "\n") == EMPTY and place_of("", "") == EMPTY
    assert CompletionRequest("a\n", "b", language=TYPESCRIPT).shown_at == ShownAt("javascript", INSIDE)
