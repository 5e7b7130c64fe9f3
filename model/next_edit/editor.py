"""Next-edit inference: which regions might change next, and the rewrite of each.

Two sources, one ranking. First the edit patterns (``edit_patterns/``): the newest change
repeated exactly where it applies again (a rename, a call change, a twin line, a
substitution). Then the network, for candidate lines no pattern covers. Every proposal's
confidence is the precision its source reached on held-out real edits
(``calibration.next_edit`` in the model's config.json, written by ``redraft calibrate``);
the network is not run at all when its measured precision is below the caller's threshold,
or zero.

Candidate regions are whole lines chosen cheaply from the newest edits (lines that still
hold an identifier the user just renamed or removed, lines like the one just edited or
deleted, other calls of a function whose call was just changed) and the lines around the
cursor. The model then rewrites each candidate or answers ``<|nochange|>``; the history is
encoded once and its cache is shared by every candidate.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from model.code_text import lsp_lines_with_ends
from model.fim.completion_request import Cancelled
from model.fim.inference import confidence_of
from model.formats import (
    NextEditBudget,
    history_ids,
    middle_from_canvas,
    next_edit_region_ids,
    render_hunk,
    split_lsp_lines,
)
from model.next_edit.edit_patterns import (
    Change,
    PatternEdit,
    edited_insertion,
    moved_lines,
    net_change,
    pattern_edits,
    repeats_previous,
    travel,
    twins_of_previous_change,
)
from model.next_edit.edit_patterns.unfinished import unfinished
from model.next_edit.edit_record import EditRecord
from model.next_edit.undone_edits import without_undone
from model.runtime.served_model import ServedModel
from model.sampler import SamplerSettings, denoise

MAX_REGIONS = 4
MODEL_KIND = "model"
# Before calibration (`redraft calibrate --next-edit`): nothing is trusted.
UNCALIBRATED = 0.0
CANVAS = 64
# A rewrite still unsettled after this many steps is too uncertain to show.
MAX_STEPS = 20
_WORD = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class ProposedEdit:
    start_line: int  # the region is lines [start_line, end_line) of the document
    end_line: int
    new_text: str  # replacement for those whole lines
    confidence: float
    kind: str = MODEL_KIND


def pattern_proposals(lines: list[str], history: list[EditRecord]) -> list[PatternEdit]:
    """What the newest change of this document implies elsewhere in it, nearest first.

    A person moving down a file has passed the lines above the change (and moving up, those
    below): what a pattern finds there is left as it is — except a local's or parameter's
    rename, whose uses in its function are all one edit, wherever the person came from.
    Lines just copied or pasted and being edited: only what the change implies within them.
    Lines moved, or a line left half-typed: nothing."""
    changes = [Change(r.start_line, r.old_text, r.new_text) for r in history if r.in_document]
    change = net_change(changes)
    if change is None or moved_lines(changes):
        return []
    paths = [r.path for r in history if r.in_document]
    if unfinished(change, paths[-1]):
        return []
    # Changes sent as git hunks with N context lines: git joins changes up to 2N lines apart;
    # hunks without context join changes on consecutive lines; typed, nothing is joined.
    newest = next(r for r in reversed(history) if r.in_document)
    joined_within = 2 * newest.context_lines if newest.whole_lines or newest.context_lines else -1
    edits = pattern_edits(lines, change, paths[-1], changes[:-1], joined_within) or \
        twins_of_previous_change(lines, changes)
    block = edited_insertion(changes)
    if block is not None:
        edits = [edit for edit in edits if block.start <= edit.start_line and edit.end_line <= block.stop]
    # A twin rewritten "at its own indentation" after a change of indentation alone is itself.
    edits = [edit for edit in edits if "".join(lines[edit.start_line : edit.end_line]) != edit.new_text]
    way = travel(changes)
    again = repeats_previous(changes)
    return [replace(edit, again=again or edit.again) for edit in edits
            if way == 0 or edit.lines_away == 0 or (edit.lines_away > 0) == (way > 0) or edit.in_function]


def candidate_lines(lines: list[str], history: list[EditRecord], cursor_line: int) -> list[int]:
    """Lines worth asking the model about, most promising first, at most MAX_REGIONS."""
    scored: dict[int, float] = {}

    def add(row: int, score: float) -> None:
        if 0 <= row < len(lines) and lines[row].strip():
            scored[row] = max(scored.get(row, 0.0), score - 0.001 * abs(row - cursor_line))

    for age, record in enumerate(reversed(history[-3:])):
        weight = 1.0 / (1 + age)
        edited = range(record.start_line, record.start_line + len(split_lsp_lines(record.new_text)))
        old_words = set(_WORD.findall(record.old_text))
        new_words = set(_WORD.findall(record.new_text))
        gone = {w for w in old_words - new_words if len(w) > 1}
        touched = {w for w in old_words ^ new_words if len(w) > 1}
        calls = set(re.findall(r"([A-Za-z_][\w.]*)\(", record.old_text)) & set(
            re.findall(r"([A-Za-z_][\w.]*)\(", record.new_text))
        old_lines = [line.strip() for line in split_lsp_lines(record.old_text) if line.strip()]
        for row, line in enumerate(lines):
            if row in edited:
                continue
            words = set(_WORD.findall(line))
            if gone & words:
                add(row, 3.0 * weight)
            elif touched & words:
                add(row, 1.5 * weight)
            if any(f"{name}(" in line for name in calls):
                add(row, 2.0 * weight)
            stripped = line.strip()
            if old_lines and stripped and max(
                difflib.SequenceMatcher(None, stripped, old).quick_ratio() for old in old_lines
            ) > 0.75:
                add(row, 1.0 * weight)
    for offset in (0, 1, -1, 2):
        add(cursor_line + offset, 0.5)
    return sorted(scored, key=lambda row: -scored[row])[:MAX_REGIONS]


def measured_precisions(metadata: dict[str, Any]) -> dict[str, float]:
    """Each bucket's precision as ``redraft calibrate`` stored it. A bucket no replay ever
    proposed in (stored as precision 0) is left out, so that an "again" bucket falls back to
    the one without it instead of silencing its kind."""
    stored = metadata.get("calibration", {})
    stored = stored.get("next_edit", {}) if isinstance(stored, dict) else {}
    return {kind: float(entry["precision"]) for kind, entry in (stored.items() if isinstance(stored, dict) else ())
            if isinstance(entry, dict) and isinstance(entry.get("precision"), int | float)
            and entry.get("proposed") != 0}


class NextEditor:
    def __init__(self, loaded: ServedModel, budget: NextEditBudget | None = None) -> None:
        self.network = loaded.network
        self.tokenizer = loaded.tokenizer
        self.budget = budget or NextEditBudget()
        self.no_change_id = self.tokenizer.id_of("<|nochange|>")
        self.end_ids = frozenset({self.tokenizer.end_of_middle_id, self.tokenizer.pad_id})
        self.precision = measured_precisions(loaded.metadata)

    def precision_of(self, edit: PatternEdit) -> float:
        """The measured precision of the edit's bucket; a model folder calibrated before
        buckets were split by ``again`` has only the bucket without it."""
        precision = self.precision.get(edit.calibration_key)
        return precision if precision is not None else self.precision.get(edit.base_key, UNCALIBRATED)

    def propose(
        self, text: str, history: list[EditRecord], cursor_line: int, limit: int = 3,
        threshold: float = 0.9, should_stop: Callable[[], bool] = lambda: False, min_confidence: float = 0.0,
    ) -> list[ProposedEdit]:
        """Proposals at or above ``min_confidence``, most confident first; raises Cancelled."""
        lines = lsp_lines_with_ends(text)
        remaining = without_undone(history)
        if not lines or remaining.just_undone:
            return []  # right after an undo, what it took back is not to be repeated
        history = remaining.records
        proposals = [ProposedEdit(p.start_line, p.end_line, p.new_text, self.precision_of(p), p.kind)
                     for p in pattern_proposals(lines, history)]
        proposals = [p for p in proposals if p.confidence >= min_confidence]
        # The network only when it could still add a proposal worth showing: one its measured
        # precision says is sometimes right (at 0, its proposals were never right on held-out
        # edits, and asking for every proposal would cost ~1 s a request for nothing).
        network_precision = self.precision.get(MODEL_KIND, UNCALIBRATED)
        if len(proposals) < limit and network_precision > 0 and network_precision >= min_confidence:
            covered = {p.start_line for p in proposals}
            proposals += self.rewrite_candidates(lines, history, cursor_line, covered, threshold, should_stop)
        proposals.sort(key=lambda p: -p.confidence)  # stable: patterns stay nearest first
        return proposals[:limit]

    def rewrite_candidates(
        self, lines: list[str], history: list[EditRecord], cursor_line: int, covered: set[int],
        threshold: float, should_stop: Callable[[], bool],
    ) -> list[ProposedEdit]:
        """The network's rewrites of candidate lines not in ``covered``; raises Cancelled."""
        tok = self.tokenizer
        hunks = [render_hunk(r.path, r.start_line, r.old_text, r.new_text) for r in history]
        head = history_ids(tok, hunks, self.budget)
        head_cache = self.network.encode_context(np.array(head, dtype=np.int64))
        proposals: list[ProposedEdit] = []
        for row in candidate_lines([line.rstrip("\r\n") for line in lines], history, cursor_line):
            if row in covered:
                continue
            if should_stop():
                raise Cancelled
            tail = next_edit_region_ids(tok, "".join(lines[:row]), lines[row], "".join(lines[row + 1 :]),
                                        self.budget.total - len(head), self.budget)
            if tail is None:
                continue
            room = self.network.make_room(head_cache, CANVAS, pending=np.array(tail, dtype=np.int64))
            run = denoise(self.network, room, tok.mask_id, self.end_ids,
                          SamplerSettings(CANVAS, threshold, MAX_STEPS, freeze_tail=True), should_stop)
            if run.stopped:
                raise Cancelled
            if run.tokens[0] in (self.no_change_id, tok.mask_id) or not _settled(run.tokens, tok.mask_id, self.end_ids):
                continue
            rewritten = middle_from_canvas(tok, run.tokens)
            if rewritten == lines[row]:
                continue
            raw, _ = confidence_of(run, self.end_ids)
            # The measured precision of the network's proposals, ordered by its own confidence.
            proposals.append(ProposedEdit(row, row + 1, rewritten, self.precision.get(MODEL_KIND, UNCALIBRATED) * raw))
        return proposals


def _settled(tokens: list[int], mask_id: int, end_ids: frozenset[int]) -> bool:
    """Every position before the end of the rewrite is committed."""
    for token in tokens:
        if token in end_ids:
            return True
        if token == mask_id:
            return False
    return True
