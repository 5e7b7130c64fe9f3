"""The contexts a completer has left, a few kept: going back to a place encodes only what
changed there since.

``FimCompleter`` keeps the keys and values of one context, the last request's, and typing
on at the cursor re-encodes only its tail. A request at another place (another document,
or elsewhere in the same one) has another suffix, so nothing of that context fits it: its
whole context is encoded again, one pass of ~290 rows, 38.6 ms of the 56 ms that a new
place's first keystroke takes (in-process). Users go back and forth, though:
between a function and its caller, between two files, back from a next-edit jump, or undo
a big edit. So the contexts left are kept here, one a place (its suffix tokens), the most
recent ``CAPACITY``, and a request whose suffix is one of theirs starts from it.

A context is copied out of the rooms' memory when it is left, since the next room may be
built over it: ~6 MB, ~1 ms, once a place, into buffers of this module's own.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model.formats import ContextBudget, PrefixCut, context_cut
from model.runtime.canvas_room import Cache
from model.tokenizer import CodeTokenizer

log = logging.getLogger(__name__)

CAPACITY = 4  # contexts kept: ~6 MB each at the shipped model's 256 context tokens


def common_length(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading ids the two have in common."""
    common = 0
    for old, new in zip(a, b, strict=False):
        if old != new:
            break
        common += 1
    return common


@dataclass(frozen=True, eq=False)
class KeptContext:
    ids: list[int]
    cache: Cache  # the keys and values of ``ids``, copied out of the room they were in …
    memory: np.ndarray  # … into this flat buffer, one of ``RecentContexts``' own
    cut: PrefixCut | None  # where its prefix was cut (``context_cut``), to lay a request out as it was


@dataclass(frozen=True)
class Resumed:
    """A request's context laid out as a kept one was, and how much of that one it reuses."""

    ids: list[int]
    cut: PrefixCut | None
    kept: KeptContext
    common: int


class RecentContexts:
    """The kept contexts, and the buffers they are copied into: allocated once each, at most
    ``capacity`` + 1 (the kept ones and one being resumed), and used again. Copies allocated
    and freed as places were left grew the soak bench's RSS by 20 MB after its first tenth;
    with these buffers, by 5 MB."""

    def __init__(self, tokenizer: CodeTokenizer, budget: ContextBudget, capacity: int = CAPACITY) -> None:
        self.tokenizer, self.budget, self.capacity = tokenizer, budget, capacity
        self.kept: list[KeptContext] = []  # the least recently left first
        self.spare: list[np.ndarray] = []  # buffers no kept context is in

    def place_end(self, ids: Sequence[int]) -> int:
        """Where a context's place ends: its suffix tokens and the prefix marker after them
        (``formats.py``'s layout). Typing at the cursor changes nothing before it."""
        for position, token in enumerate(ids):
            if token == self.tokenizer.prefix_id:
                return position + 1
        return len(ids)

    def leave(self, ids: list[int], cache: Cache, cut: PrefixCut | None) -> None:
        """Keep a context being left, in place of an older one of the same place, or of the
        least recently left when ``capacity`` are kept."""
        if self.capacity <= 0 or not ids or not cache:
            return
        place = ids[:self.place_end(ids)]
        gone = [kept for kept in self.kept if kept.ids[:len(place)] == place]
        self.kept = [kept for kept in self.kept if all(kept is not old for old in gone)]
        if len(self.kept) >= self.capacity:
            gone.append(self.kept.pop(0))
        self.spare.extend(old.memory for old in gone)
        floats = sum(keys.size + values.size for keys, values in cache)
        memory = self._buffer(floats, floats // len(ids) * max(len(ids), self.budget.total))
        copied: Cache = []
        offset = 0
        for keys, values in cache:
            pair = []
            for array in (keys, values):
                view = memory[offset:offset + array.size].reshape(array.shape)
                view[...] = array
                pair.append(view)
                offset += array.size
            copied.append((pair[0], pair[1]))
        self.kept.append(KeptContext(list(ids), copied, memory, cut))

    def _buffer(self, floats: int, size: int) -> np.ndarray:
        """A spare buffer of at least ``floats``, or a new one of ``size``."""
        for turn, memory in enumerate(self.spare):
            if memory.size >= floats:
                return self.spare.pop(turn)
        return np.empty(max(floats, size), dtype=np.float32)

    def resume(self, prefix: str, suffix: str, ids: list[int], cut: PrefixCut | None, common: int) -> Resumed | None:
        """The kept context of this request's place that has more than ``common`` tokens in
        common with its context (``ids``, cut at ``cut``), taken out of the kept ones; None
        when none has. The request's context is laid out with the kept one's prefix cut,
        which the request's own may have moved. Once its cache is copied into the request's
        room, ``release`` gives its buffer back."""
        best: Resumed | None = None
        for kept in self.kept:
            place = self.place_end(kept.ids)
            if common_length(kept.ids, ids) < place:
                continue  # another place
            laid_out, laid_cut = ids, cut
            if kept.cut is not None and kept.cut != cut:
                laid_out, laid_cut = context_cut(self.tokenizer, prefix, suffix, self.budget, kept.cut)
            shared = common_length(kept.ids, laid_out)
            if shared > max(common, 0 if best is None else best.common):
                best = Resumed(laid_out, laid_cut, kept, shared)
        if best is not None:
            self.kept = [kept for kept in self.kept if kept is not best.kept]
            log.debug("resumed a kept context: %d of %d tokens", best.common, len(best.ids))
        return best

    def release(self, resumed: Resumed) -> None:
        """A resumed context's buffer is spare again (its cache has been copied elsewhere)."""
        self.spare.append(resumed.kept.memory)
