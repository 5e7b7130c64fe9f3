"""The room a canvas is denoised in, in numpy: the context's keys/values followed by slots
for the canvas, written in place by every pass, and the memory that consecutive requests'
rooms reuse. Both runtimes (``onnx_network.py``, ``torch_serving.py``) serve from it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.architecture import NetworkConfig

# One (keys, values) pair per layer, each (heads, positions, head_dim), float32.
Cache = list[tuple[np.ndarray, np.ndarray]]


@dataclass
class Room:
    """A context cache followed by room for the canvas (``new_room``): every denoising
    pass writes the canvas's keys/values there in place, instead of concatenating a copy
    of the whole context's on each pass and layer.

    ``pending`` context tokens (the tail typed since the cache was made) are encoded by
    the first denoising pass, in the same forward as the canvas: a forward of a few tokens
    costs mostly fixed per-layer overhead, so one pass instead of two saves that overhead
    on every request. Exact: the pending rows stay causal.

    That pass may also return the next-token distribution after one pending position
    (``head_at``, into ``head``): the line the head writes at the cursor starts from it,
    which saves the beam search a pass of its own (``left_to_right.write_lines``). A
    runtime that can't leaves ``head`` None."""

    layers: Cache  # each (heads, slots, head_dim): the context's, the canvas's, any unused after them
    context_length: int  # including the pending tokens
    end: int  # after the context's and the canvas's slots: a denoising pass sees none after it
    pending: np.ndarray | None = None  # (n,) context ids not yet in ``layers``
    head_at: int | None = None  # a context position whose next-token distribution is wanted
    head: np.ndarray | None = None  # (vocab,) that distribution, once the pending pass ran

    def head_row(self) -> int | None:
        """The pending row at ``head_at``, or None when it isn't pending (no head wanted)."""
        if self.pending is None or self.head_at is None:
            return None
        row = self.head_at - (self.context_length - len(self.pending))
        return row if 0 <= row < len(self.pending) else None

    def context_cache(self) -> Cache:
        """The context's keys/values (views into the room); only once nothing is pending."""
        if self.pending is not None:
            raise ValueError("the room's pending context has not been encoded yet")
        return [(k[:, :self.context_length], v[:, :self.context_length]) for k, v in self.layers]


class RoomMemory:
    """Two flat buffers that one caller's rooms take turns in (``new_room``). A new room of
    ~8 MB cost ~0.6 ms of page faults and zeroing on every request before any of it was
    written, and copying the context into it ~0.6–1 ms more. So a
    room goes in the buffer that holds the cache it starts from when its slots are laid out
    as that cache's room's were (the same count): the cache is then already in place and
    nothing is copied. Otherwise it goes in the other buffer, and the cache is copied."""

    def __init__(self) -> None:
        self._buffers = [np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float32)]

    def take(self, floats: int, keeping: Cache | None, slots: int) -> np.ndarray:
        """At least ``floats`` of float32 memory for a room of ``slots`` slots a layer. The
        buffer that ``keeping`` (the cache the room starts from: views into one of the
        buffers, or not) lives in if its room had as many slots, else the other. It holds
        earlier rooms' keys/values: finite, and hidden from every pass until one writes them."""
        holding = next((turn for turn, buffer in enumerate(self._buffers)
                        if keeping is not None and buffer.size and np.may_share_memory(buffer, keeping[0][0])), None)
        if holding is not None and keeping is not None and _slots_of(keeping) == slots:
            return self._buffers[holding]
        turn = 0 if holding is None else 1 - holding
        if self._buffers[turn].size < floats:
            # With headroom: typing on grows the context by a token or so a request.
            self._buffers[turn] = np.zeros(floats + floats // 4, dtype=np.float32)
        return self._buffers[turn]


def _slots_of(cache: Cache) -> int:
    """How many slots a layer of the room the cache's views lie in has: a slot's keys are
    one step apart, a head's ``slots`` steps."""
    keys = cache[0][0]
    return int(keys.strides[0] // keys.strides[1])


# A room in kept memory has a multiple of this many slots, the unused ones hidden: its
# count, and so where each layer's slots lie, then stays the same for ~this many tokens of
# typing, and the next request's room finds the context in place.
ROOM_SLOTS_STEP = 32


def new_room(config: NetworkConfig, cache: Cache | None, canvas_size: int, pending: np.ndarray | None,
             memory: RoomMemory | None = None) -> Room:
    """The cache in a room with slots for the pending ids and a canvas after it: new
    buffers, or ``memory``'s (its slots rounded up to ``ROOM_SLOTS_STEP``; the cache is
    copied only where it is not in place already)."""
    extra = 0 if pending is None else len(pending)
    length = 0 if cache is None else cache[0][0].shape[1]
    end = length + extra + canvas_size
    slots = end if memory is None else -(-end // ROOM_SLOTS_STEP) * ROOM_SLOTS_STEP
    shape = (2, config.n_head, slots, config.head_dim)
    per_layer = 2 * config.n_head * slots * config.head_dim
    flat = None if memory is None else memory.take(config.n_layer * per_layer, cache, slots)
    layers: Cache = []
    for i in range(config.n_layer):
        if flat is None:
            # Zeroed (calloc: cheap), so a slot no pass has written yet is never NaN.
            room = np.zeros(shape, dtype=np.float32)
        else:
            room = flat[i * per_layer:(i + 1) * per_layer].reshape(shape)
        layers.append((room[0], room[1]))
    if cache is not None and not (flat is not None and _in_place(cache, layers)):
        for (keys, values), (kept_keys, kept_values) in zip(layers, cache, strict=True):
            keys[:, :length], values[:, :length] = kept_keys, kept_values
    return Room(layers, length + extra, end, pending)


def _in_place(cache: Cache, layers: Cache) -> bool:
    """Whether the cache is the first slots of these layers already: views of the same
    memory, laid out alike (then copying it in would change nothing). A room's layers lie
    in one buffer in one layout, so the first and the last layer tell."""
    def same(kept: np.ndarray, room: np.ndarray) -> bool:
        into = room[:, :kept.shape[1]]
        return kept.shape == into.shape and kept.strides == into.strides and \
            kept.__array_interface__["data"][0] == into.__array_interface__["data"][0]
    return same(cache[0][0], layers[0][0]) and same(cache[-1][1], layers[-1][1])
