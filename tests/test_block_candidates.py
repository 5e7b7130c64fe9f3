"""Blocks where a body is expected: the site, the cut, the calibrator, and the block ranked
with the lines' candidates on the shipped model."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from model.data.corpus import SourceFile
from model.fim.block_candidates import BlockCalibration, BlockWriter
from model.fim.block_site import BlockSite, block_site, cut_block, missing_bodies
from model.fim.calibrate_blocks import (
    MIN_RIGHT,
    BlockCase,
    block_holes,
    calibrate_blocks,
    fit_blocks,
    leave_package_out,
)
from model.fim.calibration import Calibrator
from model.fim.completion_request import CompletionRequest
from model.fim.inference import FimCompleter
from model.languages import JAVASCRIPT
from model.model_folder import SHIPPED_DIR
from model.runtime.served_model import ServedModel
from model.runtime.serving import load_served_model
from model.sampler import Denoised

PYTHON = (
    "def load(path):\n"
    "    with open(path) as handle:\n"
    "        text = handle.read()\n"
    "        return text.strip()\n"
    "\n"
    "\n"
    "def size(path):\n"
    "    return len(load(path))\n"
)


def test_a_site_is_an_indented_empty_line_after_an_opener_whose_body_is_missing() -> None:
    site = block_site("def load(path):\n    ", "\n\n\ndef size(path):\n", "python")
    assert site == BlockSite(opener_indent=0, before_code=False, suffix_first="def size(path):")
    assert block_site("x = {\n    ", "\n}\n", "python") == BlockSite(0, False, "}")
    assert block_site("  if (ok) {\n    ", "\n  }\n", "javascript") == BlockSite(2, False, "}")
    # HumanEval's form: at a line's start holding the code after the hole.
    assert block_site("def f():\n", "    return 1\n", "python") is None  # that code is the body
    assert block_site("    def f():\n", "    x = 1\n", "python") == BlockSite(4, True, "x = 1")


@pytest.mark.parametrize(("prefix", "suffix"), [
    ("def load(path):\n    x = ", "\n"),  # code before the cursor
    ("def load(path):\n    ", "\n    return 1\n"),  # the body is there
    ("# a comment ending so:\n    ", "\n"),  # a comment is no opener
    ("    if x:\n    ", "\n"),  # at the opener's depth: the user closed the block
    ("x = 1\n    ", "\n"),  # no opener
])
def test_no_site_elsewhere(prefix: str, suffix: str) -> None:
    assert block_site(prefix, suffix, "python") is None
    assert block_site(prefix, suffix, "go") is None  # a family without openers has none


def test_a_block_ends_where_its_indentation_closes_or_the_suffix_takes_over() -> None:
    site = BlockSite(opener_indent=0, before_code=False, suffix_first="def size(path):")
    prefix = "def load(path):\n    "
    assert cut_block(site, prefix, "a = 1\n    return a\nprint(a)\n") == "a = 1\n    return a"
    assert cut_block(site, prefix, "a = 1\n    b = 2\n\n    def size(path):") == "a = 1\n    b = 2"
    assert cut_block(site, prefix, "a = 1\n\n    return a\n\n") == "a = 1\n\n    return a"
    assert cut_block(site, prefix, "return 1\n") is None  # one line is the lines' to offer
    long = "\n".join(["a = 1"] + ["    a += 1"] * 20)
    assert cut_block(site, prefix, long) == "\n".join(["a = 1"] + ["    a += 1"] * 7)
    at_line_start = BlockSite(opener_indent=4, before_code=True, suffix_first="x = 1")
    assert cut_block(at_line_start, "    def f():\n", "        a = 1\n        return a\n    x = 1") \
        == "        a = 1\n        return a\n"


def test_missing_bodies_leave_block_sites_and_count_one_line_bodies() -> None:
    bodies = [PYTHON[start:end] for start, end in missing_bodies(PYTHON, "python")]
    assert bodies == [
        "with open(path) as handle:\n        text = handle.read()\n        return text.strip()",
        "text = handle.read()\n        return text.strip()",
        "return len(load(path))",
    ]
    for start, end in missing_bodies(PYTHON, "python"):
        assert block_site(PYTHON[:start], PYTHON[end:], "python") is not None
    nine = "def f():\n" + "    x = 1\n" * 9
    assert missing_bodies(nine, "python") == []  # longer than a block


def test_block_holes_draw_from_served_files_only() -> None:
    files = [SourceFile("pkg", "m.py", PYTHON), SourceFile("pkg", "m.go", "func f() {\n\tx := 1\n}\n")]
    holes = block_holes(files, 10, seed=0)
    assert len(holes) == 3 and {source.path for source, _, _ in holes} == {"m.py"}


def _case(package: str, right: bool, mean: float) -> BlockCase:
    return BlockCase("python", package, 2, [mean, mean - 1, 0.7, 1.0, float(right)], right)


def test_a_family_gets_a_calibrator_only_with_enough_right_blocks() -> None:
    few = [_case("a", n < MIN_RIGHT - 1, -0.1 * n) for n in range(40)]
    assert fit_blocks(few).by_family == {}
    enough = [_case("ab"[n % 2], n % 3 == 0, -0.05 * (n % 3) - 0.01 * n) for n in range(90)]
    fitted = fit_blocks(enough).by_family["python"]
    right = [c for c in enough if c.right]
    wrong = [c for c in enough if not c.right]
    assert min(fitted(c.values or []) for c in right) > max(fitted(c.values or []) for c in wrong)
    scored = leave_package_out(enough)
    assert all(s is not None for s in scored)
    calibration = fit_blocks(enough)
    assert BlockCalibration.from_dict(calibration.to_dict()) == calibration
    assert BlockCalibration.from_dict({"python": {"features": ["other"], "weights": [1.0], "bias": 0.0}}) \
        == BlockCalibration({})


@pytest.fixture(scope="module")
def served() -> ServedModel:
    return load_served_model(SHIPPED_DIR)


def test_a_block_is_reachable_only_with_a_calibrator_that_can_clear_the_threshold(served: ServedModel) -> None:
    request = CompletionRequest("def f():\n    ", "\n", min_confidence=0.75)
    none = BlockWriter(served.network, served.tokenizer, BlockCalibration({}))
    assert none.site(request) is None and not none.reachable(request)
    low = BlockWriter(served.network, served.tokenizer, BlockCalibration({"python": Calibrator((0.0,) * 5, -5.0)}))
    assert low.site(request) is not None and not low.reachable(request)
    assert low.reachable(replace(request, min_confidence=None))  # calibration wants every confidence
    high = BlockWriter(served.network, served.tokenizer, BlockCalibration({"python": Calibrator((0.0,) * 5, 5.0)}))
    assert high.reachable(request)
    assert high.site(replace(request, language=JAVASCRIPT)) is None  # no JavaScript calibrator


def _writing(completer: FimCompleter, text: str, probability: float) -> Denoised:
    tokens = [*completer.tokenizer.encode(text), completer.tokenizer.end_of_middle_id]
    return Denoised(tokens, [probability] * len(tokens), steps=2)


def test_the_server_offers_a_block_that_clears_the_threshold_and_its_lines_otherwise(
        served: ServedModel, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix, suffix = "def mean(values):\n    ", "\n\n\ndef main():\n    print(mean([1, 2]))\n"
    block = "total = sum(values)\n    return total / len(values)"
    completer = FimCompleter(served)
    sure = Calibrator((0.0, 0.0, 0.0, 0.0, 0.0), 3.0)  # every block 0.95
    completer.blocks = BlockWriter(served.network, served.tokenizer, BlockCalibration({"python": sure}))
    monkeypatch.setattr(completer.blocks, "denoised", lambda cache, should_stop=None: _writing(
        completer, block + "\nprint(total)\n", 0.9))
    request = CompletionRequest(prefix, suffix, max_steps=1, min_confidence=0.75)
    answers = completer.complete(request)
    assert answers[0].text == block and answers[0].copied == "block"
    assert answers[0].confidence == pytest.approx(0.9526, abs=1e-3)
    # The lines keep their own confidences beside it.
    several = replace(request, candidates=3, min_confidence=None)
    with_block = [c for c in completer.complete(several) if c.copied != "block"]
    without = completer.complete(replace(several, blocks=False))
    assert [(c.text, c.confidence) for c in with_block] == [(c.text, c.confidence) for c in without][:len(with_block)]
    # Below the threshold the block is not offered as the answer; the lines' candidates stand.
    completer.blocks = BlockWriter(served.network, served.tokenizer,
                                   BlockCalibration({"python": Calibrator((0.0,) * 5, -3.0)}))
    monkeypatch.setattr(completer.blocks, "denoised", lambda cache, should_stop=None: pytest.fail("denoised"))
    lines = completer.complete(request)
    assert all(c.copied != "block" for c in lines)
    assert completer.complete(replace(request, blocks=False)) == lines


def test_calibrate_blocks_stores_what_it_fitted_and_reports_each_family(tmp_path: Path) -> None:
    import json
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(SHIPPED_DIR, folder)
    script = "function f(a) {\n  const b = a;\n  return b;\n}\n"
    files = [SourceFile("a", "m.py", PYTHON), SourceFile("b", "n.js", script)]
    report = calibrate_blocks(folder, files, count=10)
    stored = json.loads((folder / "config.json").read_text())["calibration"]["fim_block"]
    assert BlockCalibration.from_dict(stored).by_family.keys() <= {"python", "javascript"}
    assert "python: 3 bodies" in report and "javascript: 1 bodies" in report
    assert "each package by calibrators fitted on the others" in report
