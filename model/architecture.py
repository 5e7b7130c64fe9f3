"""The network's shape, without torch: what the config says and which weights it implies.

Serving reads it to build the ONNX graph and to check a model folder before loading it,
so the server never imports torch (``import torch`` alone is ~1.6 s of cold start here).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

LENGTH_CLASSES = 64  # middle lengths 0…63 tokens: the largest canvas holds 63 and <|eom|>


@dataclass(frozen=True)
class NetworkConfig:
    vocab_size: int = 8192
    n_layer: int = 6
    n_head: int = 6
    d_model: int = 384
    mlp_hidden: int = 1024
    rope_base: float = 10_000.0
    # Length handling: False = the canvas learns <|eom|> + padding (shipped); True = a head on
    # the last context position predicts the middle's length and the canvas only fills it in
    # (the length-head ablation).
    length_head: bool = False

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_head

    def to_dict(self) -> dict[str, int | float | bool]:
        raw = asdict(self)
        if not self.length_head:  # configs of models without it stay as they were
            del raw["length_head"]
        return raw


ROPE_TABLE_POSITIONS = 1024  # context + canvas positions covered by the first rotary table


def rotary_tables(positions: int, head_dim: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """cos/sin tables (positions, head_dim/2) for rotary position embedding, float32, for
    positions 0…positions-1; both runtimes (torch and ONNX Runtime) use these."""
    inv_freq = (1.0 / (base ** (np.arange(0, head_dim, 2, dtype=np.float32) / head_dim))).astype(np.float32)
    angles = np.arange(positions, dtype=np.float32)[:, None] * inv_freq[None, :]
    return np.cos(angles), np.sin(angles)


def weight_shapes(config: NetworkConfig) -> dict[str, tuple[int, ...]]:
    """Every saved weight's name and shape (``network.DiffusionEditor``'s state dict; a test
    keeps the two the same)."""
    width, hidden = config.d_model, config.mlp_hidden
    shapes: dict[str, tuple[int, ...]] = {"embed.weight": (config.vocab_size, width)}
    for i in range(config.n_layer):
        p = f"blocks.{i}."
        shapes |= {p + "attn_norm.weight": (width,), p + "attn.qkv.weight": (3 * width, width),
                   p + "attn.out.weight": (width, width), p + "ff_norm.weight": (width,),
                   p + "ff.gate_up.weight": (2 * hidden, width), p + "ff.down.weight": (width, hidden)}
    shapes["final_norm.weight"] = (width,)
    if config.length_head:
        shapes |= {"length.weight": (LENGTH_CLASSES, width), "length.bias": (LENGTH_CLASSES,)}
    return shapes
