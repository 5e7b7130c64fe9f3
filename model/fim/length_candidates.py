"""One forward pass over candidate lengths: the whole canvas decided at once, its length
chosen among several instead of guessed first.

Left masked, the length is what a one-pass decode gets wrong: where the canvas holds its
end-of-middle at the reference's length, the first pass's fill is right twice as often as
the usual one pass (87 against 43 of 1,000 held-out spans), more often than one
token per step (77). So one pass holds a short canvas for every length 1…16 — ``L`` masks
then an end-of-middle, at the canvas's own positions, each block seeing the context and
itself only (152 rows; nothing is padded) — and, when the context's tail typed since the
last request is not encoded yet, that tail before them, causal as usual. Of the blocks'
fills (each position's most likely token), the answer is the one whose statement parses
(``CursorStatement``), then the highest mean log-probability, plus a bonus per token:
shorter fills have the easier mean. The two weights were chosen on 2,000 held-out spans
apart from ``redraft bench decode``'s (seed 11 rather than 7).

On spans of real files it is as right as one token per step (1,000 held-out spans each:
dev 78 against 79, packages in no corpus 127 against 127 and 107 against 109) at 4.4–4.9
tokens per pass. On HumanEval's single lines it is not (55 of 1,033 against 81, at 4.0):
there even the reference's length gives a fill no better than one token per step (68
against 76 in a probe), so the choice of length is not all that is missing.

``redraft bench decode`` prints it as a row beside the other decoders (issue #4's tokens
per pass); the server does not run it: a pass of ~150 rows costs several times the
as-you-type canvas's, and its answers are rarely right where the served ones are wrong
(9 of 1,000 spans).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model.formats import middle_from_canvas
from model.languages.python_statement import CursorStatement
from model.runtime.canvas_room import Room
from model.runtime.served_model import ServingNetwork
from model.sampler import without_tokens
from model.tokenizer import CodeTokenizer

MAX_LENGTH = 16
PARSE_WEIGHT = 2.0  # parses (1), does not (0), can't tell (0.5)
TOKEN_BONUS = 0.05  # per token of the fill, added to its mean log-probability


@dataclass(frozen=True)
class LengthCandidate:
    tokens: list[int]  # the fill, end-of-middle not included
    probabilities: list[float]  # of each token, as the pass gave it

    @property
    def mean_log_probability(self) -> float:
        return sum(math.log(max(p, 1e-9)) for p in self.probabilities) / len(self.probabilities)


@dataclass(frozen=True)
class LengthAnswer:
    text: str
    tokens: int  # the answer's tokens, end-of-middle not counted
    score: float


def candidate_lengths(canvas_size: int) -> range:
    """The lengths one pass tries: a fill and its end-of-middle fit the canvas."""
    return range(1, min(MAX_LENGTH, canvas_size - 1) + 1)


def rows_for(lengths: Sequence[int]) -> int:
    return sum(length + 1 for length in lengths)


def fill_over_lengths(network: ServingNetwork, room: Room, tokenizer: CodeTokenizer,
                      lengths: Sequence[int]) -> list[LengthCandidate]:
    """One pass: the room's pending context (if any) and a canvas block per length, made
    with room for ``rows_for(lengths)`` canvas rows (``make_room``). Leaves the context
    encoded (``room.pending`` None)."""
    pending = np.zeros(0, dtype=np.int64) if room.pending is None else np.asarray(room.pending, dtype=np.int64)
    tail = len(pending)
    at = room.context_length - tail  # where this pass's first row is written
    blocks = [np.append(np.full(length, tokenizer.mask_id, dtype=np.int64), tokenizer.end_of_middle_id)
              for length in lengths]
    ids = np.concatenate([pending, *blocks])
    n = len(ids)
    positions = np.concatenate([at + np.arange(tail), *[room.context_length + np.arange(len(b)) for b in blocks]])
    sees = np.zeros((n, at + n), dtype=bool)
    sees[:, :at] = True
    sees[:tail, at:at + tail] = np.tril(np.ones((tail, tail), dtype=bool))
    sees[tail:, at:at + tail] = True  # every block sees the whole context
    starts = tail + np.cumsum([0] + [len(b) for b in blocks[:-1]])
    for start, block in zip(starts, blocks, strict=True):
        sees[start:start + len(block), at + start:at + start + len(block)] = True  # and itself
    distributions = network.next_tokens(ids, room, at, positions, sees)
    room.pending = None
    # The length is given: a fill position is neither a mask nor an end.
    never = [tokenizer.mask_id, tokenizer.end_of_middle_id, tokenizer.pad_id]
    candidates = []
    for start, length in zip(starts, lengths, strict=True):
        fill = without_tokens(np.array(distributions[start:start + length], dtype=np.float32), never)
        tokens = fill.argmax(-1)
        candidates.append(LengthCandidate(tokens.tolist(), fill[np.arange(length), tokens].tolist()))
    return candidates


def choose(candidates: Sequence[LengthCandidate], tokenizer: CodeTokenizer, prefix: str, suffix: str) -> LengthAnswer:
    """The candidate that parses in its statement, then by mean log-probability plus the
    bonus per token."""
    statement = CursorStatement(prefix, suffix)
    best: LengthAnswer | None = None
    for candidate in candidates:
        text = middle_from_canvas(tokenizer, candidate.tokens)
        score = (candidate.mean_log_probability + TOKEN_BONUS * len(candidate.tokens)
                 + PARSE_WEIGHT * statement.parses_with(text))
        if best is None or score > best.score:
            best = LengthAnswer(text, len(candidate.tokens), score)
    if best is None:
        raise ValueError("no candidate lengths")
    return best
