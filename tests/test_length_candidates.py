"""One forward pass over candidate lengths (``length_candidates.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from model.fim.inference import FimCompleter
from model.fim.length_candidates import (
    LengthCandidate,
    candidate_lengths,
    choose,
    fill_over_lengths,
    rows_for,
)
from model.model_folder import SHIPPED_DIR
from model.runtime.served_model import ServedModel
from model.runtime.serving import load_served_model

PREFIX = "def area(width, height):\n    return width * height\n\n\ndef volume(width, height, depth):\n    return are"
SUFFIX = "\n\n\ndef perimeter(width, height):\n    return 2 * (width + height)\n"


@pytest.fixture(params=["onnx", "torch"])
def float_model(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> ServedModel:
    """Float: int8 scales activations per pass, so rows added to a pass move the others'."""
    monkeypatch.setenv("REDRAFT_INT8", "0")
    monkeypatch.setenv("REDRAFT_ONNX", "1" if request.param == "onnx" else "0")
    return load_served_model(SHIPPED_DIR)


def alone(served: ServedModel, completer: FimCompleter, length: int) -> LengthCandidate:
    """The block of ``length`` masks and an end-of-middle as the only canvas of a pass."""
    tok = served.tokenizer
    _, room = completer.prepare(PREFIX, SUFFIX, length + 1)
    canvas = np.append(np.full(length, tok.mask_id), tok.end_of_middle_id)
    fill = np.array(served.network.probabilities(canvas, room, np.arange(length)), dtype=np.float32)
    fill[:, [tok.mask_id, tok.end_of_middle_id, tok.pad_id]] = 0.0
    fill /= fill.sum(-1, keepdims=True)
    tokens = fill.argmax(-1)
    return LengthCandidate(tokens.tolist(), fill[np.arange(length), tokens].tolist())


@pytest.mark.parametrize("typed_since", [None, 3])
def test_each_length_in_the_shared_pass_is_filled_as_if_it_were_alone(
    float_model: ServedModel, typed_since: int | None
) -> None:
    """Blocks never see each other, and sit at the canvas's own positions. ``typed_since``:
    the context's last characters are typed after an earlier request, so the pass encodes
    that pending tail first, as the served first pass does."""
    lengths = candidate_lengths(32)
    assert list(lengths) == list(range(1, 17)) and rows_for(lengths) == 152
    shared = FimCompleter(float_model)
    if typed_since is not None:
        shared.over_lengths(PREFIX[:-typed_since], SUFFIX)  # its context is kept
    _, room = shared.prepare(PREFIX, SUFFIX, rows_for(lengths))
    assert room.pending is not None
    # A cold context is encoded whole in the pass; after typing, only its tail.
    assert len(room.pending) > 50 if typed_since is None else 0 < len(room.pending) <= 4
    together = fill_over_lengths(float_model.network, room, float_model.tokenizer, lengths)
    assert room.pending is None  # the context is encoded
    for length, candidate in zip(lengths, together, strict=True):
        expected = alone(float_model, FimCompleter(float_model), length)
        assert candidate.tokens == expected.tokens, length
        assert candidate.probabilities == pytest.approx(expected.probabilities, abs=1e-4), length


def test_an_answer_is_one_of_the_lengths_filled_in_one_pass() -> None:
    served = load_served_model(SHIPPED_DIR)
    completer = FimCompleter(served)
    answer = completer.over_lengths(PREFIX, SUFFIX)
    assert 1 <= answer.tokens <= 16 and answer.text
    # Canvas of 16: a fill and its end-of-middle fit, so at most 15 tokens.
    assert list(candidate_lengths(16)) == list(range(1, 16))
    assert completer.over_lengths(PREFIX, SUFFIX, canvas_size=16).tokens <= 15


def test_a_fill_that_parses_beats_a_likelier_one_that_does_not() -> None:
    tok = load_served_model(SHIPPED_DIR).tokenizer
    prefix, suffix = "total = add(1, ", ")\nprint(total)\n"
    closed_twice = LengthCandidate(tok.encode("2))"), [0.9] * len(tok.encode("2))")))
    closed = LengthCandidate(tok.encode("2"), [0.5] * len(tok.encode("2")))
    assert choose([closed_twice, closed], tok, prefix, suffix).text == "2"
    # Both parse: the likelier per token wins.
    likely = LengthCandidate(tok.encode("2"), [0.9] * len(tok.encode("2")))
    assert choose([closed, likely], tok, prefix, suffix).score > choose([closed], tok, prefix, suffix).score
    with pytest.raises(ValueError):
        choose([], tok, prefix, suffix)
