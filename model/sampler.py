"""Parallel denoising of the canvas against a cached context.

Each step runs the network on the canvas, takes the most likely token and its probability
at every still-masked position, and commits some of them (the rule below). Committed tokens
never change. Decoding ends when every position before the first committed end-of-middle (or pad) is
committed, when nothing is masked, at the step cap, or when the caller says stop.

Rules:
- THRESHOLD (Fast-dLLM): commit every masked position with p ≥ τ, and at least the most
  confident one, so each step makes progress.
- MOST_CONFIDENT: one token per step, the most confident (the LLaDA low-confidence remasking
  baseline).
- LEFT_TO_RIGHT: one token per step, the leftmost masked one (autoregressive order).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor

from model.network import DiffusionEditor, KVCache


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


@dataclass
class Denoised:
    tokens: list[int]  # the canvas; mask id where never committed
    probabilities: list[float]  # probability of each token when it was committed (0 if never)
    steps: int = 0
    stopped: bool = False
    trace: list[list[int]] = field(default_factory=list)


def select_commits(probs: Tensor, rule: CommitRule, threshold: float) -> Tensor:
    """Indices (into ``probs``, ordered left to right) of the positions to commit now."""
    if rule is CommitRule.LEFT_TO_RIGHT:
        return torch.zeros(1, dtype=torch.long)
    best = probs.argmax().reshape(1)
    if rule is CommitRule.MOST_CONFIDENT:
        return best
    chosen = (probs >= threshold).nonzero().flatten()
    return chosen if chosen.numel() else best


@torch.no_grad()
def denoise(
    network: DiffusionEditor,
    cache: KVCache,
    mask_id: int,
    end_ids: frozenset[int],
    settings: SamplerSettings,
    should_stop: Callable[[], bool] = lambda: False,
    keep_trace: bool = False,
    forced: dict[int, int] | None = None,
) -> Denoised:
    """Denoise a fully masked canvas (positions in ``forced`` start committed)."""
    size = settings.canvas_size
    canvas = torch.full((1, size), mask_id, dtype=torch.long)
    result = Denoised([mask_id] * size, [0.0] * size)
    for position, token in (forced or {}).items():
        canvas[0, position] = token
        result.tokens[position] = token
        result.probabilities[position] = 1.0
    while result.steps < settings.max_steps:
        # Only positions before the first committed end-of-middle (or padding, which
        # only ever follows it) still matter.
        ends = [i for i, t in enumerate(result.tokens) if t in end_ids]
        horizon = ends[0] if ends else size
        open_positions = [i for i in range(horizon) if result.tokens[i] == mask_id]
        if not open_positions or should_stop():
            result.stopped = bool(open_positions)
            break
        where = torch.tensor(open_positions)
        logits = network.denoise(canvas, cache, where).float()  # (open, vocab)
        logits[:, mask_id] = float("-inf")
        probs, tokens = logits.softmax(-1).max(-1)
        for index in select_commits(probs, settings.rule, settings.threshold).tolist():
            position = open_positions[index]
            canvas[0, position] = tokens[index]
            result.tokens[position] = int(tokens[index])
            result.probabilities[position] = float(probs[index])
        result.steps += 1
        if keep_trace:
            result.trace.append(list(result.tokens))
    return result
