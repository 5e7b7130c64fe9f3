"""The cursor's line written left to right by the network's next-token head.

The network is trained with a next-token loss on its context (``<|suffix|> suffix
<|prefix|> prefix``, causal), so the prefix's last position already predicts what follows
the cursor, knowing the suffix. In a first probe (greedy, one token per pass, network
only, session 19's weights) that head wrote the exact middle of 61 of 600 spans from
packages in no corpus, the denoised canvas 42: so it is a second candidate, calibrated on
its own, for the rest of a line or one whole line.

A small beam search writes it, not greedy writing: the line must end as the suffix's line
goes on, and the likeliest first tokens often lead to a line that doesn't. All the beams
advance in one pass per token, each in slots of its own in the room. The search returns
every line it finished; the caller's calibrator, not the beam's score, picks among them.

Token healing: the prefix ends wherever the cursor is, often inside what the tokenizer
would write as one token (``"\\n\\n"`` before an indented line is ``"\\n\\n   "``), and the
head never saw such a cut. So the last prefix token is dropped and the first tokens written
must write its text again (any token boundaries) before anything else. Since session 24
the head also trains on what it writes at the cursor (``FimExample.written``); served
without healing it was still worse (142 vs 159 right of 1,000 fresh spans at 0.3). Since
session 25 that training is healed the same way: the cut token's text is written again
from the position before it, which the written tokens never see.

Healing compares bytes, not text: the tokenizer is byte-level, and after a character of
two or more bytes (``"é"``, ``"т"``, ``"✓"``) the cut token is often part of it, whose text
alone is only U+FFFD. The tokens written again must then hold exactly its bytes, and a line
is finished only as valid UTF-8, so no half of a character reaches the cursor.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Protocol

import numpy as np

from model.fim.calibration import Calibrator, squashed
from model.formats import healed_bytes
from model.runtime.serving import Cache, Room, ServingNetwork, new_room
from model.tokenizer import CodeTokenizer

# Held-out lines it wrote right were at most 6 tokens long; longer ones cost time: a pass
# per token, 2–3.5 ms each, and searches on long lines were most of the typing bench's
# slowest answers. 16 until session 52; at 10, through the server with `v46`, the same
# answers on 4,000 spans of packages in no corpus and held-out ones, HumanEval level (exact
# 110 both, 157 passed against 158), and the typing bench's p95 ~45 → ~40 ms (README).
MAX_TOKENS = 10
# Exact lines of 300 spans of packages in no corpus, session 21's weights, the likeliest
# line: greedy 30, a beam of 2: 38, of 3: 41, of 4: 41 (mostly lines greedy search ends in a
# way the suffix refuses). With the calibrator picking (session 23), through the server,
# HumanEval pass@1 at threshold 0: 3 beams 102, 4: 111, 5: 115, 8: 120. At the server's 0.3,
# 5 and 8 beams show the same (session 24: 149 right of 252 shown on 1,000 spans of
# packages in no corpus, 250 / 248 of 430 on 2,000 held-out spans): the search drops beams
# that can't reach the threshold, so the extra beams cost little there.
BEAMS = 8
LEAST_PROBABILITY = 1e-12  # a token the constraint left no mass is scored this, not -inf
KIND = "left_to_right"  # Candidate.copied of such a line
CONFIG_KEY = "fim_left_to_right"  # its calibrator, in config.json's calibration
# No minimum log-probability: fitted with it, its weight came out negative (it and the mean
# move together), which rewards a line for one very unlikely token.
# "elsewhere": a copied line or a line continuation (file, workspace, corpus phrases) is the
# same text. On 2,431 held-out lines, session 21's weights: at 0.3, 66.3% right of 14.9%
# shown without it, 72.6% of 14.4% with it.
FEATURE_NAMES = ("mean_logp", "log_length", "agrees", "parses", "elsewhere")
PARSES = 3  # the index of the feature measured only when it can matter (written_ranking.py)


@dataclass(frozen=True)
class Written:
    text: str  # what goes at the cursor
    tokens: list[int]  # as written: the first ones write ``healed`` again
    healed: bytes  # the prefix's last token's bytes, dropped and written again
    log_probs: list[float]  # of each token written
    passes: int = 0  # the network's passes that wrote it (every beam's token in one pass; a first
    # distribution the context's own pass gave, ``write_lines(first=...)``, is not counted)

    @property
    def score(self) -> float:
        """What the beam search ranks lines by: the sum of their tokens' log-probabilities."""
        return sum(self.log_probs)

    def features(self, network_text: str, parsed: float, other_texts: list[str]) -> list[float]:
        """The calibrator's inputs (``FEATURE_NAMES``); ``parsed``: ``cursor_statement.statement_parses``;
        ``other_texts``: the request's copied line or line continuations."""
        return [sum(self.log_probs) / len(self.log_probs), math.log(len(self.log_probs)),
                float(network_text == self.text), parsed, float(self.text in other_texts)]


def best_reachable(check: Calibrator, log_probs: list[float], agreeable: bool = True, elsewhere: bool = True) -> float:
    """The highest confidence a line that starts with tokens of these log-probabilities
    could still get from ``check`` however it goes on (certain tokens, up to
    ``MAX_TOKENS``), its statement parsing and, if ``agreeable`` / ``elsewhere`` (it has
    not left the canvas's answer / another source's line yet), being the same text. While
    this is below the server's threshold the line can't be shown, so writing it stops."""
    # In plain Python: it runs for every child of every beam (~40 times a request), where
    # building a row per length for one numpy product cost ~7 µs a call, this ~2.
    by_mean_logp, by_log_length, by_agrees, by_parses, by_elsewhere = check.weights  # FEATURE_NAMES' order
    total = sum(log_probs)
    best = max(by_mean_logp * total / length + by_log_length * log
               for length, log in _LENGTHS_AND_LOGS[len(log_probs) - 1:])
    return squashed(best + by_agrees * agreeable + by_parses + by_elsewhere * elsewhere + check.bias)


# The lengths a line may still reach, and their logarithms.
_LENGTHS_AND_LOGS = [(float(length), math.log(length)) for length in range(1, MAX_TOKENS + 1)]


@lru_cache(maxsize=4)
def _tokens_by_bytes(tokenizer: CodeTokenizer) -> tuple[list[bytes], np.ndarray, dict[bytes, list[int]]]:
    """The tokens with bytes, sorted by them (their bytes, their ids), and each bytes' ids."""
    order = sorted((data, token) for token, data in enumerate(tokenizer.token_bytes) if data)
    ids_of: dict[bytes, list[int]] = {}
    for data, token in order:
        ids_of.setdefault(data, []).append(token)
    return [data for data, _ in order], np.array([token for _, token in order], dtype=np.int64), ids_of


def _first_after_prefix(data: bytes) -> bytes | None:
    """The least bytes after every bytes that start with ``data`` (None: there are none)."""
    stem = data.rstrip(b"\xff")
    return stem[:-1] + bytes([stem[-1] + 1]) if stem else None


@lru_cache(maxsize=256)
def _consistent_with(tokenizer: CodeTokenizer, data: bytes) -> np.ndarray:
    """(vocab,) bool: the tokens whose bytes start with ``data`` or with which it starts (so
    that ``"            pytest"`` may still be written as 11 spaces and ``" pytest"``).
    Looked up in the sorted token bytes: the cursor cuts a new token at most keystrokes,
    and a scan of the whole vocabulary cost ~10 ms each time."""
    keys, ids, ids_of = _tokens_by_bytes(tokenizer)
    mask = np.zeros(len(tokenizer.token_bytes), dtype=bool)
    after = _first_after_prefix(data)
    mask[ids[bisect_left(keys, data):len(keys) if after is None else bisect_left(keys, after)]] = True
    for end in range(1, len(data)):
        mask[ids_of.get(data[:end], [])] = True
    return mask


def _likeliest(distribution: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` likeliest tokens, likeliest first (a partition, not a sort of the vocabulary)."""
    top = np.argpartition(-distribution, count)[:count]
    return top[np.argsort(-distribution[top], kind="stable")]


def line_end(prefix: str, suffix: str, written: str) -> str | None:
    """``written`` (everything up to and including a newline) cut to what goes at the cursor;
    None when it can't meet the suffix. At a line's start (nothing but indentation before
    the cursor) with code after it, a whole line is inserted, newline included; elsewhere
    the line ends where the cursor's line goes on: before its newline and the rest of the
    line the suffix already holds."""
    line = written[: written.index("\n")]
    rest = suffix.split("\n", 1)[0]
    before = prefix.rsplit("\n", 1)[-1]
    if not before.strip() and rest.strip():
        return line + "\n"
    if not line.endswith(rest):
        return None
    return line[: len(line) - len(rest)]


@dataclass(frozen=True)
class _Beam:
    """A line being written: its tokens, their text, their log-probabilities and the room's
    slots holding their keys/values (the last token's written by the next pass)."""

    tokens: list[int]
    data: bytes  # the tokens' bytes
    log_probs: list[float]
    slots: list[int]

    @property
    def score(self) -> float:
        return sum(self.log_probs)


def written_after(data: bytes, healed: bytes) -> str:
    """What a beam's bytes write after the cursor, as far as they are whole characters:
    nothing until they have written ``healed``."""
    return data[len(healed):].decode("utf-8", errors="ignore") if data.startswith(healed) else ""


def _finished_line(data: bytes, healed: bytes) -> str | None:
    """The line a beam finished (up to and including its newline), or None if its bytes
    are not all whole characters."""
    line = data[len(healed):data.index(b"\n", len(healed)) + 1]
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return None


class LineRanking(Protocol):
    """What the caller ranks finished lines by, and the most a line being written could
    still get: the beam search drops a beam that can't reach ``floor`` or beat the best
    line finished so far."""

    @property
    def floor(self) -> float: ...

    def value(self, written: Written) -> float: ...

    def bounds(self, written: Written) -> tuple[float, float]:
        """The least and most ``value`` can say, found without its costly part (a parse):
        a finished line that can't reach the floor or beat the best line is valued no
        further."""

    def reachable(self, log_probs: list[float], line: str) -> float: ...


@dataclass(frozen=True)
class ByScore:
    """The network alone: the sum of log-probabilities, which a token more can only lower."""

    floor: float = -math.inf

    def value(self, written: Written) -> float:
        return written.score

    def bounds(self, written: Written) -> tuple[float, float]:
        return written.score, written.score

    def reachable(self, log_probs: list[float], line: str) -> float:
        return sum(log_probs)


def _roomier(network: ServingNetwork, layers: Cache, used: int, slots: int) -> Room:
    """A new room holding the first ``used`` slots of ``layers`` with ``slots`` more after them."""
    return new_room(network.config, [(k[:, :used], v[:, :used]) for k, v in layers], slots, None)


def first_position(tokenizer: CodeTokenizer, ids: list[int]) -> int:
    """The context position whose next-token distribution is the line's first token: the
    last one's, or the one's before it when the last token is dropped to be healed."""
    return len(ids) - 2 if healed_bytes(tokenizer, ids) else len(ids) - 1


def write_lines(
    network: ServingNetwork, tokenizer: CodeTokenizer, ids: list[int], cache: Cache | Room, prefix: str, suffix: str,
    should_stop: Callable[[], bool] = lambda: False, ranking: LineRanking = ByScore(), beams: int = BEAMS,
    first: np.ndarray | None = None,
) -> list[Written]:
    """The cursor's lines after the context ``ids`` whose keys/values are ``cache`` (the
    room's context, left untouched): the distinct lines that fit the suffix within
    ``MAX_TOKENS`` a beam search of ``beams`` (1: greedy) finished, the most likely (sum of
    log-probabilities) first, none valued below ``ranking.floor``. A beam ends once
    ``ranking`` says it can't reach the floor or beat the best line finished so far; the
    search, when no beam is left. Empty when no line was found or the caller said stop
    (which it checks itself).

    One pass per token extends every beam: each beam's token goes into a slot of its own
    and sees the context and its own earlier slots (``ServingNetwork.next_tokens``).
    ``first``: the distribution of the first token (after ``first_position``), when the
    pass that encoded the context already gave it (``Room.head``): then the search starts
    from the cache's keys/values at that position, one pass sooner. Given that and the
    request's room itself (its context encoded, ``ids`` all of it), the beams are written
    into the room's slots after the context (the canvas's, which the denoising is done
    with; the context's are left as they are), and copied into a larger room only if the
    search outgrows them (``_roomier``)."""
    healed = healed_bytes(tokenizer, ids)
    start = first_position(tokenizer, ids)
    if isinstance(cache, Room) and first is not None and cache.pending is None and cache.context_length == len(ids):
        # The slots after the context: writing after the healed token's leaves it for the next request.
        room, free = cache, cache.context_length - 1
    else:
        context = cache.context_cache() if isinstance(cache, Room) else cache
        cached = start if first is None else start + 1  # the first input's own keys/values are cached then
        room = _roomier(network, context, cached, start + 1 - cached + beams * MAX_TOKENS)
        free = start
    ends = {tokenizer.end_of_middle_id, tokenizer.pad_id, tokenizer.mask_id}
    finished: list[Written] = []
    best = -math.inf  # the value of the best line finished so far

    def hopeless(log_probs: list[float], line: str) -> bool:
        reachable = ranking.reachable(log_probs, line)
        return reachable < ranking.floor or reachable <= best

    alive = [_Beam([], b"", [], [start])]
    inputs, passes, checked_against = [ids[start]], 0, best
    while alive:
        if best > checked_against:  # a line finished after some beams were checked: check them again
            kept = [beam for beam in alive if not hopeless(beam.log_probs, written_after(beam.data, healed))]
            alive = [replace(beam, slots=[*beam.slots[:-1], free + row]) for row, beam in enumerate(kept)]
            inputs = [beam.tokens[-1] for beam in alive]
            if not alive:
                break
        if should_stop():
            return []
        if first is not None:  # the first input's pass was the context's own
            distributions, first = first[None], None
        else:
            sees = np.zeros((len(alive), free), dtype=bool)
            sees[:, :start] = True
            for row, beam in enumerate(alive):
                sees[row, beam.slots[:-1]] = True
            if free + len(alive) > room.layers[0][0].shape[1]:
                room = _roomier(network, room.layers, free, beams * (MAX_TOKENS - len(alive[0].tokens)))
            distributions = network.next_tokens(np.array(inputs, dtype=np.int64), room, free,
                                                start + len(alive[0].tokens), sees)
            passes += 1
        free += len(alive)
        checked_against = best
        children: list[tuple[float, _Beam, int, float]] = []
        for beam, distribution in zip(alive, distributions, strict=True):
            if len(beam.data) < len(healed):  # still writing the healed bytes again
                distribution = np.where(_consistent_with(tokenizer, healed[len(beam.data):]), distribution, 0.0)
            total = float(distribution.sum()) or 1.0
            for token in _likeliest(distribution, beams):
                probability = float(distribution[token]) / total
                if probability > 0.0:
                    log_prob = math.log(max(probability, LEAST_PROBABILITY))
                    children.append((beam.score + log_prob, beam, int(token), log_prob))
        children.sort(key=lambda child: -child[0])
        alive, inputs = [], []
        for _, parent, token, log_prob in children:
            if len(alive) == beams:
                break
            tokens, log_probs = [*parent.tokens, token], [*parent.log_probs, log_prob]
            data = parent.data + tokenizer.token_bytes[token]
            line = written_after(data, healed)
            if token in ends:
                continue
            if "\n" in line:  # finished: kept if worth showing, though it may not beat the best
                whole = _finished_line(data, healed)
                placed = None if whole is None else line_end(prefix, suffix, whole)
                if placed is not None and placed.strip():
                    written = Written(placed, tokens, healed, log_probs)
                    low, high = ranking.bounds(written)
                    # Its exact value matters only if it may become the best or fall below the floor.
                    value = high if high < ranking.floor or (high <= best and low >= ranking.floor) \
                        else ranking.value(written)
                    if value >= ranking.floor:
                        finished.append(written)
                        best = max(best, value)
                continue
            if len(tokens) < MAX_TOKENS and not hopeless(log_probs, line):
                alive.append(_Beam(tokens, data, log_probs, [*parent.slots, free + len(alive)]))
                inputs.append(token)
    lines: dict[str, Written] = {}  # a text written with other tokens is the same line
    for written in sorted(finished, key=lambda written: -written.score):
        lines.setdefault(written.text, replace(written, passes=passes))
    return list(lines.values())
