"""Token healing: the prefix ends wherever the cursor is, often inside what the tokenizer
would write as one token (``"\\n\\n"`` before an indented line is ``"\\n\\n   "``), and the
head never saw such a cut. So the last prefix token is dropped and the first tokens written
must write its text again (any token boundaries) before anything else. The head
also trains on what it writes at the cursor (``FimExample.written``); served
without healing it was still worse (142 vs 159 right of 1,000 fresh spans at 0.3). That
training is healed the same way: the cut token's text is written again
from the position before it, which the written tokens never see.

Healing compares bytes, not text: the tokenizer is byte-level, and after a character of
two or more bytes (``"é"``, ``"т"``, ``"✓"``) the cut token is often part of it, whose text
alone is only U+FFFD. The tokens written again must then hold exactly its bytes, and a line
is finished only as valid UTF-8, so no half of a character reaches the cursor.
"""

from __future__ import annotations

from bisect import bisect_left
from functools import lru_cache

import numpy as np

from model.formats import healed_bytes
from model.tokenizer import CodeTokenizer


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
def consistent_with(tokenizer: CodeTokenizer, data: bytes) -> np.ndarray:
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


def written_after(data: bytes, healed: bytes) -> str:
    """What a beam's bytes write after the cursor, as far as they are whole characters:
    nothing until they have written ``healed``."""
    return data[len(healed):].decode("utf-8", errors="ignore") if data.startswith(healed) else ""


def finished_line(data: bytes, healed: bytes) -> str | None:
    """The line a beam finished (up to and including its newline), or None if its bytes
    are not all whole characters."""
    line = data[len(healed):data.index(b"\n", len(healed)) + 1]
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return None


def first_position(tokenizer: CodeTokenizer, ids: list[int]) -> int:
    """The context position whose next-token distribution is the line's first token: the
    last one's, or the one's before it when the last token is dropped to be healed."""
    return len(ids) - 2 if healed_bytes(tokenizer, ids) else len(ids) - 1
