"""Copied lines: the rest of lines that start like the cursor's, with a measured confidence."""

import json
from pathlib import Path

import numpy as np
import pytest

from model.data.corpus import SourceFile
from model.fim.calibrate_sources import calibrate_copies, measure_copies
from model.fim.completion_request import CompletionRequest
from model.fim.fim_patterns import AGREE_1, AGREE_2, AGREE_3, COPY_KINDS, MAJORITY, copy_candidate
from model.fim.inference import FimCompleter
from model.model_folder import SHIPPED_DIR
from model.runtime.served_model import ServedModel
from model.tokenizer import CodeTokenizer

TESTS = """class TestShapes(unittest.TestCase):
    def test_area(self):
        self.assertEqual(area(2, 3), 6)
    def test_perimeter(self):
        self.assertEqual(area(2, 3), 6)
    def test_other(self):
        self.assertEqual(area(2, 3), 6)
    def test_new(self):
        self.ass"""


def test_lines_that_agree_give_their_rest_and_the_bucket_says_how_many() -> None:
    assert copy_candidate(TESTS, "\n") == _copied("ertEqual(area(2, 3), 6)", AGREE_3)
    two = TESTS.replace("        self.assertEqual(area(2, 3), 6)\n    def test_other", "    def test_other", 1)
    assert copy_candidate(two, "") == _copied("ertEqual(area(2, 3), 6)", AGREE_2)
    one = "import os\nvalue = compute(1)\nprint(value)\nval"
    assert copy_candidate(one, "\nrest()\n") == _copied("ue = compute(1)", AGREE_1)


def test_a_line_below_the_cursor_counts_and_the_text_after_the_cursor_is_left_out() -> None:
    # The editor auto-closed the bracket: the copy stops where the text after the cursor starts.
    below = "\n\ndef h():\n    return g(a, b)\n"
    assert copy_candidate("def f():\n    return g(", ")" + below) == _copied("a, b", AGREE_1)
    # A rest that contradicts the text after the cursor is no candidate.
    assert copy_candidate("def f():\n    return g(", "x)" + below) is None


def test_too_little_typed_or_lines_that_disagree_give_nothing() -> None:
    assert copy_candidate("x = 1\nx = 2\nx", "") is None  # one typed character
    split = "total = a + b\ntotal = a - b\ntotal = a * b\ntotal = a"
    assert copy_candidate(split, "") is None  # three different rests, a minority each
    majority = "result_value = a + b\nresult_value = a + b\nresult_value = c\nresult_value = "
    assert copy_candidate(majority, "") == _copied("a + b", MAJORITY)


class _NoNetwork:
    """A network that must not run."""

    def make_room(self, *args: object, **kwargs: object) -> object:
        raise AssertionError("the network ran")


def _copied(text: str, kind: str) -> object:
    from model.fim.fim_patterns import CopiedLine

    return CopiedLine(text, kind)


def _completer(network: object, precision: dict[str, float]) -> FimCompleter:
    tokenizer = CodeTokenizer.load(SHIPPED_DIR / "tokenizer.json")
    calibration = {"fim_copy": {kind: {"precision": p, "cases": 50} for kind, p in precision.items()}}
    return FimCompleter(ServedModel(network, tokenizer, {"calibration": calibration}))  # type: ignore[arg-type]


def test_a_confident_copy_answers_alone_and_carries_its_measured_precision() -> None:
    completer = _completer(_NoNetwork(), {AGREE_3: 0.95})
    [answer] = completer.complete(CompletionRequest(TESTS, "\n"))
    assert answer.text == "ertEqual(area(2, 3), 6)" and answer.confidence == pytest.approx(0.95)
    # Uncalibrated buckets propose nothing: the network answers.
    with pytest.raises(AssertionError, match="the network ran"):
        _completer(_NoNetwork(), {}).complete(CompletionRequest(TESTS, "\n"))


def test_a_copy_that_would_repeat_the_line_below_is_never_a_candidate(tokenizer_free_network: object) -> None:
    below = "\n        self.assertEqual(area(2, 3), 6)\n"  # the copied line is already the next one
    with pytest.raises(AssertionError, match="the network ran"):
        _completer(_NoNetwork(), {AGREE_3: 0.95}).complete(CompletionRequest(TESTS, below))
    texts = [c.text for c in _completer(tokenizer_free_network, {AGREE_3: 0.95}).complete(
        CompletionRequest(TESTS, below, candidates=3))]
    assert "ertEqual(area(2, 3), 6)" not in texts


def test_a_less_certain_copy_joins_the_network_s_candidates(tokenizer_free_network: object) -> None:
    completer = _completer(tokenizer_free_network, {AGREE_1: 0.3})
    one = "import os\nvalue = compute(1)\nprint(value)\nval"
    texts = {c.text: c.confidence for c in completer.complete(CompletionRequest(one, "\n", candidates=3))}
    assert texts.get("ue = compute(1)") == pytest.approx(0.3) and len(texts) >= 2


def test_calibration_measures_each_bucket_and_writes_its_precision(tmp_path: Path) -> None:
    cases = [(TESTS, "ertEqual(area(2, 3), 6)", "\n", None), (TESTS, "ertTrue(x)", "\n", None),
             ("x = 1\n", "y", "", None)]
    assert measure_copies(cases)[AGREE_3] == (2, 1)
    (tmp_path / "config.json").write_text(json.dumps({"network": {}, "calibration": {"fim": {"bias": 0.0}}}))
    files = [SourceFile("pkg", "tests.py", TESTS.replace("self.ass", "self.assertEqual(area(2, 3), 6)\n") * 3)]
    report = calibrate_copies(tmp_path, files)
    stored = json.loads((tmp_path / "config.json").read_text())["calibration"]
    assert stored["fim"] == {"bias": 0.0} and set(stored["fim_copy"]) == set(COPY_KINDS)
    assert all(0.0 <= entry["precision"] < 1.0 for entry in stored["fim_copy"].values())
    assert "copy_agree_3" in report and np.isfinite([e["precision"] for e in stored["fim_copy"].values()]).all()


def test_the_parse_check_runs_only_when_it_can_change_what_the_server_shows(
    tokenizer_free_network: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    import model.fim.inference
    from model.fim.calibration import FEATURE_NAMES, Calibrator
    from model.languages.python_statement import CursorStatement

    completer = _completer(tokenizer_free_network, {})
    completer.calibrator = Calibrator((0.0,) * len(FEATURE_NAMES), -5.0)  # 0.007, whatever the parse
    parsed: list[str] = []
    real = model.fim.inference.with_parse_check

    def counted(values: list[float], statement: CursorStatement, middle: str) -> list[float]:
        parsed.append(middle)
        return real(values, statement, middle)

    monkeypatch.setattr(model.fim.inference, "with_parse_check", counted)
    completer.complete(CompletionRequest("x = 1\n", "\n", copy_lines=False, min_confidence=0.3))  # never shown
    completer.complete(CompletionRequest("x = 2\n", "\n", copy_lines=False, min_confidence=0.0))  # always shown
    assert parsed == []
    [exact] = completer.complete(CompletionRequest("x = 3\n", "\n", copy_lines=False))  # no threshold: the CLI
    assert parsed == [exact.text]
    # A failed parse takes it from 0.5 to 0.12: at 0.3, the check decides.
    completer.calibrator = Calibrator((0.0,) * (len(FEATURE_NAMES) - 1) + (2.0,), -2.0)
    [decided] = completer.complete(CompletionRequest("x = 4\n", "\n", copy_lines=False, min_confidence=0.3))
    assert parsed == [exact.text, decided.text]
