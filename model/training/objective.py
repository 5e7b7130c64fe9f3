"""The training objective: the masked-diffusion loss on the canvas, the next-token loss on
a sample of context positions, and the head's loss on what it writes at the cursor; and
the same losses on held-out batches with a fixed noise seed."""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor

from model.network import DiffusionEditor
from model.tokenizer import CodeTokenizer
from model.training.batches import Batch
from model.training.expand_delete import noise_canvas
from model.training.schedule import MIN_MASK_RATE, loss_weight, mask_tokens, sample_mask_rate
from model.training.train_config import TrainConfig


class Losses(NamedTuple):
    diffusion: Tensor  # on the canvas
    next_token: Tensor  # on sampled context positions
    written: Tensor  # the head's, on what it writes at the cursor (zero when the batch has none)


def losses(
    network: torch.nn.Module, core: DiffusionEditor, batch: Batch, tokenizer: CodeTokenizer,
    config: TrainConfig, generator: torch.Generator | None = None,
) -> Losses:
    """The batch's losses: the canvas's, the context's next tokens' and the head's at the cursor."""
    rate = sample_mask_rate(batch.targets.shape[0], generator, config.full_mask_fraction)
    if batch.full_mask is not None:  # the teacher's examples: the state the one-pass decode starts from
        rate = torch.where(batch.full_mask, torch.ones_like(rate), rate)
    targets, canvas_valid, lengths = batch.targets, None, None
    if config.length_handling == "expand_delete":
        grown = noise_canvas(tokenizer, batch.targets, rate, generator)
        noised, masked, targets, canvas_valid = grown.canvas, grown.masked, grown.targets, grown.canvas_valid
    else:
        noised, masked = mask_tokens(batch.targets, rate, tokenizer.mask_id, generator)
    if core.length is not None:
        # Length head: the canvas is told the length (<|eom|> and padding stay visible) and
        # only the middle is masked; the head learns the length from the context.
        lengths = (batch.targets == tokenizer.end_of_middle_id).int().argmax(-1)  # (batch,)
        middle = torch.arange(batch.targets.shape[1])[None, :] < lengths[:, None]
        masked = masked & middle
        noised = torch.where(masked, noised, batch.targets)
    # (batch, C + L [+ W], d)
    hidden = network(batch.context, batch.context_valid, noised, canvas_valid, batch.written, batch.written_valid)
    ctx, canvas_end = batch.context.shape[1], batch.context.shape[1] + noised.shape[1]
    # Logits only where a token is masked: the output layer is the costliest part.
    canvas_logits = core.logits(hidden[:, ctx:canvas_end][masked]).float()  # (masked, vocab)
    ce = F.cross_entropy(canvas_logits, targets[masked], reduction="none")
    if canvas_valid is not None:
        # Merged and inserted masks are there whatever t is: weight by the share of the
        # canvas actually masked, which is what t stands for in the ELBO weight 1/t.
        rate = (masked.sum(1) / canvas_valid.sum(1).clamp(min=1)).clamp(min=MIN_MASK_RATE)
    row_weight = loss_weight(rate)[:, None].expand_as(masked)[masked]
    diffusion = (ce * row_weight).sum() / masked.numel()
    if lengths is not None:
        diffusion = diffusion + F.cross_entropy(core.length_logits(hidden[:, ctx - 1]).float(), lengths)
    # Next-token loss on a random sample of context positions whose next token is real.
    scorable = batch.context_valid[:, :-1] & batch.context_valid[:, 1:]
    keep = scorable & (torch.rand(scorable.shape, generator=generator) < config.context_loss_fraction)
    ctx_logits = core.logits(hidden[:, : ctx - 1][keep]).float()
    next_token = F.cross_entropy(ctx_logits, batch.context[:, 1:][keep]) if keep.any() else hidden.sum() * 0
    written = hidden.sum() * 0
    if batch.written is not None and batch.written_valid is not None and batch.written_valid.any():
        # The position before the cut token writes the first token (healed: the cut token's
        # text again, any token boundaries); each written token, the next.
        writers = torch.cat([hidden[:, ctx - 2: ctx - 1], hidden[:, canvas_end:-1]], dim=1)
        valid = batch.written_valid
        written = F.cross_entropy(core.logits(writers[valid]).float(), batch.written[valid])
    return Losses(diffusion, next_token, written)


@torch.no_grad()
def evaluate(
    core: DiffusionEditor, dev: list[Batch], dev_edits: list[Batch], tokenizer: CodeTokenizer,
    config: TrainConfig, autocast: bool,
) -> dict[str, float]:
    """Held-out losses with a fixed noise seed, so numbers compare across runs (whatever
    the run's ``full_mask_fraction``); ``dev_full_mask``: the FIM canvas's loss masked whole,
    what the server's one-pass decode starts from."""
    core.eval()
    generator = torch.Generator().manual_seed(1234)
    totals = {"dev_diffusion": 0.0, "dev_next_token": 0.0, "dev_written": 0.0, "dev_next_edit": 0.0,
              "dev_full_mask": 0.0}
    drawn, whole = replace(config, full_mask_fraction=0.0), replace(config, full_mask_fraction=1.0)
    for name, batches in (("dev_diffusion", dev), ("dev_next_edit", dev_edits)):
        for batch in batches:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                measured = losses(core, core, batch, tokenizer, drawn, generator)
            totals[name] += measured.diffusion.item() / len(batches)
            if name == "dev_diffusion":
                totals["dev_next_token"] += measured.next_token.item() / len(batches)
                totals["dev_written"] += measured.written.item() / len(batches)
    masked_whole = torch.Generator().manual_seed(1234)  # after the others, so they keep their draws
    for batch in dev:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            measured = losses(core, core, batch, tokenizer, whole, masked_whole)
        totals["dev_full_mask"] += measured.diffusion.item() / len(dev)
    core.train()
    if not dev_edits:
        del totals["dev_next_edit"]
    if all(batch.written is None for batch in dev):
        del totals["dev_written"]
    return totals
