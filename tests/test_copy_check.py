"""The network's second opinion on weakly supported copied lines."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import model.fim.calibrate_sources
from model.fim.calibrate_sources import calibrate_copy_check
from model.fim.calibration import Calibrator
from model.fim.completion_request import CompletionRequest
from model.fim.copy_check import CHECK_FEATURES, CONFIG_KEY, check_features
from model.fim.fim_patterns import (
    AGREE_1,
    AGREE_3,
    MAJORITY,
    WORKSPACE_AGREE_1,
    WORKSPACE_MAJORITY,
    LineIndex,
    RelatedLines,
)
from model.fim.inference import FimCompleter
from model.languages import JAVASCRIPT, UNKNOWN_PARSE
from model.model_folder import SHIPPED_DIR
from model.runtime.served_model import ServedModel
from model.runtime.serving import load_served_model
from model.tokenizer import CodeTokenizer


def test_the_features_are_the_copy_s_log_probabilities_where_its_tokens_would_go() -> None:
    first_pass = np.full((4, 6), 0.1)
    first_pass[0, 3], first_pass[1, 4], first_pass[2, 1] = 0.5, 0.25, 0.4  # tokens 3, 4, then the end (1)
    mean_logp, min_logp, end_logp, majority, parsed = check_features(first_pass, [3, 4], 1, MAJORITY, 1.0) or []
    assert mean_logp == pytest.approx((np.log(0.5) + np.log(0.25)) / 2)
    assert min_logp == pytest.approx(np.log(0.25)) and end_logp == pytest.approx(np.log(0.4))
    assert majority == 1.0 and check_features(first_pass, [3, 4], 1, AGREE_1, 1.0)[3] == 0.0  # type: ignore[index]
    assert check_features(first_pass, [3, 4], 1, WORKSPACE_MAJORITY, 1.0)[3] == 1.0  # type: ignore[index]
    assert check_features(first_pass, [3, 4], 1, WORKSPACE_AGREE_1, 1.0)[3] == 0.0  # type: ignore[index]
    assert parsed == 1.0  # passed through: measured by the caller
    assert check_features(first_pass, [3, 4, 5, 2], 1, AGREE_1, 1.0) is None  # no room left for its end


ONE = "import os\nvalue = compute(1)\nprint(value)\nval"


BUCKETS = {AGREE_1: 0.3, AGREE_3: 0.95}


def _completer(network: object, check: Calibrator | None, buckets: dict[str, float] = BUCKETS) -> FimCompleter:
    """The shipped tokenizer with ``network`` (tiny and random: its own candidates are far
    less confident than any copy, so the copy is always among the answers) and copied-line
    buckets of these precisions."""
    tokenizer = CodeTokenizer.load(SHIPPED_DIR / "tokenizer.json")
    calibration = {"fim_copy": {kind: {"precision": precision, "cases": 50} for kind, precision in buckets.items()}}
    if check is not None:
        calibration[CONFIG_KEY] = check.to_dict(CHECK_FEATURES)  # type: ignore[assignment]
    return FimCompleter(ServedModel(network, tokenizer, {"calibration": calibration}))  # type: ignore[arg-type]


def test_a_weak_copy_takes_its_confidence_from_the_check_of_the_first_pass(tokenizer_free_network: object) -> None:
    request = CompletionRequest(ONE, "\n", candidates=3)
    unchecked = {c.text: c for c in _completer(tokenizer_free_network, None).complete(request)}
    assert unchecked["ue = compute(1)"].confidence == pytest.approx(0.3)  # the bucket's precision
    sure = Calibrator((0.0,) * len(CHECK_FEATURES), 2.0)  # says 0.88 whatever the network thinks
    checked = {c.text: c for c in _completer(tokenizer_free_network, sure).complete(request)}["ue = compute(1)"]
    assert checked.confidence == pytest.approx(sure([0.0] * len(CHECK_FEATURES))) and checked.copied == AGREE_1
    completer = _completer(tokenizer_free_network, sure)
    expected = completer.patterns.copy_check_features("ue = compute(1)", AGREE_1, completer.first_pass(ONE, "\n"), 1.0)
    assert expected is not None and checked.features == pytest.approx(expected, abs=1e-5)


def test_a_copy_that_breaks_its_statement_is_less_confident(tokenizer_free_network: object) -> None:
    # Only the statement-parses feature counts: +2 when the statement parses with the copy.
    check = Calibrator((0.0, 0.0, 0.0, 0.0, 4.0), -2.0)
    completer = _completer(tokenizer_free_network, check)
    mends = {c.text: c for c in completer.complete(CompletionRequest(ONE, "\n", candidates=3))}["ue = compute(1)"]
    stray = "\n    pass\n"  # an indented line after the statement: it can't parse, whatever the copy
    breaks = {c.text: c for c in completer.complete(CompletionRequest(ONE, stray, candidates=3))}
    assert mends.confidence == pytest.approx(check([0.0, 0.0, 0.0, 0.0, 1.0]))
    assert breaks["ue = compute(1)"].features[-1] == 0.0
    # Another language's parser judges it: in JavaScript an indented ``pass`` is a statement.
    other = {c.text: c for c in completer.complete(CompletionRequest(ONE, stray, candidates=3, language=JAVASCRIPT))}
    assert other["ue = compute(1)"].features[-1] == 1.0
    # The server's threshold: a copy that can't reach it either way is not parsed.
    unreachable = Calibrator((0.0, 0.0, 0.0, 0.0, 1.0), -5.0)
    served = _completer(tokenizer_free_network, unreachable).complete(
        CompletionRequest(ONE, "\n", candidates=3, min_confidence=0.5))
    assert {c.text: c for c in served}["ue = compute(1)"].features[-1] == UNKNOWN_PARSE


def test_a_weak_copy_from_another_file_is_checked_too(tokenizer_free_network: object) -> None:
    # Copies from the workspace's other files that one line (or a majority) supports were
    # right on 4 of 16 shown in packages in no corpus at their bucket's flat 0.56.
    workspace = RelatedLines(LineIndex({"other.py": "from pkg.api import document\n"}))
    typed = "import os\nfrom pkg.api import "
    never = Calibrator((0.0,) * len(CHECK_FEATURES), -5.0)
    for check, expected in ((None, 0.4), (never, never([0.0] * len(CHECK_FEATURES)))):
        completer = _completer(tokenizer_free_network, check, {WORKSPACE_AGREE_1: 0.4})
        answers = completer.complete(CompletionRequest(typed, "\n", candidates=3, related=workspace))
        [copied] = [c for c in answers if c.text == "document"]
        assert copied.copied == WORKSPACE_AGREE_1 and copied.confidence == pytest.approx(expected)
    # A checked copy never answers alone, however precise its bucket: the check decides.
    sure = Calibrator((0.0,) * len(CHECK_FEATURES), 2.0)
    completer = _completer(tokenizer_free_network, sure, {WORKSPACE_AGREE_1: 0.6})
    [alone] = completer.complete(CompletionRequest(typed, "\n", related=workspace))
    assert alone.text == "document" and alone.confidence == pytest.approx(sure([0.0] * len(CHECK_FEATURES)))


def test_a_well_supported_copy_is_not_checked(tokenizer_free_network: object) -> None:
    tests = "x.assertEqual(a, 1)\nx.assertEqual(a, 1)\nx.assertEqual(a, 1)\nx.ass"
    never = Calibrator((0.0,) * len(CHECK_FEATURES), -5.0)
    [answer] = _completer(tokenizer_free_network, never).complete(CompletionRequest(tests, "\n"))
    assert answer.text == "ertEqual(a, 1)" and answer.confidence == pytest.approx(0.95)


def test_calibration_fits_the_check_on_held_out_copies_and_stores_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "model"
    shutil.copytree(SHIPPED_DIR, folder)
    # Forty held-out copies of one line, right half the time.
    cases = [(ONE, "ue = compute(1)" if i % 2 else "ue = other()", "\n", None) for i in range(40)]
    monkeypatch.setattr(model.fim.calibrate_sources, "with_workspace", lambda files, count, seed: cases)
    report = calibrate_copy_check(folder, [])
    assert "40 held-out copies, 50.0% right; fitted on 20, measured on 20" in report
    stored = json.loads((folder / "config.json").read_text())["calibration"][CONFIG_KEY]
    assert stored["features"] == list(CHECK_FEATURES)
    assert FimCompleter(load_served_model(folder)).patterns.copy_check is not None
    # Only one outcome to learn from: nothing is written.
    monkeypatch.setattr(model.fim.calibrate_sources, "with_workspace", lambda files, count, seed: cases[1::2])
    (folder / "config.json").write_text(json.dumps({**json.loads((folder / "config.json").read_text()),
                                                    "calibration": {}}))
    assert "too few of each outcome" in calibrate_copy_check(folder, [])
    assert CONFIG_KEY not in json.loads((folder / "config.json").read_text())["calibration"]

