"""Length by expand/delete (DreamOn's idea), the third length-handling ablation arm.

The eom + padding canvas (shipped) has a fixed size and learns where the middle ends; a
length head predicts the length once. Here the canvas itself changes length while it is
denoised: a mask may turn into <|expand|>, which splits it into two masks, or into
<|delete|>, which removes it. Decoding starts from a few masks and grows or shrinks to the
middle's length, so no pass is spent on padding.

Training shows the network canvases whose length is wrong in both directions: runs of
masked middle tokens merged into one mask whose target is <|expand|> (a merged mask may
stand for up to ``MAX_MERGE`` tokens: it expands again), and extra masks whose target is
<|delete|>. Canvases of one batch differ in length; the unused tail is padding that no
position attends to (``canvas_valid``). Two of the tokenizer's reserved tokens serve as
<|expand|> and <|delete|>, so the vocabulary is the same as every other arm's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch
from torch import Tensor

from model.network import DiffusionEditor, KVCache
from model.sampler import CommitRule, select_commits
from model.tokenizer import CodeTokenizer

EXPAND_TOKEN = "<|reserved_0|>"
DELETE_TOKEN = "<|reserved_1|>"
MAX_MERGE = 4  # tokens one merged mask may stand for
MAX_INSERTED = 8  # extra masks (target <|delete|>) at most
INITIAL_MASKS = 8  # the canvas decoding starts from


@dataclass(frozen=True)
class NoisedCanvas:
    canvas: Tensor  # (batch, L) input: tokens, masks, padding
    canvas_valid: Tensor  # (batch, L) bool: positions that exist (the rest is padding)
    targets: Tensor  # (batch, L) what each position should become
    masked: Tensor  # (batch, L) bool: positions carrying a loss


def _noise_row(
    middle: list[int], rate: float, mask_id: int, expand_id: int, delete_id: int, width: int, rng: random.Random,
) -> tuple[list[int], list[int], list[bool]]:
    """One canvas (inputs, targets, masked) for ``middle`` at mask rate ``rate``."""
    masked = [rng.random() < rate for _ in middle]
    if middle and not any(masked):
        masked[rng.randrange(len(middle))] = True
    inputs: list[int] = []
    targets: list[int] = []
    is_masked: list[bool] = []
    mode = rng.randrange(3)  # 0: right length, 1: too short (merges), 2: too long (inserts)
    i = 0
    while i < len(middle):
        run = 1
        if mode == 1 and masked[i]:
            while i + run < len(middle) and masked[i + run] and run < MAX_MERGE:
                run += 1
            run = rng.randint(1, run)
        if masked[i]:
            inputs.append(mask_id)
            targets.append(expand_id if run > 1 else middle[i])
            is_masked.append(True)
        else:
            inputs.append(middle[i])
            targets.append(middle[i])
            is_masked.append(False)
        i += run
    inserted = rng.randint(1, MAX_INSERTED) if mode == 2 or not middle else 0
    for _ in range(min(inserted, width - len(inputs))):
        at = rng.randint(0, len(inputs))
        inputs.insert(at, mask_id)
        targets.insert(at, delete_id)
        is_masked.insert(at, True)
    return inputs[:width], targets[:width], is_masked[:width]


def noise_canvas(
    tokenizer: CodeTokenizer, targets: Tensor, rate: Tensor, generator: torch.Generator | None = None,
) -> NoisedCanvas:
    """Canvases of wrong length from eom + padding targets (batch, L) and mask rates (batch,)."""
    seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator))
    rng = random.Random(seed)
    expand_id, delete_id = tokenizer.id_of(EXPAND_TOKEN), tokenizer.id_of(DELETE_TOKEN)
    batch, width = targets.shape
    canvas = torch.full((batch, width), tokenizer.pad_id, dtype=torch.long)
    new_targets = torch.full((batch, width), tokenizer.pad_id, dtype=torch.long)
    valid = torch.zeros(batch, width, dtype=torch.bool)
    masked = torch.zeros(batch, width, dtype=torch.bool)
    for row in range(batch):
        tokens = targets[row].tolist()
        end = tokens.index(tokenizer.end_of_middle_id) if tokenizer.end_of_middle_id in tokens else len(tokens)
        inputs, row_targets, row_masked = _noise_row(
            tokens[:end], float(rate[row]), tokenizer.mask_id, expand_id, delete_id, width, rng)
        n = len(inputs)
        canvas[row, :n] = torch.tensor(inputs, dtype=torch.long)
        new_targets[row, :n] = torch.tensor(row_targets, dtype=torch.long)
        valid[row, :n] = True
        masked[row, :n] = torch.tensor(row_masked, dtype=torch.bool)
    return NoisedCanvas(canvas, valid, new_targets, masked)


@dataclass
class GrownCanvas:
    tokens: list[int]  # the final canvas (no masks left unless the step cap hit)
    steps: int


@torch.no_grad()
def denoise_expand_delete(
    network: DiffusionEditor, cache: KVCache, tokenizer: CodeTokenizer, threshold: float = 0.9,
    max_steps: int = 32, max_length: int = 63,
) -> GrownCanvas:
    """Denoise from ``INITIAL_MASKS`` masks: commit confident positions (Fast-dLLM's rule);
    a committed <|expand|> becomes two masks, a <|delete|> disappears. The last pass
    allowed commits every open position with its most likely ordinary token."""
    mask_id = tokenizer.mask_id
    expand_id, delete_id = tokenizer.id_of(EXPAND_TOKEN), tokenizer.id_of(DELETE_TOKEN)
    canvas = [mask_id] * INITIAL_MASKS
    steps = 0
    while steps < max_steps:
        open_positions = [i for i, t in enumerate(canvas) if t == mask_id]
        if not open_positions:
            break
        logits = network.denoise(torch.tensor([canvas]), cache, torch.tensor(open_positions)).float()
        logits[:, mask_id] = float("-inf")
        last = steps + 1 >= max_steps
        if last or len(canvas) >= max_length:
            logits[:, expand_id] = float("-inf")  # no room (or no pass) left to grow into
        if last:
            logits[:, delete_id] = float("-inf")
        probs, chosen_tokens = logits.softmax(-1).max(-1)
        chosen = (range(len(open_positions)) if last
                  else select_commits(probs.numpy(), CommitRule.THRESHOLD, threshold).tolist())
        # Right to left, so earlier indices stay valid while the canvas changes length.
        for index in sorted(chosen, reverse=True):
            position, token = open_positions[index], int(chosen_tokens[index])
            if token == expand_id:
                canvas[position:position + 1] = [mask_id, mask_id]
            elif token == delete_id:
                del canvas[position]
            else:
                canvas[position] = token
        steps += 1
    return GrownCanvas(canvas, steps)


def canvas_text(tokenizer: CodeTokenizer, canvas: list[int]) -> str:
    ignored = {tokenizer.mask_id, tokenizer.id_of(EXPAND_TOKEN), tokenizer.id_of(DELETE_TOKEN)}
    return tokenizer.decode([t for t in canvas if t not in ignored])

