"""The denoiser: a pre-norm transformer over [causal context | bidirectional canvas].

Read top to bottom: config → rotary positions → attention (with a key/value cache) →
feed-forward → block → the network, whose three entry points are
``forward`` (training: context and canvas in one pass under a block mask),
``encode_context`` (serving: the context once, returning its cache) and
``denoise`` (serving: one refinement step of the canvas against that cache).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from model.architecture import LENGTH_CLASSES, ROPE_TABLE_POSITIONS, NetworkConfig, rotary_tables

# One (keys, values) pair per layer, each (batch, heads, positions, head_dim).
KVCache = list[tuple[Tensor, Tensor]]


@dataclass
class CanvasRoom:
    """A context cache followed by room for the canvas (``make_room``): every denoising
    pass writes the canvas's keys/values there in place, instead of concatenating a copy
    of the whole context's on each pass and layer.

    ``pending`` context tokens (the tail typed since the cache was made) are encoded by
    the first denoising pass, in the same forward as the canvas: on 2 cores a forward of
    a few tokens costs mostly fixed per-layer overhead, so one pass instead of two saves
    that overhead on every request. Exact: the pending rows stay causal."""

    layers: KVCache  # each (batch, heads, context + canvas, head_dim)
    context_length: int  # including the pending tokens
    pending: Tensor | None = None  # (1, n) context ids not yet in ``layers``

    def context_cache(self) -> KVCache:
        """The context's keys/values (views into the room); only once nothing is pending."""
        if self.pending is not None:
            raise ValueError("the room's pending context has not been encoded yet")
        return [(k[:, :, :self.context_length], v[:, :, :self.context_length]) for k, v in self.layers]


def apply_rotary(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    # x: (batch, heads, positions, head_dim); rotate pairs (first half, second half).
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class Attention(nn.Module):
    def __init__(self, config: NetworkConfig) -> None:
        super().__init__()
        self.n_head = config.n_head
        self.head_dim = config.head_dim
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model, bias=False)
        self.out = nn.Linear(config.d_model, config.d_model, bias=False)

    def forward(
        self,
        x: Tensor,
        rope: tuple[Tensor, Tensor],
        mask: Tensor | None,
        past: tuple[Tensor, Tensor] | None = None,
        room_at: int | None = None,
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """``room_at``: ``past`` already has room for these positions from that index on
        (a CanvasRoom); write them there instead of concatenating, and attend to the whole
        room (positions after these keep the keys/values of the pass that last wrote them)."""
        batch, length, width = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, self.n_head, self.head_dim).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (batch, heads, length, head_dim)
        q, k = apply_rotary(q, *rope), apply_rotary(k, *rope)
        if past is not None and room_at is not None:
            past[0][:, :, room_at:room_at + length] = k
            past[1][:, :, room_at:room_at + length] = v
            k, v = past
        elif past is not None:
            k = torch.cat([past[0], k], dim=2)
            v = torch.cat([past[1], v], dim=2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(batch, length, width)), (k, v)


class FeedForward(nn.Module):
    """SwiGLU feed-forward."""

    def __init__(self, config: NetworkConfig) -> None:
        super().__init__()
        self.gate_up = nn.Linear(config.d_model, 2 * config.mlp_hidden, bias=False)
        self.down = nn.Linear(config.mlp_hidden, config.d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        out: Tensor = self.down(F.silu(gate) * up)
        return out


class Block(nn.Module):
    def __init__(self, config: NetworkConfig) -> None:
        super().__init__()
        self.attn_norm = nn.RMSNorm(config.d_model)
        self.attn = Attention(config)
        self.ff_norm = nn.RMSNorm(config.d_model)
        self.ff = FeedForward(config)

    def forward(
        self, x: Tensor, rope: tuple[Tensor, Tensor], mask: Tensor | None,
        past: tuple[Tensor, Tensor] | None = None, room_at: int | None = None,
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        attended, kv = self.attn(self.attn_norm(x), rope, mask, past, room_at)
        x = x + attended
        return x + self.ff(self.ff_norm(x)), kv


class DiffusionEditor(nn.Module):
    def __init__(self, config: NetworkConfig) -> None:
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.blocks: list[Block] = nn.ModuleList(Block(config) for _ in range(config.n_layer))  # type: ignore[assignment]
        self.final_norm = nn.RMSNorm(config.d_model)
        self.length = nn.Linear(config.d_model, LENGTH_CLASSES) if config.length_head else None
        self._rope_table: tuple[Tensor, Tensor] | None = None  # not a buffer: derived, never saved
        self.int8_output: Callable[[Tensor], Tensor] | None = None  # serving only, never saved
        self.apply(self._init_weights)
        for block in self.blocks:  # scaled residual projections (GPT-2)
            for proj in (block.attn.out, block.ff.down):
                nn.init.normal_(proj.weight, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)

    def logits(self, hidden: Tensor) -> Tensor:
        """Output layer tied to the embedding: (…, d_model) → (…, vocab). Serving may swap
        in an int8 copy of it (``int8.py``); training never uses it."""
        normed = self.final_norm(hidden)
        if self.int8_output is not None and not self.training:
            return self.int8_output(normed)
        return F.linear(normed, self.embed.weight)

    def length_logits(self, last_context_hidden: Tensor) -> Tensor:
        """(…, d_model) hidden state of the last context position → (…, LENGTH_CLASSES)."""
        if self.length is None:
            raise ValueError("this network has no length head")
        logits: Tensor = self.length(self.final_norm(last_context_hidden))
        return logits

    def _rope(self, start: int, length: int, device: torch.device) -> tuple[Tensor, Tensor]:
        """Rotary tables for positions [start, start + length), computed once per size:
        serving asks for the same few positions on every denoising pass."""
        end = start + length
        table = self._rope_table
        if table is None or table[0].shape[0] < end or table[0].device != device:
            size = max(end, ROPE_TABLE_POSITIONS)
            cos, sin = rotary_tables(size, self.config.head_dim, self.config.rope_base)
            table = (torch.from_numpy(cos).to(device), torch.from_numpy(sin).to(device))
            self._rope_table = table
        return table[0][start:end], table[1][start:end]

    def _run(
        self, ids: Tensor, start: int, mask: Tensor | None, cache: KVCache | None,
        room_at: int | None = None, positions: Tensor | None = None, positions_end: int | None = None,
    ) -> tuple[Tensor, KVCache]:
        """``positions``: each row's own (the rows of a beam search's tree,
        ``next_tokens_logits``), instead of ``start`` onwards; ``positions_end``, when the
        caller knows it from shapes alone, is past the largest of them (reading it from the
        tensor stops ``torch.compile``'s graph there)."""
        if positions is not None:
            end = int(positions.max()) + 1 if positions_end is None else positions_end
            cos, sin = self._rope(0, end, ids.device)
            rope = cos[positions], sin[positions]
        else:
            rope = self._rope(start, ids.shape[1], ids.device)
        x = self.embed(ids)
        new_cache: KVCache = []
        for i, block in enumerate(self.blocks):
            x, kv = block(x, rope, mask, None if cache is None else cache[i], room_at)
            new_cache.append(kv)
        return x, new_cache

    def forward(self, context: Tensor, context_valid: Tensor, canvas: Tensor,
                canvas_valid: Tensor | None = None, written: Tensor | None = None,
                written_valid: Tensor | None = None) -> Tensor:
        """Training pass. context (batch, C) left-padded, context_valid (batch, C) bool,
        canvas (batch, L), canvas_valid (batch, L) bool when canvases differ in length
        (the expand/delete arm); written (batch, W), what the head writes at the cursor
        (right-padded, written_valid), healed as served: it takes the positions from the
        context's last one on, beside the canvas's, sees the context but its last token
        (the prefix's cut one, written again), and only it sees itself. Returns hidden
        states (batch, C + L [+ W], d_model)."""
        mask = training_mask(context_valid, canvas.shape[1], canvas_valid, written_valid)
        if written is None:
            hidden, _ = self._run(torch.cat([context, canvas], dim=1), 0, mask, None)
            return hidden
        ctx, device = context.shape[1], context.device
        positions = torch.cat([torch.arange(ctx + canvas.shape[1], device=device),
                               ctx - 1 + torch.arange(written.shape[1], device=device)])
        end = max(ctx + canvas.shape[1], ctx - 1 + written.shape[1])
        hidden, _ = self._run(torch.cat([context, canvas, written], dim=1), 0, mask, None, positions=positions,
                              positions_end=end)
        return hidden

    def encode_context(self, ids: Tensor, cache: KVCache | None = None) -> KVCache:
        """Causally encode ``ids`` (1, n) after an optional cached context; returns the
        cache of the whole context. Exact: the context never attends to the canvas."""
        past = 0 if cache is None else cache[0][0].shape[2]
        n = ids.shape[1]
        mask = torch.ones(n, past + n, dtype=torch.bool, device=ids.device).tril(diagonal=past)
        _, new_cache = self._run(ids, past, mask, cache)
        return new_cache

    def make_room(self, cache: KVCache | None, canvas_size: int, pending: Tensor | None = None) -> CanvasRoom:
        """The context's cache (None: no context yet) copied once into buffers with room
        for ``pending`` context ids (1, n), encoded by the first pass, and a canvas."""
        extra = 0 if pending is None else pending.shape[1]
        length = 0 if cache is None else cache[0][0].shape[2]
        weight = self.embed.weight
        layers: KVCache = []
        for i in range(self.config.n_layer):
            room = weight.new_zeros(2, 1, self.config.n_head, length + extra + canvas_size, self.config.head_dim)
            if cache is not None:
                room[0, :, :, :length], room[1, :, :, :length] = cache[i]
            layers.append((room[0], room[1]))
        return CanvasRoom(layers, length + extra, pending)

    def denoise(self, canvas: Tensor, cache: KVCache | CanvasRoom, where: Tensor | None = None) -> Tensor:
        """One refinement step: canvas (1, L) against the cached context. Logits only at
        the canvas positions ``where`` (indices), else everywhere: (n, vocab). In a room,
        the canvas may be a prefix of the room's canvas: the positions after it are not
        recomputed (their keys/values stay as the last pass left them)."""
        if isinstance(cache, CanvasRoom) and cache.pending is not None:
            return self._encode_pending_and_denoise(canvas, cache, where)
        if isinstance(cache, CanvasRoom):
            start = cache.context_length
            hidden, _ = self._run(canvas, start, None, cache.layers, room_at=start)
        else:
            start = cache[0][0].shape[2]
            hidden, _ = self._run(canvas, start, None, cache)
        hidden = hidden[0] if where is None else hidden[0, where]
        return self.logits(hidden)

    def next_tokens_logits(self, ids: Tensor, layers: KVCache, at: int, positions: Tensor, sees: Tensor) -> Tensor:
        """Encode ``ids`` (1, n) as context into the slots [at, at + n) of a room's
        ``layers``, row i at ``positions[i]`` and seeing the slots before ``at + n`` where
        ``sees[i]`` (n, at + n) says; logits of the token after each (n, vocab)."""
        n, keys = ids.shape[1], layers[0][0].shape[2]
        mask = torch.zeros(n, keys, dtype=torch.bool, device=ids.device)
        mask[:, :at + n] = sees
        hidden, _ = self._run(ids, at, mask, layers, room_at=at, positions=positions)
        return self.logits(hidden[0])

    def _encode_pending_and_denoise(self, canvas: Tensor, room: CanvasRoom, where: Tensor | None) -> Tensor:
        """The room's pending context (causal) and the canvas (seeing all context) in one pass."""
        assert room.pending is not None
        tail = room.pending.shape[1]
        encoded = room.context_length - tail
        keys = room.layers[0][0].shape[2]
        mask = torch.ones(tail + canvas.shape[1], keys, dtype=torch.bool, device=canvas.device)
        mask[:tail] = torch.ones(tail, keys, dtype=torch.bool, device=canvas.device).tril(diagonal=encoded)
        hidden, _ = self._run(torch.cat([room.pending, canvas], dim=1), encoded, mask, room.layers, room_at=encoded)
        room.pending = None
        hidden = hidden[0, tail:] if where is None else hidden[0, tail + where]
        return self.logits(hidden)


def training_mask(context_valid: Tensor, canvas_size: int, canvas_valid: Tensor | None = None,
                  written_valid: Tensor | None = None) -> Tensor:
    """(batch, 1, T, T) bool: context causal over valid keys; canvas sees valid context
    and the whole (valid) canvas; the written tokens after the canvas (``written_valid``)
    see valid context but its last token (they write it again: token healing) and,
    causally, themselves, and nothing sees them. Every row keeps its diagonal so padded
    rows stay finite."""
    batch, ctx = context_valid.shape
    device = context_valid.device
    if canvas_valid is None:
        canvas_valid = torch.ones(batch, canvas_size, dtype=torch.bool, device=device)
    if written_valid is None:
        written_valid = torch.zeros(batch, 0, dtype=torch.bool, device=device)
    written = written_valid.shape[1]
    total = ctx + canvas_size + written
    key_valid = torch.cat([context_valid, canvas_valid, written_valid], dim=1)
    causal = torch.ones(total, total, dtype=torch.bool, device=device).tril()
    causal[ctx:ctx + canvas_size, :ctx + canvas_size] = True  # canvas rows see context and canvas
    causal[ctx + canvas_size:, ctx:ctx + canvas_size] = False  # written rows never see the canvas
    causal[ctx + canvas_size:, ctx - 1] = False  # nor the cut token they write again
    mask = causal[None] & key_valid[:, None, :]
    mask |= torch.eye(total, dtype=torch.bool, device=device)[None]
    return mask[:, None]
