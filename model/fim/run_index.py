"""Runs of tokens in the workspace's other files, for line continuations.

``line_continuation.py`` continues the cursor's line the way its last tokens continue in
the file around the cursor. A project repeats its runs across files as well — the same
call with the same arguments, the same keyword in every module, a logger's format — so
the same question can go to the other files of the document's workspace folder (a probe
on 3,000 held-out spans, each package its own workspace: 118 → 138 right
continuations at the same precision). Searching megabytes of text on every keystroke is
out of the question, so the files' tokens (``code_tokens.TOKEN``) are indexed once:
every position whose two preceding tokens are known is sorted by that pair, so the
followers of a pair are one binary search away, and longer runs are found by checking the
tokens before those positions. Runs of one token are left to the file: across a workspace
they match everywhere and say little.

``RunIndex`` is a snapshot, never changed once built, so any thread may read it;
``RunIndexBuilder`` (one per workspace group, used by the thread that watches the files)
keeps each file's token ids so that a saved file is the only one tokenized again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import numpy as np

from model.fim.code_tokens import MAX_ORDER, TOKEN, encode_tokens

log = logging.getLogger(__name__)

SEPARATOR = -1  # between files: no run crosses it
# Tokens indexed at most (~20 bytes each with their file's ids: about 3.5 MB of code is 1 M
# tokens and 20 MB). Files past the cap, in the order given (the server: newest first), are left out.
MAX_INDEXED_TOKENS = 1_000_000
# Positions of one pair read per lookup at most. Very common pairs (``self.``, ``", "``)
# are read in part: a fixed spread of their positions, so the followers' shares hold.
MAX_PAIR_POSITIONS = 20_000
MIN_ORDER = 2
MAX_VOCABULARY = 1_000_000  # distinct token strings kept across rebuilds before starting over


class RunIndex:
    """The token stream of some files (``SEPARATOR`` between them) and its positions
    sorted by the pair of tokens before each."""

    def __init__(self, strings: Sequence[str], ids: Mapping[str, int], files: Sequence[tuple[str, np.ndarray]]) -> None:
        self.strings = strings  # id → token text (append-only, shared with the builder)
        self._ids = ids
        self.owners = [owner for owner, _ in files]
        pieces: list[np.ndarray] = []
        starts: list[int] = []
        at = 0
        for _, tokens in files:
            pieces.extend((np.array([SEPARATOR], dtype=np.int32), tokens))
            starts.append(at + 1)
            at += 1 + tokens.size
        pieces.append(np.array([SEPARATOR], dtype=np.int32))
        self.stream = np.concatenate(pieces) if files else np.array([SEPARATOR], dtype=np.int32)
        self.starts = np.array(starts, dtype=np.int64)
        stream = self.stream.astype(np.int64)
        first, second, follower = stream[:-2], stream[1:-1], stream[2:]
        valid = np.flatnonzero((first >= 0) & (second >= 0) & (follower >= 0))
        keys = (first[valid] << 32) | second[valid]
        order = np.argsort(keys, kind="stable")
        self._keys = keys[order]
        self._positions = (valid[order] + 2).astype(np.int32)  # where each follower is

    def __len__(self) -> int:
        """Tokens indexed."""
        return int(self.stream.size - len(self.owners) - 1)

    def followers(self, context: Sequence[str], skip: str | None = None) -> list[np.ndarray]:
        """For runs of ``MIN_ORDER``, ``MIN_ORDER`` + 1, … of ``context``'s last tokens, the
        ids (``strings``) of the tokens that follow them in the indexed files (``skip``'s
        left out), until a run is not found; [] when the shortest is not."""
        if len(context) < MIN_ORDER:
            return []
        wanted = [self._ids.get(token, SEPARATOR) for token in context[-MAX_ORDER:]]
        if wanted[-1] < 0 or wanted[-2] < 0:
            return []
        key = (wanted[-2] << 32) | wanted[-1]
        low, high = np.searchsorted(self._keys, [key, key + 1])
        if high <= low:
            return []
        positions = self._positions[low:high]
        if positions.size > MAX_PAIR_POSITIONS:
            positions = positions[:: -(-positions.size // MAX_PAIR_POSITIONS)]
        if skip is not None and skip in self.owners:
            file = self.owners.index(skip)
            owner = np.searchsorted(self.starts, positions, side="right") - 1
            positions = positions[owner != file]
        found: list[np.ndarray] = []
        for order in range(MIN_ORDER, len(wanted) + 1):
            if order > MIN_ORDER:
                if wanted[-order] < 0:
                    break
                positions = positions[positions >= order]
                positions = positions[self.stream[positions - order] == wanted[-order]]
            if positions.size == 0:
                break
            found.append(self.stream[positions])
        return found


class RunIndexBuilder:
    """One workspace group's files, tokenized once each; ``replace_all`` and ``update``
    return a snapshot. Only files within ``MAX_INDEXED_TOKENS`` (in the order given) are
    kept and tokenized: a big workspace costs its first megabytes, not all of them."""

    def __init__(self) -> None:
        self._start_over()

    def _start_over(self) -> None:
        self._ids: dict[str, int] = {}
        self._strings: list[str] = []  # a new list: snapshots made before keep theirs
        self._files: dict[str, tuple[int, np.ndarray]] = {}  # owner → (hash of its text, token ids)

    def replace_all(self, files: Mapping[str, str]) -> RunIndex:
        """The index of ``files`` as far as the cap allows, in their order (those unchanged
        since the last call are not read again)."""
        if len(self._ids) > MAX_VOCABULARY:  # tokens of files long gone: start over
            self._start_over()
        kept: dict[str, tuple[int, np.ndarray]] = {}
        total = 0
        for owner in files:
            entry = self._tokenized(owner, files[owner])
            if total + entry[1].size > MAX_INDEXED_TOKENS:
                log.info("workspace runs: %d of %d files indexed (%d tokens at most)", len(kept), len(files),
                         MAX_INDEXED_TOKENS)
                break
            kept[owner] = entry
            total += entry[1].size
        self._files = kept
        return self._snapshot()

    def update(self, changed: Mapping[str, str | None]) -> RunIndex:
        """The index with ``changed`` files replaced (None: gone); a file that would pass the
        cap is left out until the next ``replace_all``."""
        for owner, text in changed.items():
            self._files.pop(owner, None)
            if text is None:
                continue
            entry = self._tokenized(owner, text)
            if sum(tokens.size for _, tokens in self._files.values()) + entry[1].size <= MAX_INDEXED_TOKENS:
                self._files[owner] = entry
        return self._snapshot()

    def _snapshot(self) -> RunIndex:
        return RunIndex(self._strings, self._ids, [(owner, self._files[owner][1]) for owner in sorted(self._files)])

    def _tokenized(self, owner: str, text: str) -> tuple[int, np.ndarray]:
        known = self._files.get(owner)
        digest = hash(text)
        if known is not None and known[0] == digest:
            return known
        return digest, encode_tokens(TOKEN.findall(text), self._ids, self._strings, np.int32)

