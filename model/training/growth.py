"""Growing a trained network deeper without changing what it computes.

The shipped model has seen over a hundred tokens per parameter, so more of the same
training barely moves it; more layers give it room, and starting them from the trained ones
keeps what it already knows. Each new block is a copy of the block it follows with its two
residual projections (attention out, feed-forward down) zeroed: it adds nothing to the
residual stream until training moves those projections, so the grown network gives the
same outputs as the old one at step 0, while its inner weights start from features that
already mean something there.
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace

import torch
from torch import nn

from model.network import Block, DiffusionEditor


def insertion_points(old_layers: int, new_layers: int) -> list[int]:
    """The old blocks each new block follows, spread evenly through the depth: 6 → 9
    puts one after blocks 1, 3 and 5; 6 → 12 one after every block."""
    added = new_layers - old_layers
    if old_layers < 1 or added < 0:
        raise ValueError(f"cannot grow {old_layers} layers to {new_layers}")
    return [math.ceil((j + 1) * old_layers / added) - 1 for j in range(added)]


def silent_copy(block: Block) -> Block:
    """A copy of ``block`` that adds zero to the residual stream."""
    twin = copy.deepcopy(block)
    with torch.no_grad():
        twin.attn.out.weight.zero_()
        twin.ff.down.weight.zero_()
    return twin


def grow_depth(network: DiffusionEditor, n_layer: int) -> DiffusionEditor:
    """A network with ``n_layer`` blocks computing what ``network`` computes (a copy of it:
    the same embedding, norms and heads; the old blocks in order, silent copies between them);
    ``network`` itself when it already has ``n_layer`` blocks."""
    if n_layer == network.config.n_layer:
        return network
    after = insertion_points(network.config.n_layer, n_layer)
    grown = copy.deepcopy(network)
    blocks: list[nn.Module] = []
    for i, block in enumerate(grown.blocks):
        blocks.append(block)
        blocks.extend(silent_copy(block) for _ in range(after.count(i)))
    grown.blocks = nn.ModuleList(blocks)  # type: ignore[assignment]
    grown.config = replace(network.config, n_layer=n_layer)
    return grown
