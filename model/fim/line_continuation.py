"""FIM from the file itself: continue the cursor's line the way the same tokens continue
elsewhere in the file.

Copied lines (``fim_patterns.py``) need another line that *starts* like the cursor's line.
Code repeats shorter runs far more often: ``self.assertEqual(result,`` or
``logger.debug("%s`` reappear in the middle of lines that start differently. So the
tokens before the cursor (the longest run of the last ``MAX_ORDER`` that occurs elsewhere
in the text around the cursor) pick the token that most often follows that run there, and
so on to the end of the line: a greedy n-gram continuation with backoff, over the file's
own text only. A word typed halfway is finished with a token that starts with it.

Alone it is right about one time in six (3,000 held-out spans where no copy
fired: 23% of spans got a continuation, 16% of those right), so its confidence comes from
a small logistic model (``calibration.fim_continuation`` in config.json, fitted by
``redraft calibrate``) over how well it is supported — the shortest run it backed off to,
the smallest share and count of its most common token, its length — and the network's first
denoising pass over the canvas (its log-probability of each token, as the copy check reads
it) and whether the network's own answer is the same text. The last was right 19 times in
19 on held-out spans.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from model.fim.code_tokens import MAX_ORDER, TOKEN, WORD, encode_tokens
from model.fim.fim_patterns import RelatedLines, before_text_after_cursor

if TYPE_CHECKING:
    from model.fim.run_index import RunIndex

MAX_TOKENS = 30  # tokens written at most
PREFIX_CHARS = 12_000  # text around the cursor that is searched
SUFFIX_CHARS = 4_000
MAX_LINE_CHARS = 400  # longer lines around the cursor: no continuation
HEAD_STEP = 4_096  # the searched text above starts at a multiple of this
MAX_VOCABULARY = 200_000  # distinct token strings kept between requests before starting over
SEPARATOR = -1  # between the text before the cursor and the text after it: no run crosses it

CONTINUATION_FEATURES = ("mean_logp", "min_logp", "end_logp", "network_agrees", "log_min_order",
                         "min_share", "log_min_count", "log_length", "statement_parses")
STATEMENT_PARSES_AT = CONTINUATION_FEATURES.index("statement_parses")
CONFIG_KEY = "fim_continuation"
KIND = "continuation"


@dataclass(frozen=True)
class Continuation:
    text: str  # what to insert at the cursor
    min_order: int  # the shortest run of context tokens a step backed off to
    min_share: float  # the smallest share the chosen token had among a step's followers
    min_count: int  # the fewest times a chosen token followed its run
    kind: str = KIND  # this module's, or phrase_table.KIND (the same features, its own calibrator)

    def features(self, first_pass_logps: list[float], network_text: str, statement_parses: float) -> list[float]:
        """The calibrator's inputs (``CONTINUATION_FEATURES``); ``first_pass_logps`` are the
        copy check's mean, lowest and end log-probabilities, ``statement_parses`` is
        ``cursor_statement.statement_parses`` (or unknown)."""
        mean_logp, min_logp, end_logp = first_pass_logps[:3]
        agrees = float(network_text.rstrip() == self.text.rstrip())
        return [mean_logp, min_logp, end_logp, agrees, math.log(self.min_order), self.min_share,
                math.log(self.min_count), math.log(len(self.text)), statement_parses]


# A step of a continuation: the token chosen, the length of the run it followed, its share
# among that run's followers and its count.
Step = tuple[int, int, float, int]


def write_line(
    choose: Callable[[list[int], bool], Step | None], strings: list[str], context: list[int]
) -> tuple[str, int, float, int] | None:
    """Append the token ``choose`` picks after ``context`` (told whether it is the first)
    until the line ends or ``MAX_TOKENS``: the text, and the weakest run length, share and
    count of its steps; None when nothing was written."""
    written: list[str] = []
    min_order, min_share, min_count = MAX_ORDER, 1.0, 1 << 30
    for _ in range(MAX_TOKENS):
        chosen = choose(context, not written)
        if chosen is None:
            break
        token, order, share, count = chosen
        text = strings[token]
        if text.startswith("\n"):
            break  # the line ends
        written.append(text)
        context.append(token)
        min_order, min_share, min_count = min(min_order, order), min(min_share, share), min(min_count, count)
    return ("".join(written), min_order, min_share, min_count) if written else None


class LineContinuer:
    """Greedy n-gram continuations of the cursor's line. Keeps the token ids of the text
    above the cursor's line and of the suffix between requests: while someone types on a
    line only that line is tokenized again, and on the next line only the line just left."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._ids: dict[str, int] = {}
        self._strings: list[str] = []
        self._head: tuple[int, str, np.ndarray] = (0, "", np.zeros(0, dtype=np.int64))
        self._tail: tuple[str, np.ndarray] = ("", np.zeros(0, dtype=np.int64))

    def continuation(self, prefix: str, suffix: str, related: RelatedLines | None = None) -> Continuation | None:
        """The rest of the cursor's line, or None when nothing around supports one or the
        text after the cursor on its line is not how the continuation ends. ``related``:
        the runs of the workspace's other files (its ``skip``, the document's own, left
        out), counted with the file's at each run length."""
        workspace, skip = (related.runs, related.skip) if related is not None else (None, None)
        # The line break and indentation are the run an empty line continues. Lines longer
        # than MAX_LINE_CHARS (minified code, data) are not worth reading on every keystroke.
        line_start = prefix.rfind("\n", max(0, len(prefix) - MAX_LINE_CHARS - 1))
        line_end = suffix.find("\n", 0, MAX_LINE_CHARS + 1)
        if line_end < 0 and len(suffix) <= MAX_LINE_CHARS:
            line_end = len(suffix)  # the last line of the file
        if line_start < 0 or line_end < 0:
            return None
        if len(self._strings) > MAX_VOCABULARY:
            self._reset()
        head = self._head_ids(prefix, line_start)
        line = self._encode(TOKEN.findall(prefix, line_start))
        after_cursor = np.concatenate([self._encode(TOKEN.findall(suffix, 0, line_end)),
                                       self._tail_ids(suffix[line_end:line_end + SUFFIX_CHARS])])
        context = [*head[-MAX_ORDER:].tolist(), *line.tolist()]
        partial, allowed = "", None
        if WORD.fullmatch(self._strings[context[-1]]):
            partial = self._strings[context.pop()]  # a word typed, perhaps only halfway
            line = line[:-1]  # not a follower of the tokens before it: that is what is asked
        pool = np.concatenate([head, line, np.array([SEPARATOR]), after_cursor])
        if partial:
            allowed = np.array([t for t in np.unique(pool).tolist() if t != SEPARATOR
                                and self._strings[t].startswith(partial)], dtype=np.int64)
        found = write_line(
            lambda ctx, first: self._next(pool, ctx, allowed if first else None, workspace, skip, partial if first
                                          else ""), self._strings, context)
        if found is None:
            return None
        written, min_order, min_share, min_count = found
        text = before_text_after_cursor(written[len(partial):].rstrip(), suffix[:line_end])
        return None if text is None else Continuation(text, min_order, min_share, min_count)

    def _next(
        self, pool: np.ndarray, context: list[int], allowed: np.ndarray | None, workspace: RunIndex | None,
        skip: str | None, partial: str,
    ) -> Step | None:
        """The token that most often follows the longest run of ``context``'s last tokens in
        ``pool`` and the workspace's files together (one of ``allowed`` / starting with
        ``partial`` when a word is typed halfway), its run's length, its share and count."""
        by_order = self._file_followers(pool, context, allowed)
        if workspace is not None:
            for order, found in enumerate(self._workspace_followers(workspace, context, skip, partial), start=2):
                if order <= len(by_order):
                    by_order[order - 1] = np.concatenate([by_order[order - 1], found])
                else:
                    by_order.append(found)
        # Within one source a longer run's followers are among a shorter one's, so the
        # longest run found anywhere is the one to trust.
        best = next(((options, order) for order, options in reversed(list(enumerate(by_order, start=1)))
                     if options.size), None)
        if best is None:
            return None
        options, order = best
        tokens, counts = np.unique(options, return_counts=True)
        top = int(np.argmax(counts))
        return int(tokens[top]), order, float(counts[top] / options.size), int(counts[top])

    @staticmethod
    def _file_followers(pool: np.ndarray, context: list[int], allowed: np.ndarray | None) -> list[np.ndarray]:
        """The followers in ``pool`` of ``context``'s last 1, 2, … tokens, until a run is
        not found (or none of its followers is ``allowed``)."""
        found: list[np.ndarray] = []
        if not context:
            return found
        followers = np.flatnonzero(pool[:-1] == context[-1]) + 1
        for order in range(1, min(MAX_ORDER, len(context)) + 1):
            if order > 1:
                followers = followers[followers >= order]
                followers = followers[pool[followers - order] == context[-order]]
            options = pool[followers]
            options = options[options != SEPARATOR] if allowed is None else options[np.isin(options, allowed)]
            if options.size == 0:
                break
            found.append(options)
        return found

    def _workspace_followers(
        self, workspace: RunIndex, context: list[int], skip: str | None, partial: str
    ) -> list[np.ndarray]:
        """The followers of ``context``'s last 2, 3, … tokens in the workspace's files, as
        this continuer's ids."""
        found = workspace.followers([self._strings[token] for token in context[-MAX_ORDER:]], skip)
        converted: list[np.ndarray] = []
        for options in found:
            distinct, inverse = np.unique(options, return_inverse=True)
            texts = [workspace.strings[token] for token in distinct.tolist()]
            ours = self._encode(texts)[inverse]
            if partial:
                ours = ours[np.array([text.startswith(partial) for text in texts], dtype=bool)[inverse]]
            if ours.size == 0:
                break
            converted.append(ours)
        return converted

    def _head_ids(self, prefix: str, line_start: int) -> np.ndarray:
        """The ids of the text above the cursor's line, from a start that moves in steps of
        ``HEAD_STEP`` characters so that going down a line only appends to it."""
        start = max(0, line_start - PREFIX_CHARS) // HEAD_STEP * HEAD_STEP
        cached_start, cached_text, ids = self._head
        if cached_start == start and len(cached_text) <= line_start - start and prefix.startswith(cached_text, start):
            if len(cached_text) < line_start - start:  # what was added starts a line: a token boundary
                added = self._encode(TOKEN.findall(prefix, start + len(cached_text), line_start))
                ids = np.concatenate([ids, added])
        else:
            ids = self._encode(TOKEN.findall(prefix, start, line_start))
        self._head = (start, prefix[start:line_start], ids)
        return ids

    def _tail_ids(self, text: str) -> np.ndarray:
        """The ids of the lines below the cursor's (which typing leaves as they are)."""
        if self._tail[0] != text:
            self._tail = (text, self._encode(TOKEN.findall(text)))
        return self._tail[1]

    def _encode(self, tokens: list[str]) -> np.ndarray:
        return encode_tokens(tokens, self._ids, self._strings, np.int64)
