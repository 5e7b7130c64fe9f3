"""Masking schedule and loss weight of absorbing-state (masked) diffusion.

MDLM / LLaDA: draw t ~ U(ε, 1) per example, replace each canvas token by <|mask|> with
probability t, and train with cross-entropy on the masked positions weighted by 1/t:

    L = E_t [ (1/t) · Σ_{i masked} −log p_θ(x_i | x_t) ] / L_canvas

which bounds the negative log-likelihood of the clean canvas. The weight 1/t makes the
nearly-clean (small t) examples count as much as the nearly-masked ones.
"""

from __future__ import annotations

import torch
from torch import Tensor

MIN_MASK_RATE = 1e-3


def sample_mask_rate(
    batch: int, generator: torch.Generator | None = None, full_mask_fraction: float = 0.0
) -> Tensor:
    """t ~ U(ε, 1), one per example: (batch,); or t = 1 (the canvas masked whole, where the
    server's one-pass decode starts) for a ``full_mask_fraction`` share of them. At 0 nothing
    more is drawn, so a fixed generator gives the same noise as before the option existed."""
    rate = MIN_MASK_RATE + (1 - MIN_MASK_RATE) * torch.rand(batch, generator=generator)
    if full_mask_fraction > 0.0:
        return torch.where(torch.rand(batch, generator=generator) < full_mask_fraction, 1.0, rate)
    return rate


def mask_tokens(
    targets: Tensor, rate: Tensor, mask_id: int, generator: torch.Generator | None = None
) -> tuple[Tensor, Tensor]:
    """Mask each token of targets (batch, L) with its row's rate; at least one per row.
    Returns (noised canvas, bool mask of masked positions)."""
    masked = torch.rand(targets.shape, generator=generator) < rate[:, None]
    # Guarantee one masked position per row, so every example carries a loss.
    forced = torch.randint(0, targets.shape[1], (targets.shape[0],), generator=generator)
    masked[torch.arange(targets.shape[0]), forced] = True
    return torch.where(masked, torch.full_like(targets, mask_id), targets), masked


def loss_weight(rate: Tensor) -> Tensor:
    """1/t, the ELBO weight of masked diffusion."""
    return 1.0 / rate
