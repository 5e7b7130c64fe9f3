"""The network protocol both runtimes serve (ONNX Runtime's and torch's), and a model as
the server holds it: that network with its tokenizer, metadata and phrase table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from model.architecture import NetworkConfig
from model.fim.phrase_table import PhraseTable
from model.runtime.canvas_room import Cache, Room, RoomMemory
from model.tokenizer import CodeTokenizer


class ServingNetwork(Protocol):
    """The denoiser's serving entry points (the torch network's are in ``network.py``)."""

    @property
    def config(self) -> NetworkConfig: ...

    def encode_context(self, ids: np.ndarray, cache: Cache | None = None) -> Cache:
        """Causally encode ``ids`` (n,) after an optional cached context; the whole context's cache."""

    def make_room(self, cache: Cache | None, canvas_size: int, pending: np.ndarray | None = None,
                  memory: RoomMemory | None = None) -> Room:
        """A room for a canvas after ``cache`` and the ``pending`` ids (``new_room``),
        taken from ``memory`` if given."""

    def next_tokens(self, ids: np.ndarray, room: Room, at: int, positions: np.ndarray, sees: np.ndarray) -> np.ndarray:
        """Encode ``ids`` (n,) as context into the room's slots [at, at + n), row i at
        ``positions[i]``: it sees the slots before ``at + n`` where ``sees[i]`` ((n, at + n)
        bool) says, never a later slot. So one pass extends every beam of a search by a
        token, each after its own tokens, and checks drafted tokens after one of them, each
        after the ones before it (``left_to_right.py``). The distribution over the token
        after each row (n, vocab), float32."""

    def probabilities(self, canvas: np.ndarray, cache: Cache | Room, where: np.ndarray | None = None) -> np.ndarray:
        """One refinement step of canvas (L,): each scored position's distribution over the
        vocabulary (len(where) or L, vocab), float32. In a room, the canvas may be a prefix
        of the room's: the positions after it keep the keys/values the last pass left."""


@dataclass(frozen=True)
class ServedModel:
    network: ServingNetwork
    tokenizer: CodeTokenizer
    metadata: dict[str, Any]
    phrases: PhraseTable | None = None  # the corpus's line continuations, when the folder has them
