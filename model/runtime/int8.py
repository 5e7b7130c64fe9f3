"""int8 matmuls for serving.

A denoising pass over a few canvas tokens is a row or a few times each weight matrix, so
its cost is the matmuls' fixed cost per weight, not arithmetic. On this AVX2 CPU without
native bf16, per-channel int8 weights with activations quantized per call (fbgemm/oneDNN
dynamic quantization) run the 24 linear layers of the 6×256 network 4–5× faster than fp32
(3 rows: 5.0 → 1.0 ms; 32 rows: 6.1 → 2.2 ms), and the tied 8,192-way output layer 4–7×
faster (8 rows: 1.38 → 0.20 ms). The price is 0.016 nats of held-out FIM canvas loss
(2.195 → 2.210 on 16 dev batches), almost all of it from the transformer's layers; the
output layer alone costs nothing measurable. Weight-only int8 (``torch._weight_int8pack_mm``)
was measured too: 10–100× slower than fp32 here.

Serving only: training never sees these layers, and nothing quantized is ever saved.
Quantized kernels differ by platform (and torch has deprecated quantized tensors; it is
pinned); when they can't be built or run here, serving stays in floating point.
``REDRAFT_INT8=0`` keeps floating point too.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable

import torch
from torch import Tensor, nn

from model.network import DiffusionEditor

log = logging.getLogger(__name__)


def int8_linear(weight: Tensor) -> Callable[[Tensor], Tensor]:
    """``x ↦ x @ weight.T`` for x (…, in), with ``weight`` (out, in) quantized per output
    channel (symmetric, so zero stays exact)."""
    weight = weight.detach().float().contiguous()
    scales = (weight.abs().amax(dim=1).clamp(min=1e-8) / 127).double()
    zero_points = torch.zeros(weight.shape[0], dtype=torch.long)
    with warnings.catch_warnings():  # quantized tensors are deprecated; torch is pinned
        warnings.simplefilter("ignore")
        quantized = torch.quantize_per_channel(weight, scales, zero_points, 0, torch.qint8)
        packed = torch.ops.quantized.linear_prepack(quantized, None)

    def apply(x: Tensor) -> Tensor:
        # reduce_range: 7-bit activations, which AVX2's 8-bit multiply-add cannot overflow.
        out: Tensor = torch.ops.quantized.linear_dynamic(x.float(), packed, True)
        return out.to(x.dtype)

    return apply


class Int8Linear(nn.Module):
    """A bias-free ``nn.Linear`` replaced by its int8 copy."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        if linear.bias is not None:
            raise ValueError("only bias-free linear layers are quantized")
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self._matmul: Callable[[Tensor], Tensor] = int8_linear(linear.weight)

    def forward(self, x: Tensor) -> Tensor:
        return self._matmul(x)


def quantize_for_serving(network: DiffusionEditor) -> bool:
    """Swap ``network``'s linear layers and output layer for int8 copies when this machine
    runs them; True if it did. The network can then only serve (its training pass would
    have no gradients through the swapped layers)."""
    if os.environ.get("REDRAFT_INT8", "1") == "0":
        return False
    try:
        probe = Int8Linear(network.blocks[0].attn.qkv)
        if probe(torch.ones(1, 2, network.config.d_model)).shape != (1, 2, 3 * network.config.d_model):
            raise RuntimeError("unexpected output shape")
    except (RuntimeError, NotImplementedError, AttributeError) as exc:
        log.info("int8 matmuls unavailable here (%s); serving in floating point", exc)
        return False
    for block in network.blocks:
        for owner, name in ((block.attn, "qkv"), (block.attn, "out"), (block.ff, "gate_up"), (block.ff, "down")):
            setattr(owner, name, Int8Linear(getattr(owner, name)))
    network.int8_output = int8_linear(network.embed.weight)
    return True
