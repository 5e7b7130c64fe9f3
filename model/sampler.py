"""Parallel denoising of the canvas against a cached context.

Each step runs the network on the canvas, takes the most likely token and its probability
at every still-masked position, and commits some of them (the rule below). Committed tokens
never change. Decoding ends when every position before the first committed end-of-middle (or pad) is
committed, when nothing is masked, or when the caller says stop. The pass at the step cap
commits every position still open (its most likely token), so a capped answer has no holes;
its low probabilities lower the answer's confidence instead.

Rules:
- THRESHOLD (Fast-dLLM): commit every masked position with p ≥ τ, and at least the most
  confident one, so each step makes progress.
- MOST_CONFIDENT: one token per step, the most confident (the LLaDA low-confidence remasking
  baseline).
- LEFT_TO_RIGHT: one token per step, the leftmost masked one (autoregressive order).

Length first (``length_first``, with THRESHOLD): every pass also decides where the middle
ends — the first open position whose probability of being an end token (end-of-middle or
padding, summed) is at least ``END_PROBABILITY`` gets the end-of-middle. Left alone, a young
model commits padding one position per pass from the right edge inwards, so a 32-token
canvas costs ~32 passes whatever the middle's length; deciding the length at once leaves
only the middle's own tokens to denoise. Later passes may move the end further left once
the committed tokens make an earlier end likely (the first pass often places it a few
positions too far right, and the model then closes the gap one padding per pass).

Frozen tail (``freeze_tail``, Fast-dLLM's approximate cache applied to the canvas): once an
end is committed, later passes run the network only on the canvas up to and including it;
the masked positions after it keep the keys/values of the last pass that computed them.
A 6-token middle in a 32-token canvas then costs 7 positions per pass instead of 32.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from model.runtime.canvas_room import Cache, Room
from model.runtime.served_model import ServingNetwork


class CommitRule(enum.Enum):
    THRESHOLD = "threshold"
    MOST_CONFIDENT = "most_confident"
    LEFT_TO_RIGHT = "left_to_right"


@dataclass(frozen=True)
class SamplerSettings:
    canvas_size: int = 32
    threshold: float = 0.9
    max_steps: int = 32
    rule: CommitRule = CommitRule.THRESHOLD
    length_first: bool = False
    freeze_tail: bool = False  # once the end is committed, passes run only up to it (below)


END_PROBABILITY = 0.5


@dataclass
class Denoised:
    tokens: list[int]  # the canvas; mask id where never committed
    probabilities: list[float]  # probability of each token when it was committed (0 if never)
    steps: int = 0
    stopped: bool = False
    trace: list[list[int]] = field(default_factory=list)
    # The first pass's distributions over the whole masked canvas (position, vocab), when
    # nothing was forced: the copied-line check reads them (copy_check.py).
    first_pass: np.ndarray | None = field(default=None, repr=False, compare=False)


def select_commits(probs: np.ndarray, rule: CommitRule, threshold: float) -> np.ndarray:
    """Indices (into ``probs``, ordered left to right) of the positions to commit now."""
    if rule is CommitRule.LEFT_TO_RIGHT:
        return np.zeros(1, dtype=np.int64)
    best = np.array([int(probs.argmax())])
    if rule is CommitRule.MOST_CONFIDENT:
        return best
    chosen = np.flatnonzero(probs >= threshold)
    return chosen if chosen.size else best


def without_tokens(distribution: np.ndarray, token_ids: list[int]) -> np.ndarray:
    """``distribution`` (rows, vocab) renormalised without ``token_ids``, which are never
    an answer there — the mask token anywhere (in place)."""
    kept = 1.0 - distribution[:, token_ids].sum(-1)
    distribution[:, token_ids] = 0.0
    distribution /= np.maximum(kept, np.finfo(np.float32).tiny)[:, None]
    return distribution


def denoise(
    network: ServingNetwork,
    cache: Cache | Room,
    mask_id: int,
    end_ids: frozenset[int],
    settings: SamplerSettings,
    should_stop: Callable[[], bool] = lambda: False,
    keep_trace: bool = False,
    forced: dict[int, int] | None = None,
    forced_probabilities: dict[int, float] | None = None,
) -> Denoised:
    """Denoise a fully masked canvas (positions in ``forced`` start committed) against a
    context cache, or a room made for this canvas (``ServingNetwork.make_room``).
    ``forced_probabilities``: the probability the network gave each forced token, recorded
    as its commit probability (1.0 where not given), which the candidate's confidence reads."""
    size = settings.canvas_size
    canvas = np.full(size, mask_id, dtype=np.int64)
    result = Denoised([mask_id] * size, [0.0] * size)
    room = cache if isinstance(cache, Room) else network.make_room(cache, size)
    for position, token in (forced or {}).items():
        canvas[position] = token
        result.tokens[position] = token
        result.probabilities[position] = (forced_probabilities or {}).get(position, 1.0)
    while result.steps < settings.max_steps:
        # Only positions before the first committed end-of-middle (or padding, which
        # only ever follows it) still matter.
        ends = [i for i, t in enumerate(result.tokens) if t in end_ids]
        horizon = ends[0] if ends else size
        open_positions = [i for i in range(horizon) if result.tokens[i] == mask_id]
        if not open_positions or should_stop():
            result.stopped = bool(open_positions)
            break
        where = np.array(open_positions, dtype=np.int64)
        # A frozen tail needs one full pass first: until then the room holds no canvas.
        live = horizon + 1 if ends and settings.freeze_tail and result.steps else size
        served = np.require(network.probabilities(canvas[:live], room, where), np.float32, ["W"])
        distribution = without_tokens(served, [mask_id])  # (open, vocab)
        if result.steps == 0 and not forced:
            result.first_pass = distribution
        tokens = distribution.argmax(-1)
        probs = distribution[np.arange(len(tokens)), tokens]
        if settings.length_first and settings.rule is CommitRule.THRESHOLD:
            end = _first_likely_end(distribution, sorted(end_ids))
            if end is not None:
                position = open_positions[end[0]]
                canvas[position] = end[1]
                result.tokens[position], result.probabilities[position] = end[1], end[2]
                # Only positions before the end still matter in this pass's commits.
                keep = [i for i, at in enumerate(open_positions) if at < position]
                open_positions = [open_positions[i] for i in keep]
                probs, tokens = probs[keep], tokens[keep]
                if not open_positions:
                    result.steps += 1
                    if keep_trace:
                        result.trace.append(list(result.tokens))
                    continue
        if result.steps + 1 >= settings.max_steps:  # the last pass allowed commits everything left
            chosen = np.arange(len(open_positions))
        else:
            chosen = select_commits(probs, settings.rule, settings.threshold)
        for index in chosen.tolist():
            position = open_positions[index]
            canvas[position] = tokens[index]
            result.tokens[position] = int(tokens[index])
            result.probabilities[position] = float(probs[index])
        result.steps += 1
        if keep_trace:
            result.trace.append(list(result.tokens))
    return result


def _first_likely_end(distribution: np.ndarray, end_ids: list[int]) -> tuple[int, int, float] | None:
    """(row, end token, its probability) of the first row likely to be an end, if any."""
    end_mass = distribution[:, end_ids].sum(-1)  # (open,)
    likely = np.flatnonzero(end_mass >= END_PROBABILITY)
    if not likely.size:
        return None
    row = int(likely[0])
    token = end_ids[int(distribution[row, end_ids].argmax())]
    return row, token, float(end_mass[row])
