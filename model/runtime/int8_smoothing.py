"""Smoothing the feed-forward's down projection for int8 serving (SmoothQuant, Xiao et al. 2023).

The int8 graph (``onnx_graph.py``) quantizes each matmul's input with one scale per call.
The down projection's input, SwiGLU's output, has a few channels far larger than the rest,
so that one scale leaves the others only a few levels. On the shipped ``v25`` weights that
projection was most of the int8 graph's distance from fp32: mean KL of the first pass's
canvas distributions 0.027 nats, and 0.005 with that projection alone in fp32 (which cost
1.6 ms a request, so it stays int8).

SwiGLU is linear in its up half, so dividing channel j of the up projection by ``s_j`` and
multiplying column j of the down projection by ``s_j`` computes the same function, with
the outliers moved into the weights, which are quantized per output column. As in
SmoothQuant, ``s_j = a_j^α / w_j^(1-α)``: ``a_j`` the channel's largest activation on
held-out code, ``w_j`` the column's largest weight, ``α = 0.5``. Measured on ``v25`` (135
contexts from packages in no corpus, scales from 60 other files): KL 0.027 → 0.008 at
α = 0.5 (0.019 at 0.3, 0.007 at 0.7). Scales guessed from the weights alone (the norms of
each channel's gate and up rows) correlated poorly with the measured maxima and reached
only 0.021, so they are measured.

``redraft calibrate`` measures the scales on the dev split and keeps them beside the
weights (``int8_scales.safetensors``); serving folds them in when it builds the int8
graph. A folder without them serves unsmoothed, and fp32 and torch serving ignore them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np

from model.architecture import NetworkConfig
from model.model_folder import SCALES_FILE

log = logging.getLogger(__name__)

ALPHA = 0.5
SCALE_CONTEXTS = 64  # held-out contexts whose activations set the scales
CANVAS_SIZE = 32  # the served canvas, fully masked after each context as in a first pass


def scale_name(layer: int) -> str:
    return f"blocks.{layer}.ff.down.smoothing"


def smoothing_scales(activation_max: np.ndarray, down_weight: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """Channel scales (mlp_hidden,) for a down projection (width, mlp_hidden), normalised to
    a geometric mean of 1 (only their ratios matter)."""
    weight_max = np.abs(down_weight).max(axis=0)
    scales = np.maximum(activation_max, 1e-5) ** alpha / np.maximum(weight_max, 1e-5) ** (1 - alpha)
    normalised: np.ndarray = (scales / np.exp(np.mean(np.log(scales)))).astype(np.float32)
    return normalised


def fold(weights: dict[str, np.ndarray], scales: dict[str, np.ndarray], config: NetworkConfig) -> None:
    """Make ``weights`` (float32 arrays the caller owns) the same network with each layer's
    scales moved from the down projection's input into the up projection's rows (divided)
    and the down projection's columns (multiplied). In place: serving holds no second copy."""
    hidden = config.mlp_hidden
    for layer in range(config.n_layer):
        s = scales[scale_name(layer)].astype(np.float32)
        prefix = f"blocks.{layer}.ff."
        weights[prefix + "gate_up.weight"][hidden:] /= s[:, None]  # (gate | up, width)
        weights[prefix + "down.weight"] *= s[None, :]


def read_scales(folder: Path, config: NetworkConfig) -> dict[str, np.ndarray] | None:
    """The folder's scales, or None when it has none or they don't fit this network (logged:
    the model still serves, unsmoothed)."""
    path = folder / SCALES_FILE
    if not path.is_file():
        return None
    from safetensors.numpy import load_file

    try:
        scales = load_file(str(path))
    except Exception as exc:  # a truncated or foreign file
        log.warning("ignoring %s: %s", path, exc)
        return None
    wanted = {scale_name(layer) for layer in range(config.n_layer)}
    if set(scales) != wanted or any(scales[name].shape != (config.mlp_hidden,) for name in wanted) \
            or not all(np.isfinite(s).all() and (s > 0).all() for s in scales.values()):
        log.warning("ignoring %s: its scales don't fit this network", path)
        return None
    return scales


def measure_scales(folder: Path, contexts: list[list[int]], canvas_size: int = CANVAS_SIZE) -> dict[str, np.ndarray]:
    """Scales for the model in ``folder`` from the activations of a first denoising pass (the
    context, then a masked canvas) over each of ``contexts`` (token ids), in fp32 torch."""
    import torch

    from model.checkpoint import load_model

    loaded = load_model(folder)
    network = loaded.network.eval()
    hidden = network.config.mlp_hidden
    maxima = [np.zeros(hidden, dtype=np.float32) for _ in network.blocks]

    def recorder(layer: int) -> Callable[[torch.nn.Module, tuple[torch.Tensor, ...], torch.Tensor], None]:
        def record(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], output: torch.Tensor) -> None:
            seen = inputs[0].detach().abs().reshape(-1, hidden).amax(0).numpy()
            maxima[layer] = np.maximum(maxima[layer], seen)
        return record

    hooks = [block.ff.down.register_forward_hook(recorder(layer)) for layer, block in enumerate(network.blocks)]
    try:
        with torch.no_grad():
            for ids in contexts:
                context = torch.tensor([ids], dtype=torch.long)
                canvas = torch.full((1, canvas_size), loaded.tokenizer.mask_id, dtype=torch.long)
                network(context, torch.ones_like(context, dtype=torch.bool), canvas)
    finally:
        for hook in hooks:
            hook.remove()
    return {scale_name(layer): smoothing_scales(maxima[layer], block.ff.down.weight.detach().numpy())
            for layer, block in enumerate(network.blocks)}


def save_scales(folder: Path, scales: dict[str, np.ndarray]) -> None:
    from safetensors.numpy import save_file

    save_file({name: np.ascontiguousarray(s, dtype=np.float32) for name, s in scales.items()},
              str(folder / SCALES_FILE))
