"""The served denoiser: ``DiffusionEditor``'s serving entry points (``encode_context``,
``make_room``, ``denoise``) run by ONNX Runtime on the graph of ``onnx_graph.py``.

The graph sees keys as a set: every pass gets the cache (or the whole room) as its past
and an additive bias that says which of those keys, and which of its own rows, each row
may see. A room's slots that this pass rewrites are hidden from it (their old keys are
stale) and the new keys/values are written into them afterwards, so no pass copies the
context's cache. Same results as the torch network (tests compare them).

Tensors cross the boundary as torch tensors sharing memory with numpy arrays, so the
sampler, the rooms and the caches stay as they are.
"""

from __future__ import annotations

import logging

import numpy as np
import onnxruntime
import torch
from torch import Tensor

from model.network import ROPE_TABLE_POSITIONS, CanvasRoom, KVCache, NetworkConfig, rotary_tables
from model.onnx_graph import build_pass_graph

log = logging.getLogger(__name__)

HIDDEN = np.float32(-np.inf)

Past = list[tuple[np.ndarray, np.ndarray]]  # per layer (heads, positions, head_dim)


class OrtNetwork:
    def __init__(self, config: NetworkConfig, weights: dict[str, np.ndarray], int8: bool = True,
                 threads: int = 2) -> None:
        self.config = config
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # ORT's own warnings are not the user's business
        graph = build_pass_graph(config, weights, int8).SerializeToString()
        self.session = onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        self._outputs = ["logits"] + [f"{kind}{i}" for i in range(config.n_layer) for kind in ("keys", "values")]
        self._rope = self._rope_table(ROPE_TABLE_POSITIONS)

    def _rope_table(self, positions: int) -> tuple[np.ndarray, np.ndarray]:
        cos, sin = rotary_tables(torch.arange(positions), self.config.head_dim, self.config.rope_base)
        return cos.numpy(), sin.numpy()

    def _pass(self, ids: np.ndarray, start: int, past: Past, bias: np.ndarray, rows: np.ndarray) -> tuple[
            np.ndarray, Past]:
        end = start + len(ids)
        if end > self._rope[0].shape[0]:
            self._rope = self._rope_table(max(end, 2 * self._rope[0].shape[0]))
        feed = {"ids": ids.astype(np.int64, copy=False), "cos": self._rope[0][start:end],
                "sin": self._rope[1][start:end], "bias": bias, "rows": rows.astype(np.int64, copy=False)}
        for i, (keys, values) in enumerate(past):
            feed[f"past_keys{i}"], feed[f"past_values{i}"] = keys, values
        out = self.session.run(self._outputs, feed)
        return out[0], [(out[1 + 2 * i], out[2 + 2 * i]) for i in range(self.config.n_layer)]

    def _empty_past(self) -> Past:
        empty = np.zeros((self.config.n_head, 0, self.config.head_dim), dtype=np.float32)
        return [(empty, empty)] * self.config.n_layer

    def encode_context(self, ids: Tensor, cache: KVCache | None = None) -> KVCache:
        """Causally encode ``ids`` (1, n) after an optional cached context (as the torch network)."""
        past = self._empty_past() if cache is None else _as_past(cache)
        length, n = past[0][0].shape[1], ids.shape[1]
        bias = np.zeros((n, length + n), dtype=np.float32)
        bias[:, length:] = np.triu(np.full((n, n), HIDDEN, dtype=np.float32), 1)
        _, new = self._pass(ids[0].numpy(), length, past, bias, np.zeros(1, dtype=np.int64))
        return [(torch.from_numpy(np.concatenate([old_k, k], axis=1)[None]),
                 torch.from_numpy(np.concatenate([old_v, v], axis=1)[None]))
                for (old_k, old_v), (k, v) in zip(past, new, strict=True)]

    def make_room(self, cache: KVCache | None, canvas_size: int, pending: Tensor | None = None) -> CanvasRoom:
        """As ``DiffusionEditor.make_room``: the cache copied once into float32 buffers with
        room for the pending context and the canvas."""
        extra = 0 if pending is None else pending.shape[1]
        length = 0 if cache is None else cache[0][0].shape[2]
        layers: KVCache = []
        for i in range(self.config.n_layer):
            # numpy's zeros come from calloc: cheaper than torch's memset on every request.
            room = np.zeros((2, 1, self.config.n_head, length + extra + canvas_size, self.config.head_dim),
                            dtype=np.float32)
            if cache is not None:
                room[0, :, :, :length], room[1, :, :, :length] = (t.float().numpy() for t in cache[i])
            layers.append((torch.from_numpy(room[0]), torch.from_numpy(room[1])))
        return CanvasRoom(layers, length + extra, pending)

    def denoise(self, canvas: Tensor, cache: KVCache | CanvasRoom, where: Tensor | None = None) -> Tensor:
        """As ``DiffusionEditor.denoise``: logits (len(where) or L, vocab) for canvas (1, L)."""
        scored = np.arange(canvas.shape[1]) if where is None else where.numpy()
        if not isinstance(cache, CanvasRoom):
            past = _as_past(cache)
            length = past[0][0].shape[1]
            bias = np.zeros((canvas.shape[1], length + canvas.shape[1]), dtype=np.float32)
            logits, _ = self._pass(canvas[0].numpy(), length, past, bias, scored)
            return torch.from_numpy(logits)
        room = cache
        causal = 0 if room.pending is None else room.pending.shape[1]
        room_at = room.context_length - causal
        ids = canvas[0].numpy() if room.pending is None else torch.cat([room.pending, canvas], dim=1)[0].numpy()
        slots: Past = [(k[0].numpy(), v[0].numpy()) for k, v in room.layers]  # views: written below
        logits, new = self._pass(ids, room_at, slots, _room_bias(slots[0][0].shape[1], room_at, len(ids), causal),
                                 causal + scored)
        for (room_keys, room_values), (keys, values) in zip(slots, new, strict=True):
            room_keys[:, room_at:room_at + len(ids)] = keys
            room_values[:, room_at:room_at + len(ids)] = values
        room.pending = None
        return torch.from_numpy(logits)


def _as_past(cache: KVCache) -> Past:
    return [(np.ascontiguousarray(k[0].float().numpy()), np.ascontiguousarray(v[0].float().numpy()))
            for k, v in cache]


def _room_bias(room_length: int, room_at: int, n: int, causal: int) -> np.ndarray:
    """What each of the ``n`` rows written at ``room_at`` may see, over [room | these rows]:
    the first ``causal`` rows (pending context) see the context before them and each
    other causally; the canvas rows see everything but the slots being rewritten."""
    bias = np.zeros((n, room_length + n), dtype=np.float32)
    bias[:, room_at:room_at + n] = HIDDEN  # stale: these rows' new keys replace them
    if causal:
        bias[:causal, room_at:room_length] = HIDDEN  # the canvas's slots, after the context
        bias[:causal, room_length:room_length + causal] = np.triu(
            np.full((causal, causal), HIDDEN, dtype=np.float32), 1)
        bias[:causal, room_length + causal:] = HIDDEN
    return bias
