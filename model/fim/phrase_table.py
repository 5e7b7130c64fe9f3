"""FIM from the corpus: continue the cursor's line the way the same tokens most often
continue in the training code.

``line_continuation.py`` continues a line from the file's own text, so it says nothing
where the file has no run to continue (a new file, a short function). Idioms repeat
across projects — ``except ImportError:``, ``unittest.TestCase):``, a docstring's closing
quotes — so this module keeps, for runs of one to ``MAX_ORDER`` tokens of the training
split, the token that most often follows each run (with its count and the run's total),
and writes the rest of the line greedily from the longest run it knows, as the file's own
continuation does. Same tokens (``code_tokens.TOKEN``), same ``Continuation``, a
calibrator of its own (``calibration.fim_phrase``, fitted by ``redraft calibrate``).

Stored small: a run is kept only when it was seen ``min_total`` times and its most common
follower differs from that of the run one token shorter (the one a lookup would otherwise
fall back to), so the table holds what the longer run adds. A run is stored as the high 32
bits of a 64-bit hash of its token ids, sorted per run length (a false match per lookup is
~1 in 30,000 at 140,000 runs), counts in 16 bits; the file is safetensors (``PHRASES_FILE``
in the model folder) and optional.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from model.fim.code_tokens import TOKEN, WORD
from model.fim.fim_patterns import before_text_after_cursor
from model.fim.line_continuation import (
    CONTINUATION_FEATURES,
    MAX_LINE_CHARS,
    Continuation,
    Step,
    write_line,
)
from model.model_folder import ModelLoadError

log = logging.getLogger(__name__)

PHRASES_FILE = "phrases.safetensors"
CONFIG_KEY = "fim_phrase"
KIND = "phrase"
# The file's continuation's features, and: brackets still open on the line after the
# phrase (a phrase that stops at "assertEqual(" is rarely the whole rest), and whether the
# file's own continuation is the same text (two sources agreeing). Measured on the 2,333
# held-out spans where a phrase was offered (two halves, each fitted on the other): at 0.5,
# 70 right of 103 shown without them, 88 of 114 with them.
PHRASE_FEATURES = (*CONTINUATION_FEATURES, "brackets_open", "file_agrees")
_BRACKETS = str.maketrans("([{)]}", "((()))")
MAX_ORDER = 6
UNKNOWN = -1  # a token too rare to be kept: no run crosses it
_MASK = (1 << 64) - 1
_MULTIPLIER = 0x9E3779B97F4A7C15


def _finish(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: the multiply-xor recurrence mixes low bits poorly."""
    h = h ^ (h >> np.uint64(30))
    h = h * np.uint64(0xBF58476D1CE4E5B9)
    h = h ^ (h >> np.uint64(27))
    h = h * np.uint64(0x94D049BB133111EB)
    finished: np.ndarray = h ^ (h >> np.uint64(31))
    return finished


def _finish_int(h: int) -> int:
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & _MASK
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & _MASK
    return h ^ (h >> 31)


def run_hashes(context: list[int]) -> list[int]:
    """Hashes of the last 1, 2, … ``MAX_ORDER`` tokens of ``context`` (newest token mixed
    in first), stopping at an unknown token; the same as the table's."""
    hashes: list[int] = []
    h = 0
    for token in reversed(context[-MAX_ORDER:]):
        if token < 0:
            break
        h = ((h * _MULTIPLIER) & _MASK) ^ (token + 1)
        hashes.append(_finish_int(h))
    return hashes


class PhraseTable:
    """Per run length (``order``), the kept runs' keys (the high 32 bits of their hashes,
    sorted), their most common follower, its count and the run's total count."""

    def __init__(self, vocabulary: list[str], frequencies: np.ndarray, order_ends: np.ndarray, keys: np.ndarray,
                 followers: np.ndarray, counts: np.ndarray, totals: np.ndarray) -> None:
        if not (keys.size == followers.size == counts.size == totals.size) or order_ends.size != MAX_ORDER \
                or int(order_ends[-1]) != keys.size or len(vocabulary) != frequencies.size \
                or np.any(np.diff(order_ends) < 0) or (followers.size and int(followers.max()) >= len(vocabulary)):
            raise ValueError("the phrase table's arrays don't fit together")
        self.vocabulary = vocabulary  # most frequent first
        self.frequencies = frequencies
        self.ids = {token: i for i, token in enumerate(vocabulary)}
        starts = [0, *order_ends[:-1].tolist()]
        self._by_order = [keys[a:b] for a, b in zip(starts, order_ends.tolist(), strict=True)]
        self._starts = starts
        self.order_ends, self.keys, self.followers = order_ends, keys, followers
        self.counts, self.totals = counts, totals
        # Words in sorted order, to find those that start with what is typed.
        words = sorted((token, i) for i, token in enumerate(vocabulary) if WORD.fullmatch(token))
        self._sorted_words = [token for token, _ in words]
        self._sorted_word_ids = np.array([i for _, i in words], dtype=np.int64)

    def __len__(self) -> int:
        return int(self.keys.size)

    def save(self, path: Path) -> None:
        encoded = [token.encode("utf-8", "surrogatepass") for token in self.vocabulary]
        ends = np.cumsum([len(b) for b in encoded], dtype=np.int64)
        save_file({"frequencies": self.frequencies, "order_ends": self.order_ends.astype(np.int64),
                   "keys": self.keys, "followers": self.followers, "counts": self.counts, "totals": self.totals,
                   "vocabulary": np.frombuffer(b"".join(encoded), dtype=np.uint8),
                   "vocabulary_ends": ends.astype(np.uint32)}, str(path))

    @classmethod
    def load(cls, path: Path) -> PhraseTable:
        arrays = load_file(str(path))
        data, ends = arrays["vocabulary"].tobytes(), arrays["vocabulary_ends"].tolist()
        vocabulary = [data[a:b].decode("utf-8", "surrogatepass") for a, b in zip([0, *ends[:-1]], ends, strict=True)]
        return cls(vocabulary, arrays["frequencies"], arrays["order_ends"], arrays["keys"], arrays["followers"],
                   arrays["counts"], arrays["totals"])

    def _lookup(self, order: int, key: int) -> int | None:
        keys = self._by_order[order - 1]
        short = np.uint32(key >> 32)
        index = int(np.searchsorted(keys, short))
        return self._starts[order - 1] + index if index < keys.size and keys[index] == short else None

    def complete_word(self, partial: str) -> tuple[int, float, int] | None:
        """The most frequent word that starts with ``partial``, its share among those, its count."""
        low = bisect.bisect_left(self._sorted_words, partial)
        high = bisect.bisect_left(self._sorted_words, partial + "\U0010ffff")
        if low == high:
            return None
        ids = self._sorted_word_ids[low:high]
        best = int(ids.min())
        count = int(self.frequencies[best])
        return best, count / max(1, int(self.frequencies[ids].sum())), count

    def _next(self, context: list[int], partial: str) -> Step | None:
        """The follower of the longest known run of ``context``'s last tokens (one that
        starts with ``partial``), that run's length, the follower's share and count."""
        found = None
        for order, key in enumerate(run_hashes(context), start=1):
            index = self._lookup(order, key)
            if index is None:
                continue  # pruned: its follower is a shorter run's; a longer run may still be kept
            follower = int(self.followers[index])
            if self.vocabulary[follower].startswith(partial):
                count = int(self.counts[index])
                found = (follower, order, count / max(1, int(self.totals[index])), count)
        return found

    def continuation(self, prefix: str, suffix: str) -> Continuation | None:
        """The rest of the cursor's line as the corpus most often continues its last
        tokens, or None when no run is known or the text after the cursor contradicts it."""
        line_end = suffix.find("\n", 0, MAX_LINE_CHARS + 1)
        if line_end < 0 and len(suffix) <= MAX_LINE_CHARS:
            line_end = len(suffix)
        line_start = prefix.rfind("\n", max(0, len(prefix) - MAX_LINE_CHARS - 1))  # -1: the first line
        if line_end < 0 or (line_start < 0 and len(prefix) > MAX_LINE_CHARS):
            return None
        # The line before, and the line break (with its indentation), are part of the run.
        above = prefix.rfind("\n", 0, max(0, line_start)) + 1
        tokens = TOKEN.findall(prefix, max(0, line_start - MAX_LINE_CHARS, above))
        partial = tokens.pop() if tokens and WORD.fullmatch(tokens[-1]) else ""
        context = [self.ids.get(token, UNKNOWN) for token in tokens[-MAX_ORDER:]]

        def choose(context: list[int], first: bool) -> Step | None:
            chosen = self._next(context, partial if first else "")
            if chosen is None and first and partial:
                # No known run goes on with the word typed: its most frequent completion.
                word = self.complete_word(partial)
                chosen = None if word is None else (word[0], 1, word[1], word[2])
            return chosen

        found = write_line(choose, self.vocabulary, context)
        if found is None:
            return None
        written, min_order, min_share, min_count = found
        rest = before_text_after_cursor(written[len(partial):].rstrip(), suffix[:line_end])
        return Continuation(rest, min_order, min_share, min_count, KIND) if rest else None


def phrase_features(base: list[float], text: str, prefix: str, file_text: str | None) -> list[float]:
    """``PHRASE_FEATURES``: the continuation's ``base`` features and this module's two."""
    line = (prefix[prefix.rfind("\n", max(0, len(prefix) - MAX_LINE_CHARS)) + 1:] + text).translate(_BRACKETS)
    return [*base, float(line.count("(") > line.count(")")), float(file_text == text)]


def read_phrases(folder: Path) -> PhraseTable | None:
    """The model folder's phrase table; None when it has none (it is optional)."""
    path = folder / PHRASES_FILE
    if not path.is_file():
        return None
    try:
        return PhraseTable.load(path)
    except Exception as exc:  # a truncated or foreign file
        raise ModelLoadError(f"cannot read the phrase table {path}: {exc}; delete it or rebuild it with "
                             f"`redraft phrases`") from exc


def build_phrase_table(texts: Iterable[str], min_total: int = 6) -> PhraseTable:
    """Count, over ``texts``, which token follows each run of 1…``MAX_ORDER`` tokens, and
    keep the runs seen ``min_total`` times whose top follower differs from the shorter run's."""
    first_ids: dict[str, int] = {}
    pieces: list[np.ndarray] = []
    for text in texts:
        tokens = TOKEN.findall(text)
        pieces.append(np.fromiter((first_ids.setdefault(t, len(first_ids)) for t in tokens), dtype=np.int64,
                                  count=len(tokens)))
        pieces.append(np.array([UNKNOWN]))  # files don't run into each other
    sequence = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    # Tokens seen fewer than min_total times can't be in a kept run: drop them, renumber the rest.
    # renumbered most frequent first.
    frequency = np.bincount(sequence[sequence >= 0], minlength=len(first_ids))
    by_frequency = np.argsort(-frequency, kind="stable")
    by_frequency = by_frequency[frequency[by_frequency] >= min_total]
    new_id = np.full(len(first_ids), UNKNOWN, dtype=np.int64)
    new_id[by_frequency] = np.arange(by_frequency.size)
    sequence = np.where(sequence >= 0, new_id[np.maximum(sequence, 0)], UNKNOWN)
    strings = list(first_ids)
    vocabulary = [strings[i] for i in by_frequency.tolist()]
    frequencies = np.minimum(frequency[by_frequency], 2**32 - 1).astype(np.uint32)
    log.info("phrase table: %d tokens, %d kept of %d distinct", sequence.size, len(vocabulary), len(strings))

    followers_next = sequence[1:]
    h = np.zeros(sequence.size - 1, dtype=np.uint64)
    valid = followers_next >= 0
    previous: tuple[np.ndarray, np.ndarray] | None = None  # the shorter runs: sorted keys, top followers
    previous_keys = np.zeros(0, dtype=np.uint64)
    kept_parts: list[tuple[np.ndarray, ...]] = []
    for order in range(1, MAX_ORDER + 1):
        # The run ending at position i, newest token first: sequence[i], sequence[i-1], ...
        oldest = np.full(h.size, UNKNOWN, dtype=np.int64)
        oldest[order - 1:] = sequence[:h.size - order + 1]
        valid &= oldest >= 0
        h = (h * np.uint64(_MULTIPLIER)) ^ (oldest.astype(np.uint64) + np.uint64(1))
        keys = _finish(h)
        shorter = previous_keys
        previous_keys = keys
        at = np.flatnonzero(valid)
        if at.size == 0:  # texts too short for runs this long
            previous = (np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64))
            kept_parts.append((np.zeros(0, dtype=np.uint32), *(np.zeros(0, dtype=np.int64),) * 3))
            continue
        run_keys, nexts = keys[at], followers_next[at]
        order_by = np.lexsort((nexts, run_keys))
        run_keys, nexts = run_keys[order_by], nexts[order_by]
        shorter_keys = shorter[at][order_by] if order > 1 else None
        pair_start = np.flatnonzero(np.r_[True, (run_keys[1:] != run_keys[:-1]) | (nexts[1:] != nexts[:-1])])
        pair_count = np.diff(np.r_[pair_start, run_keys.size])
        pair_keys, pair_nexts = run_keys[pair_start], nexts[pair_start]
        run_start = np.flatnonzero(np.r_[True, pair_keys[1:] != pair_keys[:-1]])
        totals = np.add.reduceat(pair_count, run_start)
        # The most common follower of each run: the pair with the highest count in its group.
        group = np.repeat(np.arange(run_start.size), np.diff(np.r_[run_start, pair_keys.size]))
        by_count = np.lexsort((-pair_count, group))
        top = by_count[np.r_[True, group[by_count][1:] != group[by_count][:-1]]]
        keys_out, tops, top_counts = pair_keys[top], pair_nexts[top], pair_count[top]
        keep = totals >= min_total
        if previous is not None and shorter_keys is not None:
            # Compare with the follower a lookup of the run one token shorter would give.
            shorter_of_run = shorter_keys[pair_start[run_start]]
            where = np.searchsorted(previous[0], shorter_of_run).clip(max=max(0, previous[0].size - 1))
            shorter_top = previous[1][where] if previous[0].size else np.full(tops.size, UNKNOWN)
            keep &= shorter_top != tops
        previous = (keys_out, tops)  # every run, pruned or not: the next order compares with it
        short_keys = (keys_out[keep] >> np.uint64(32)).astype(np.uint32)
        by_key = np.argsort(short_keys, kind="stable")
        kept_parts.append((short_keys[by_key], tops[keep][by_key], top_counts[keep][by_key], totals[keep][by_key]))
        log.info("phrase table: order %d, %d runs, %d kept", order, keys_out.size, int(keep.sum()))
    counts, totals = (np.concatenate([p[i] for p in kept_parts]) for i in (2, 3))
    # Counts fit 16 bits: a run seen more often keeps its follower's share, not its count.
    scale = np.maximum(1.0, totals / 65_535)
    return PhraseTable(
        vocabulary, frequencies, np.cumsum([p[0].size for p in kept_parts]).astype(np.int64),
        np.concatenate([p[0] for p in kept_parts]),
        np.concatenate([p[1] for p in kept_parts]).astype(np.uint16 if len(vocabulary) <= 65_536 else np.uint32),
        np.maximum(1, np.round(counts / scale)).astype(np.uint16), np.round(totals / scale).astype(np.uint16))
