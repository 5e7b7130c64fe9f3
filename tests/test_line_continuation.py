"""The cursor's line continued as its last tokens continue elsewhere in the file."""

import json
import math
import shutil
import time
from pathlib import Path

import pytest

import model.fim.calibrate_sources
import model.fim.inference
from model.fim.calibrate_sources import calibrate_continuation
from model.fim.calibration import Calibrator
from model.fim.completion_request import CompletionRequest
from model.fim.fim_patterns import AGREE_3
from model.fim.inference import FimCompleter
from model.fim.line_continuation import CONFIG_KEY, CONTINUATION_FEATURES, KIND, MAX_TOKENS, LineContinuer
from model.model_folder import SHIPPED_DIR
from model.runtime.served_model import ServedModel
from model.runtime.serving import load_served_model
from model.sampler import denoise
from model.tokenizer import CodeTokenizer

CALLS = "result = combine(alpha, beta)\nprint(result)\nother = combine(al"


def test_a_run_of_tokens_seen_before_is_continued_to_the_end_of_the_line() -> None:
    found = LineContinuer().continuation("total = combine(alpha, beta)\nother = combine(", "\n")
    assert found is not None and found.text == "alpha, beta)"
    # Every step had one follower; the shortest run it matched was the two tokens "combine(".
    assert found.min_share == 1.0 and found.min_order >= 2


def test_a_word_typed_halfway_is_finished_by_a_token_that_starts_with_it() -> None:
    found = LineContinuer().continuation(CALLS, "\n")
    assert found is not None and found.text == "pha, beta)"


def test_the_text_after_the_cursor_must_end_the_continuation() -> None:
    continuer = LineContinuer()
    found = continuer.continuation(CALLS, ")\nrest()\n")  # the editor closed the bracket
    assert found is not None and found.text == "pha, beta"
    assert continuer.continuation(CALLS, " or None\n") is None  # contradicts what follows


def test_the_text_below_the_cursor_is_searched_too_but_no_run_crosses_the_cursor() -> None:
    found = LineContinuer().continuation("import os\nvalue = parse(", "\n\nmore = parse(text, strict=True)\n")
    assert found is not None and found.text == "text, strict=True)"
    # "x = 1" then the cursor then "2": "1" is not followed by the suffix's first token.
    assert LineContinuer().continuation("a = 0\nx = 1", "2\n") is None


def test_nothing_is_offered_without_support() -> None:
    continuer = LineContinuer()
    assert continuer.continuation("a = 1\nzzz", "\n") is None  # never seen
    assert continuer.continuation("a = 1\n    ", "\n") is None  # this indentation never seen
    assert continuer.continuation("no line break", "\n") is None


def test_an_empty_line_is_continued_from_the_line_break_and_indentation_before_it() -> None:
    found = LineContinuer().continuation("def f():\n    return 1\ndef g():\n    ", "\n")
    assert found is not None and found.text == "return 1"


def test_requests_on_other_text_never_see_the_last_one_s_tokens() -> None:
    continuer = LineContinuer()
    assert continuer.continuation(CALLS, "\n") is not None
    assert continuer.continuation("x = 1\nother = combine(al", "\n") is None  # the cache was of CALLS


def test_a_continuation_is_bounded() -> None:
    line = " + ".join(f"v{i}" for i in range(200))
    found = LineContinuer().continuation(f"total = {line}\nagain = v0", "\n")
    assert found is not None and found.text.startswith(" + v1 + v2") and found.text.count("+") <= MAX_TOKENS // 2


def _completer(network: object, check: Calibrator | None) -> FimCompleter:
    tokenizer = CodeTokenizer.load(SHIPPED_DIR / "tokenizer.json")
    calibration: dict[str, object] = {"fim_copy": {AGREE_3: {"precision": 0.95, "cases": 50}}}
    if check is not None:
        calibration[CONFIG_KEY] = check.to_dict(CONTINUATION_FEATURES)
    return FimCompleter(ServedModel(network, tokenizer, {"calibration": calibration}))  # type: ignore[arg-type]


def test_the_completer_offers_it_with_the_calibrated_confidence(tokenizer_free_network: object) -> None:
    sure = Calibrator((0.0,) * len(CONTINUATION_FEATURES), 2.0)  # says 0.88 whatever the features
    completer = _completer(tokenizer_free_network, sure)
    answers = {c.text: c for c in completer.complete(CompletionRequest(CALLS, "\n", candidates=3))}
    continued = answers["pha, beta)"]
    assert continued.copied == KIND and continued.confidence == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert len(continued.features) == len(CONTINUATION_FEATURES)
    # Not calibrated (an older model folder): never offered.
    plain = _completer(tokenizer_free_network, None).complete(CompletionRequest(CALLS, "\n", candidates=3))
    assert all(c.copied != KIND for c in plain)
    # Calibration's network-only scoring asks for no copies: no continuation either.
    alone = completer.complete(CompletionRequest(CALLS, "\n", candidates=3, copy_lines=False))
    assert all(c.copied != KIND for c in alone)


def test_a_copied_line_comes_first_and_then_no_continuation_is_made(tokenizer_free_network: object) -> None:
    sure = Calibrator((0.0,) * len(CONTINUATION_FEATURES), 2.0)
    tests = "x.assertEqual(a, 1)\nx.assertEqual(a, 1)\nx.assertEqual(a, 1)\nx.ass"
    answers = _completer(tokenizer_free_network, sure).complete(CompletionRequest(tests, "\n", candidates=3))
    assert answers[0].text == "ertEqual(a, 1)" and all(c.copied != KIND for c in answers)


def test_a_failed_lookup_of_continuations_reaches_the_caller_once_the_canvas_s_pass_is_done(
    tokenizer_free_network: object, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The continuations are looked up while the canvas's pass runs on a thread of its own
    (``FimCompleter._denoised_and_continued``); the room is the pass's until it is done,
    and the next request builds on it, so a failed lookup must not return before."""
    completer = _completer(tokenizer_free_network, Calibrator((0.0,) * len(CONTINUATION_FEATURES), 2.0))
    passes_done: list[object] = []

    def slow_denoise(*args: object, **kwargs: object) -> object:
        time.sleep(0.2)
        run = denoise(*args, **kwargs)  # type: ignore[arg-type]
        passes_done.append(run)
        return run

    def failing(*args: object) -> object:
        raise RuntimeError("lookup failed")

    monkeypatch.setattr(model.fim.inference, "denoise", slow_denoise)
    monkeypatch.setattr(completer.patterns, "continuations", failing)
    with pytest.raises(RuntimeError, match="lookup failed"):
        completer.complete(CompletionRequest(CALLS, "\n"))
    assert len(passes_done) == 1


def test_calibration_fits_on_held_out_continuations_and_stores_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "model"
    shutil.copytree(SHIPPED_DIR, folder)
    cases = [(CALLS, "pha, beta)" if i % 2 else "pha)", "\n", None) for i in range(40)]
    monkeypatch.setattr(model.fim.calibrate_sources, "with_workspace", lambda files, count, seed: cases)
    report = calibrate_continuation(folder, [])
    assert "offered on 40 of" in report and "50.0% right; fitted on 20, measured on 20" in report
    stored = json.loads((folder / "config.json").read_text())["calibration"][CONFIG_KEY]
    assert stored["features"] == list(CONTINUATION_FEATURES)
    assert FimCompleter(load_served_model(folder)).patterns.continuation_check is not None
    monkeypatch.setattr(model.fim.calibrate_sources, "with_workspace", lambda files, count, seed: cases[1::2])
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "calibration": {}}))
    assert "too few of each outcome" in calibrate_continuation(folder, [])
    assert CONFIG_KEY not in json.loads((folder / "config.json").read_text())["calibration"]


def test_lines_too_long_to_read_on_every_keystroke_get_nothing() -> None:
    data = "values = [" + "1, " * 200
    continuer = LineContinuer()
    assert continuer.continuation(f"{data}]\n{data}", "]\n") is None  # the cursor's line is too long
    assert continuer.continuation("values = [1, 2]\nvalues = [", "]" + " " * 500 + "\n") is None
    assert continuer.continuation("values = [1, 2]\nvalues = [", "]\n") is not None


def test_a_continuation_that_breaks_its_statement_is_not_offered_but_a_header_awaiting_its_body_is(
        tokenizer_free_network: object) -> None:
    # Every `**kwargs)` in the file goes on with `:`: a `def`'s header. After a finished call it breaks the line.
    defs = "".join(f"def f{n}(*args, **kwargs):\n    return {n}\n\n\n" for n in range(3))
    sure = Calibrator((0.0,) * len(CONTINUATION_FEATURES), 2.0)  # says 0.88 whatever the features
    completer = _completer(tokenizer_free_network, sure)
    call = defs + "class A:\n    def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)"
    assert LineContinuer().continuation(call, "\n") is not None  # offered, and 0.88 by its calibrator …
    served = CompletionRequest(call, "\n", candidates=3, min_confidence=0.3)
    assert all(c.text != ":" for c in completer.complete(served))  # … but `super().__init__(…):` is not shown
    header = defs + "def f3(*args, **kwargs)"  # new code: the header is typed before its body
    answers = completer.complete(CompletionRequest(header, "\n", candidates=3, min_confidence=0.3))
    assert any(c.text == ":" and c.copied == KIND for c in answers)


def test_a_colon_that_no_line_can_end_with_is_not_offered_even_in_an_unfinished_statement(
        tokenizer_free_network: object) -> None:
    # Every `isinstance(dt, datetime.datetime)` in the file goes on with `:`: an `if`'s header.
    checks = "".join(f"def c{n}(dt):\n    if isinstance(dt, datetime.datetime):\n        return {n}\n\n\n"
                     for n in range(3))
    sure = Calibrator((0.0,) * len(CONTINUATION_FEATURES), 2.0)  # says 0.88 whatever the features
    completer = _completer(tokenizer_free_network, sure)
    # New code typed top down: the `try` has no clause yet, so the statement parsed before neither.
    asserted = checks + "def c3(dt):\n    try:\n        assert isinstance(dt, datetime.datetime)"
    assert LineContinuer().continuation(asserted, "\n") is not None  # offered …
    answers = completer.complete(CompletionRequest(asserted, "\n", candidates=3, min_confidence=0.3))
    assert all(c.text != ":" for c in answers)  # … but `assert …:` is never a line
    header = checks + "def c3(dt):\n    try:\n        if isinstance(dt, datetime.datetime)"
    answers = completer.complete(CompletionRequest(header, "\n", candidates=3, min_confidence=0.3))
    assert any(c.text == ":" for c in answers)  # the `if`'s header: shown (here as the copied line)
