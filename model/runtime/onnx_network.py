"""The served denoiser: the serving protocol (``serving.py``) run by ONNX Runtime on the
graph of ``onnx_graph.py``, with no torch in the process.

The graph sees keys as a set: every pass gets the cache (or the whole room) as its past
and an additive bias that says which of those keys, and which of its own rows, each row
may see. A room's slots that this pass rewrites are hidden from it (their old keys are
stale) and the new keys/values are written into them afterwards, so no pass copies the
context's cache. Same results as the torch network (tests compare them).
"""

from __future__ import annotations

import numpy as np
import onnxruntime

from model.architecture import ROPE_TABLE_POSITIONS, NetworkConfig, rotary_tables
from model.runtime.canvas_room import Cache, Room, RoomMemory, new_room
from model.runtime.onnx_graph import build_pass_graph

HIDDEN = np.float32(-np.inf)


# Passes of at most this many rows (the beam search's, one row a beam; the canvas's as you
# type, with the few context tokens typed since the last request) run on one thread:
# at that size the second thread's hand-offs between ~300 small ops cost more than it
# computes. `redraft bench latency`, four runs each, alternating: p50 / p95
# 18.4–19.3 / 41.7–51.6 ms against 20.2–21.1 / 55.9–56.8 with every pass on two threads,
# and less CPU per keystroke (19–21 ms against 23–24), for ~29 MB more RSS (the weights of a
# second session). The canvas's pass too (~35 rows as you type: 8.9 ms on one
# thread against 11.0 on two, in-process); one thread is faster up to ~130 rows, level at
# 160, slower beyond (224 rows: 38 against 34 ms), so a cold context's pass keeps two.
SMALL_PASS_ROWS = 128


def _session_options(threads: int) -> onnxruntime.SessionOptions:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # ORT's own warnings are not the user's business
    # Hidden keys' scores are -inf, and their exponentials underflowed through denormal
    # floats: with these flushed to zero the attention's softmax ran ~9x faster here.
    options.add_session_config_entry("session.set_denormal_as_zero", "1")
    # Between passes the pool threads sleep rather than spin: the server shares two cores
    # with the editor. Spinning answered faster (p50 16–17 ms) but burned 2.5×
    # the CPU per keystroke, most of it spinning after the answer was sent (README).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


class OrtNetwork:
    def __init__(self, config: NetworkConfig, weights: dict[str, np.ndarray], int8: bool = True,
                 threads: int = 2) -> None:
        self._config = config
        graph = build_pass_graph(config, weights, int8).SerializeToString()
        self.session = onnxruntime.InferenceSession(graph, _session_options(threads),
                                                    providers=["CPUExecutionProvider"])
        self.small_pass_session = self.session if threads == 1 else onnxruntime.InferenceSession(
            graph, _session_options(1), providers=["CPUExecutionProvider"])
        self._outputs = ["probabilities"] + [f"{kind}{i}" for i in range(config.n_layer) for kind in ("keys", "values")]
        self._rope = self._rope_table(ROPE_TABLE_POSITIONS)

    @property
    def config(self) -> NetworkConfig:
        return self._config

    def _rope_table(self, positions: int) -> tuple[np.ndarray, np.ndarray]:
        return rotary_tables(positions, self.config.head_dim, self.config.rope_base)

    def _pass(self, ids: np.ndarray, start: int, past: Cache, bias: np.ndarray, rows: np.ndarray,
              positions: np.ndarray | None = None) -> tuple[np.ndarray, Cache]:
        """Rows at positions ``start`` onwards, or each at its own of ``positions``."""
        if positions is None:
            positions = np.arange(start, start + len(ids))
        end = int(positions.max()) + 1
        if end > self._rope[0].shape[0]:
            self._rope = self._rope_table(max(end, 2 * self._rope[0].shape[0]))
        feed = {"ids": ids.astype(np.int64, copy=False), "positions": positions, "cos": self._rope[0],
                "sin": self._rope[1], "bias": bias, "rows": rows.astype(np.int64, copy=False)}
        for i, (keys, values) in enumerate(past):
            feed[f"past_keys{i}"], feed[f"past_values{i}"] = keys, values
        session = self.small_pass_session if len(ids) <= SMALL_PASS_ROWS else self.session
        out = session.run(self._outputs, feed)
        return out[0], [(out[1 + 2 * i], out[2 + 2 * i]) for i in range(self.config.n_layer)]

    def _empty_past(self) -> Cache:
        empty = np.zeros((self.config.n_head, 0, self.config.head_dim), dtype=np.float32)
        return [(empty, empty)] * self.config.n_layer

    def encode_context(self, ids: np.ndarray, cache: Cache | None = None) -> Cache:
        past = self._empty_past() if cache is None else _contiguous(cache)
        length, n = past[0][0].shape[1], len(ids)
        bias = np.zeros((n, length + n), dtype=np.float32)
        bias[:, length:] = np.triu(np.full((n, n), HIDDEN, dtype=np.float32), 1)
        _, new = self._pass(np.asarray(ids), length, past, bias, np.zeros(1, dtype=np.int64))
        return [(np.concatenate([old_k, k], axis=1), np.concatenate([old_v, v], axis=1))
                for (old_k, old_v), (k, v) in zip(past, new, strict=True)]

    def make_room(self, cache: Cache | None, canvas_size: int, pending: np.ndarray | None = None,
                  memory: RoomMemory | None = None) -> Room:
        return new_room(self.config, cache, canvas_size, pending, memory)

    def next_tokens(self, ids: np.ndarray, room: Room, at: int, positions: np.ndarray, sees: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids)
        n = len(ids)
        bias = np.full((n, room.layers[0][0].shape[1] + n), HIDDEN, dtype=np.float32)
        bias[:, :at] = np.where(sees[:, :at], np.float32(0.0), HIDDEN)
        bias[:, -n:] = np.where(sees[:, at:], np.float32(0.0), HIDDEN)  # these rows, over [past | these rows]
        probabilities, new = self._pass(ids, at, room.layers, bias, np.arange(n),
                                        positions=np.asarray(positions, dtype=np.int64))
        _write_into(room, at, new)
        return probabilities

    def probabilities(self, canvas: np.ndarray, cache: Cache | Room, where: np.ndarray | None = None) -> np.ndarray:
        canvas = np.asarray(canvas)
        scored = np.arange(len(canvas)) if where is None else np.asarray(where)
        if not isinstance(cache, Room):
            past = _contiguous(cache)
            length = past[0][0].shape[1]
            bias = np.zeros((len(canvas), length + len(canvas)), dtype=np.float32)
            probabilities, _ = self._pass(canvas, length, past, bias, scored)
            return probabilities
        room = cache
        causal = 0 if room.pending is None else len(room.pending)
        room_at = room.context_length - causal
        ids = canvas if room.pending is None else np.concatenate([room.pending, canvas])
        room_length = room.layers[0][0].shape[1]
        bias = _room_bias(room_length, room.end, room_at, len(ids), causal)
        past = room.layers
        if room_at == 0 and len(ids) == room.end:
            # A cold context: every slot is rewritten, so none is visible. Attending over
            # these rows alone halves the attention of the costliest pass a request makes.
            past, bias = self._empty_past(), np.ascontiguousarray(bias[:, room_length:])
        head_row = room.head_row()
        rows = causal + scored if head_row is None else np.append(causal + scored, head_row)
        probabilities, new = self._pass(ids, room_at, past, bias, rows)
        _write_into(room, room_at, new)
        room.pending = None
        if head_row is not None:
            room.head, probabilities = probabilities[-1], probabilities[:-1]
        return probabilities


def _contiguous(cache: Cache) -> Cache:
    return [(np.ascontiguousarray(k), np.ascontiguousarray(v)) for k, v in cache]


def _write_into(room: Room, at: int, new: Cache) -> None:
    """A pass's new keys/values into the room's slots from ``at`` on."""
    for (room_keys, room_values), (keys, values) in zip(room.layers, new, strict=True):
        room_keys[:, at:at + keys.shape[1]] = keys
        room_values[:, at:at + values.shape[1]] = values


def _room_bias(room_length: int, end: int, room_at: int, n: int, causal: int) -> np.ndarray:
    """What each of the ``n`` rows written at ``room_at`` may see, over [room | these rows]:
    the first ``causal`` rows (pending context) see the context before them and each
    other causally; the canvas rows see everything before the room's ``end`` but the slots
    being rewritten."""
    bias = np.zeros((n, room_length + n), dtype=np.float32)
    bias[:, room_at:room_at + n] = HIDDEN  # stale: these rows' new keys replace them
    bias[:, end:room_length] = HIDDEN  # unused slots (``new_room``), if any: stale too
    if causal:
        bias[:causal, room_at:room_length] = HIDDEN  # the canvas's slots, after the context
        bias[:causal, room_length:room_length + causal] = np.triu(
            np.full((causal, causal), HIDDEN, dtype=np.float32), 1)
        bias[:causal, room_length + causal:] = HIDDEN
    return bias
