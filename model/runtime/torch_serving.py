"""The torch network behind the serving protocol (numpy in, numpy out): for tests and
ablations, which measure the network as trained, and for serving where ONNX Runtime
can't run. Arrays and tensors share memory, so a room written by torch is the room."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from model.architecture import NetworkConfig
from model.checkpoint import LoadedModel, load_model
from model.network import CanvasRoom, DiffusionEditor, KVCache
from model.runtime.canvas_room import Cache, Room, RoomMemory, new_room
from model.runtime.int8 import quantize_for_serving
from model.runtime.served_model import ServedModel


class TorchServing:
    def __init__(self, editor: DiffusionEditor) -> None:
        self.editor = editor

    @property
    def config(self) -> NetworkConfig:
        return self.editor.config

    @torch.no_grad()
    def encode_context(self, ids: np.ndarray, cache: Cache | None = None) -> Cache:
        encoded = self.editor.encode_context(torch.from_numpy(np.asarray(ids, dtype=np.int64))[None],
                                             None if cache is None else _tensors(cache))
        return [(k[0].float().numpy(), v[0].float().numpy()) for k, v in encoded]

    def make_room(self, cache: Cache | None, canvas_size: int, pending: np.ndarray | None = None,
                  memory: RoomMemory | None = None) -> Room:
        return new_room(self.config, cache, canvas_size, pending, memory)

    @torch.no_grad()
    def next_tokens(self, ids: np.ndarray, room: Room, at: int, positions: np.ndarray, sees: np.ndarray) -> np.ndarray:
        tokens = torch.from_numpy(np.asarray(ids, dtype=np.int64))[None]
        visible = torch.from_numpy(np.asarray(sees, dtype=bool))
        rows_at = torch.from_numpy(np.asarray(positions, dtype=np.int64))
        # Writes into the room.
        logits = self.editor.next_tokens_logits(tokens, _tensors(room.layers), at, rows_at, visible)
        return logits.float().softmax(-1).numpy()

    @torch.no_grad()
    def probabilities(self, canvas: np.ndarray, cache: Cache | Room, where: np.ndarray | None = None) -> np.ndarray:
        ids = torch.from_numpy(np.asarray(canvas, dtype=np.int64))[None]
        rows = None if where is None else torch.from_numpy(np.asarray(where, dtype=np.int64))
        if not isinstance(cache, Room):
            return self.editor.denoise(ids, _tensors(cache), rows).float().softmax(-1).numpy()
        pending = None if cache.pending is None else torch.from_numpy(np.asarray(cache.pending, dtype=np.int64))[None]
        used = [(k[:, :cache.end], v[:, :cache.end]) for k, v in cache.layers]  # the slots after ``end``: no one's
        room = CanvasRoom(_tensors(used), cache.context_length, pending)
        logits = self.editor.denoise(ids, room, rows)  # writes into the shared buffers
        cache.pending = None
        return logits.float().softmax(-1).numpy()


def _tensors(cache: Cache) -> KVCache:
    return [(torch.from_numpy(k)[None], torch.from_numpy(v)[None]) for k, v in cache]


def serve_in_torch(loaded: LoadedModel) -> ServedModel:
    """A torch-loaded model behind the serving protocol, as it is (float, no int8)."""
    return ServedModel(TorchServing(loaded.network), loaded.tokenizer, loaded.metadata)


def load_torch_served(folder: Path, int8: bool = True, threads: int = 2) -> ServedModel:
    """Serving in torch: float32 (the rooms are), linear layers in int8 where that works.
    Torch's thread count is the process's: several workers share ``threads``."""
    loaded = load_model(folder, dtype=torch.float32)
    if int8:
        quantize_for_serving(loaded.network)
    torch.set_num_threads(threads)
    return serve_in_torch(loaded)
