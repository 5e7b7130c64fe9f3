"""The cursor's line written left to right by the network's next-token head.

The network is trained with a next-token loss on its context (``<|suffix|> suffix
<|prefix|> prefix``, causal), so the prefix's last position already predicts what follows
the cursor, knowing the suffix. In a first probe (greedy, one token per pass, network
only, earlier weights) that head wrote the exact middle of 61 of 600 spans from
packages in no corpus, the denoised canvas 42: so it is a second candidate, calibrated on
its own, for the rest of a line or one whole line.

A small beam search writes it, not greedy writing: the line must end as the suffix's line
goes on, and the likeliest first tokens often lead to a line that doesn't. All the beams
advance in one pass per token, each in slots of its own in the room. The search returns
every line it finished; the caller's calibrator, not the beam's score, picks among them.
Its first tokens write the prefix's cut last token again (``token_healing.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from model.fim.calibration import Calibrator, squashed
from model.fim.token_healing import consistent_with, finished_line, first_position, written_after
from model.formats import healed_bytes
from model.runtime.canvas_room import Cache, Room, new_room
from model.runtime.served_model import ServingNetwork
from model.tokenizer import CodeTokenizer

# Held-out lines it wrote right were at most 6 tokens long; longer ones cost time: a pass
# per token, 2–3.5 ms each, and searches on long lines were most of the typing bench's
# slowest answers. It was 16; at 10, through the server with `v46`, the same
# answers on 4,000 spans of packages in no corpus and held-out ones, HumanEval level (exact
# 110 both, 157 passed against 158), and the typing bench's p95 ~45 → ~40 ms (README).
MAX_TOKENS = 10
# Exact lines of 300 spans of packages in no corpus, earlier weights, the likeliest
# line: greedy 30, a beam of 2: 38, of 3: 41, of 4: 41 (mostly lines greedy search ends in a
# way the suffix refuses). With the calibrator picking, through the server,
# HumanEval pass@1 at threshold 0: 3 beams 102, 4: 111, 5: 115, 8: 120. At the server's 0.3,
# 5 and 8 beams show the same (149 right of 252 shown on 1,000 spans of
# packages in no corpus, 250 / 248 of 430 on 2,000 held-out spans): the search drops beams
# that can't reach the threshold, so the extra beams cost little there.
BEAMS = 8
# Tokens a pass also checks after its likeliest beam, drafted from what the request's other
# sources put at the cursor (``drafts``). Where the beam goes on as drafted, the next
# passes are already done. A pass streams the weights: 8 rows cost ~1.5× one row (2.9
# against 1.9 ms), and in the typing bench 55% of the passes extended a single beam.
DRAFTED = 4
LEAST_PROBABILITY = 1e-12  # a token the constraint left no mass is scored this, not -inf
KIND = "left_to_right"  # Candidate.copied of such a line
CONFIG_KEY = "fim_left_to_right"  # its calibrator, in config.json's calibration
# No minimum log-probability: fitted with it, its weight came out negative (it and the mean
# move together), which rewards a line for one very unlikely token.
# "elsewhere": a copied line or a line continuation (file, workspace, corpus phrases) is the
# same text. On 2,431 held-out lines, earlier weights: at 0.3, 66.3% right of 14.9%
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


def _whole_line(text: str, suffix: str) -> str:
    """The line a beam writes to put ``text`` at the cursor (``line_end`` undone): up to its
    first newline, or on to the end of the suffix's line."""
    return text[:text.index("\n") + 1] if "\n" in text else text + suffix.split("\n", 1)[0] + "\n"


def _drafted(tokenizer: CodeTokenizer, data: bytes, lines: list[bytes], count: int) -> list[int]:
    """Up to ``count`` tokens that would go on from ``data`` to the first of ``lines`` it
    starts, as the tokenizer writes the rest; none if it starts none of them."""
    for line in lines:
        if count > 0 and len(line) > len(data) and line.startswith(data):
            try:
                return tokenizer.encode(line[len(data):].decode("utf-8"))[:count]
            except UnicodeDecodeError:  # the beam stopped inside a character
                continue
    return []


def write_lines(
    network: ServingNetwork, tokenizer: CodeTokenizer, ids: list[int], cache: Cache | Room, prefix: str, suffix: str,
    should_stop: Callable[[], bool] = lambda: False, ranking: LineRanking = ByScore(), beams: int = BEAMS,
    first: np.ndarray | None = None, drafts: Sequence[str] = (),
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
    search outgrows them (``_roomier``).

    ``drafts``: what other sources put at the cursor (the canvas's answer, a copied line).
    A pass also checks up to ``DRAFTED`` tokens after its likeliest beam that would go on
    to one of them (``_drafted``), each token in a slot of its own, after the beam and the
    drafted tokens before it: where the beam goes on as drafted, those passes are done. The
    lines are the same (in float; int8 scales a pass's activations together, so rows added
    to a pass move the others' probabilities a little)."""
    healed = healed_bytes(tokenizer, ids)
    start = first_position(tokenizer, ids)
    if isinstance(cache, Room) and first is not None and cache.pending is None and cache.context_length == len(ids):
        # The slots after the context: writing after the healed token's leaves it for the next request.
        room, free = cache, cache.context_length - 1
    else:
        context = cache.context_cache() if isinstance(cache, Room) else cache
        cached = start if first is None else start + 1  # the first input's own keys/values are cached then
        room = _roomier(network, context, cached, start + 1 - cached + (beams + DRAFTED) * MAX_TOKENS)
        free = start
    ends = {tokenizer.end_of_middle_id, tokenizer.pad_id, tokenizer.mask_id}
    finished: list[Written] = []
    best = -math.inf  # the value of the best line finished so far
    lines_drafted = [healed + _whole_line(text, suffix).encode() for text in drafts if text.strip()]
    # What drafted rows computed: a beam's tokens → the distribution after them, and the
    # slot that holds its last token's keys/values.
    checked: dict[tuple[int, ...], tuple[np.ndarray, int]] = {}

    def hopeless(log_probs: list[float], line: str) -> bool:
        reachable = ranking.reachable(log_probs, line)
        return reachable < ranking.floor or reachable <= best

    alive = [_Beam([], b"", [], [start])]
    passes, checked_against = 0, best
    while alive:
        if best > checked_against:  # a line finished after some beams were checked: check them again
            alive = [beam for beam in alive if not hopeless(beam.log_probs, written_after(beam.data, healed))]
            if not alive:
                break
        if should_stop():
            return []
        depth = len(alive[0].tokens)
        distributions: list[np.ndarray | None] = [checked[key][0] if (key := tuple(beam.tokens)) in checked
                                                  else None for beam in alive]
        if first is not None:  # the first input's pass was the context's own
            distributions, first, free = [first], None, free + 1
        waiting = [row for row, distribution in enumerate(distributions) if distribution is None]
        if waiting:
            if free + len(waiting) > room.layers[0][0].shape[1]:
                room = _roomier(network, room.layers, free, (beams + DRAFTED) * (MAX_TOKENS - depth))
            for row, index in enumerate(waiting):  # each waiting beam's last token in this pass's row
                alive[index] = replace(alive[index], slots=[*alive[index].slots[:-1], free + row])
            lead = alive[waiting[0]]  # the likeliest beam the pass extends: the drafts go on from it
            draft = _drafted(tokenizer, lead.data, lines_drafted, min(DRAFTED, MAX_TOKENS - depth - 1))
            draft = draft[:room.layers[0][0].shape[1] - free - len(waiting)]  # as many as the room has slots for
            rows = len(waiting) + len(draft)
            sees = np.zeros((rows, free + rows), dtype=bool)
            sees[:, :start] = True
            inputs = []
            for row, index in enumerate(waiting):
                sees[row, alive[index].slots] = True  # its earlier tokens' slots and its own
                inputs.append(alive[index].tokens[-1] if alive[index].tokens else ids[start])
            for row in range(len(waiting), rows):  # each drafted token after the lead and the drafts before it
                sees[row, lead.slots] = True
                sees[row, free + len(waiting):free + row + 1] = True
            positions = np.full(rows, start + depth, dtype=np.int64)
            positions[len(waiting):] += np.arange(1, len(draft) + 1)
            computed = network.next_tokens(np.array(inputs + draft, dtype=np.int64), room, free, positions, sees)
            passes += 1
            for row, index in enumerate(waiting):
                distributions[index] = computed[row]
            for j in range(len(draft)):
                checked[tuple(lead.tokens + draft[:j + 1])] = computed[len(waiting) + j], free + len(waiting) + j
            free += rows
        checked_against = best
        children: list[tuple[float, _Beam, int, float]] = []
        for beam, distribution in zip(alive, distributions, strict=True):
            assert distribution is not None
            if len(beam.data) < len(healed):  # still writing the healed bytes again
                distribution = np.where(consistent_with(tokenizer, healed[len(beam.data):]), distribution, 0.0)
            total = float(distribution.sum()) or 1.0
            for token in _likeliest(distribution, beams):
                probability = float(distribution[token]) / total
                if probability > 0.0:
                    log_prob = math.log(max(probability, LEAST_PROBABILITY))
                    children.append((beam.score + log_prob, beam, int(token), log_prob))
        children.sort(key=lambda child: -child[0])
        alive = []
        for _, parent, token, log_prob in children:
            if len(alive) == beams:
                break
            tokens, log_probs = [*parent.tokens, token], [*parent.log_probs, log_prob]
            data = parent.data + tokenizer.token_bytes[token]
            line = written_after(data, healed)
            if token in ends:
                continue
            if "\n" in line:  # finished: kept if worth showing, though it may not beat the best
                whole = finished_line(data, healed)
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
                # The last token's slot: a drafted row's, or the next pass's row (assigned then).
                slot = checked[key][1] if (key := tuple(tokens)) in checked else -1
                alive.append(_Beam(tokens, data, log_probs, [*parent.slots, slot]))
    lines: dict[str, Written] = {}  # a text written with other tokens is the same line
    for written in sorted(finished, key=lambda written: -written.score):
        lines.setdefault(written.text, replace(written, passes=passes))
    return list(lines.values())
