"""Next-edit calibration: the precision of each proposal source on real edits.

A case is a real file pair (one file in two releases) and one of its hunks, the target.
Top-down, the hunks above the target are applied as the edit history; the top proposal is
correct when applying it gives the file after the target too (lines compared without
trailing whitespace) — exactly what ``redraft bench nextedit`` checks through the server.
A release diff does not say in which order its hunks were made, and a person renaming a
name at its third use goes on above as well as below, so every pair is replayed
bottom-up too: the hunks below the target are the history. A proposal on the side of the
change where the replay left nothing to do can never be right, whatever it proposes, so
top-down cases measure the proposals below the change and bottom-up ones those above it;
a bucket (kind, near or far) pools both. A source's confidence is its precision on these
cases, shrunk towards zero (exact / (proposed + 2)), so a kind seen rarely is not
trusted much. A package's cases count together as at most ``CASES_PER_PACKAGE``: one
release of homeassistant is a third of all the pairs, and its sweeps would otherwise set
every bucket's precision.

The edit patterns learn nothing from data, so every pair (training and dev) is held out
for them; the network is measured on the dev pairs only.
"""

from __future__ import annotations

import json
import logging
import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from model.model_folder import store_calibration
from model.next_edit.edit_patterns import CALIBRATION_KEYS, REPEATED_LINE
from model.next_edit.edit_record import EditRecord
from model.next_edit.editor import MODEL_KIND, NextEditor, ProposedEdit, pattern_proposals
from model.runtime.serving import load_served_model
from model.training.next_edit_examples import EditPair, Hunk, line_hunks, replay, replay_targets

log = logging.getLogger(__name__)

# Replayed, a package's cases weigh at most this many in all (13,687 pairs:
# uncapped, homeassistant's third of the pairs made "substitution, near" 36% right;
# capped, 57%).
CASES_PER_PACKAGE = 40
# Kinds proposed only after a typed change (``pattern_edits``): measured on typed replays.
TYPED_ONLY_KINDS = frozenset({REPEATED_LINE})


@dataclass(frozen=True)
class Case:
    before: list[str]  # the document (lines with endings) with the history applied
    history: list[EditRecord]
    cursor_line: int
    expected: list[str]  # the document after the target hunk too
    bottom_up: bool = False  # the history is the hunks below the target, applied from the last


@dataclass
class Tally:
    proposed: int = 0
    exact: int = 0
    # The same, each case weighted by its package's share (CASES_PER_PACKAGE).
    weighted_proposed: float = 0.0
    weighted_exact: float = 0.0

    def add(self, exact: bool, weight: float = 1.0) -> None:
        self.proposed += 1
        self.exact += exact
        self.weighted_proposed += weight
        self.weighted_exact += weight * exact

    @property
    def precision(self) -> float:
        return self.weighted_exact / (self.weighted_proposed + 2)


def cases_of(pair: EditPair, limit: int, rng: random.Random, bottom_up: bool = False) -> list[Case]:
    """Up to ``limit`` cases of ``pair``, each with at least one hunk of history."""
    hunks = line_hunks(pair.old, pair.new)
    if len(hunks) < 2:
        return []
    targets = replay_targets(hunks, bottom_up)
    chosen = sorted(rng.sample(targets, min(limit, len(targets))))
    return [_case(pair, *replay(hunks, k, bottom_up), bottom_up) for k in chosen]


def _case(pair: EditPair, applied: list[Hunk], target: Hunk, bottom_up: bool) -> Case:
    lines = pair.old.splitlines(keepends=True)
    history = []
    for hunk in applied:
        lines[hunk.start : hunk.start + len(hunk.old_lines)] = hunk.new_lines
        history.append(EditRecord(pair.path, hunk.start, "".join(hunk.old_lines), "".join(hunk.new_lines),
                                     whole_lines=True))
    expected = lines[: target.start] + target.new_lines + lines[target.start + len(target.old_lines) :]
    last = applied[-1]
    return Case(lines, history, last.start + max(0, len(last.new_lines) - 1), expected, bottom_up)


def typed_cases_of(pair: EditPair, limit: int, rng: random.Random) -> list[Case]:
    """Up to ``limit`` cases of ``pair`` replayed as a person types a hunk that rewrites
    lines one for one: the hunks above it applied, then its first line typed as an edit of
    its own (or its first two, one after the other); the next edit is its next line, or
    after a one-line hunk, the next hunk. A release diff has the run of lines a person
    changes one by one as one hunk; only so do the steps show."""
    hunks = line_hunks(pair.old, pair.new)
    targets = [(k, typed) for k, hunk in enumerate(hunks) if len(hunk.old_lines) == len(hunk.new_lines)
               for typed in (1, 2) if typed < len(hunk.old_lines) or (typed == 1 and k + 1 < len(hunks))]
    chosen = sorted(rng.sample(targets, min(limit, len(targets))))
    return [_typed_case(pair, hunks, k, typed) for k, typed in chosen]


def _typed_case(pair: EditPair, hunks: list[Hunk], k: int, typed_lines: int) -> Case:
    lines = pair.old.splitlines(keepends=True)
    history = []
    for hunk in hunks[:k]:
        lines[hunk.start : hunk.start + len(hunk.old_lines)] = hunk.new_lines
        history.append(EditRecord(pair.path, hunk.start, "".join(hunk.old_lines), "".join(hunk.new_lines),
                                  whole_lines=True))
    typed = hunks[k]
    for row in range(typed.start, typed.start + typed_lines):
        lines[row] = typed.new_lines[row - typed.start]
        history.append(EditRecord(pair.path, row, typed.old_lines[row - typed.start], lines[row]))
    expected = list(lines)
    if typed_lines < len(typed.new_lines):
        expected[typed.start + typed_lines] = typed.new_lines[typed_lines]
    else:
        after = hunks[k + 1]
        expected[after.start : after.start + len(after.old_lines)] = after.new_lines
    return Case(lines, history, typed.start + typed_lines - 1, expected)


def is_exact(case: Case, proposal: ProposedEdit) -> bool:
    edited = case.before[: proposal.start_line] + proposal.new_text.splitlines(keepends=True) + \
        case.before[proposal.end_line :]
    return [line.rstrip() for line in "".join(edited).splitlines()] == \
        [line.rstrip() for line in "".join(case.expected).splitlines()]


def read_pairs(path: Path) -> list[EditPair]:
    if not path.is_file():
        return []
    with open(path) as handle:
        return [EditPair(**json.loads(line)) for line in handle if line.strip()]


def measure_patterns(pairs: list[EditPair], cases_per_pair: int = 3, seed: int = 11,
                     directions: tuple[bool, ...] = (False, True)) -> dict[str, Tally]:
    """Each pattern bucket's tally; ``directions``: top-down (False) and bottom-up (True) replays."""
    rng, typed_rng = random.Random(seed), random.Random(seed + 1)
    cases_in: Counter[str] = Counter()
    typed_cases_in: Counter[str] = Counter()  # weighed apart: the hunk replays' weights stay theirs
    outcomes: list[tuple[str, str, bool, bool]] = []  # (package, bucket, exact, typed) of each top proposal

    def measure(case: Case, package: str, kinds: frozenset[str] | None = None) -> None:
        proposals = pattern_proposals(case.before, case.history)
        if not proposals or (proposals[0].lines_away < 0) != case.bottom_up:
            return  # on the side the replay has finished: nothing there can be right
        top = proposals[0]
        if kinds is not None and top.kind not in kinds:
            return
        exact = is_exact(case, ProposedEdit(top.start_line, top.end_line, top.new_text, 0.0, top.kind))
        # The bucket without "again" pools both; the "again" bucket is measured apart.
        for key in dict.fromkeys((top.base_key, top.calibration_key)):
            outcomes.append((package, key, exact, kinds is not None))

    for pair in pairs:
        for bottom_up in directions:
            for case in cases_of(pair, cases_per_pair, rng, bottom_up):
                cases_in[package_of(pair)] += 1
                measure(case, package_of(pair))
        # Typed replays measure the kinds that serve typed changes alone; the other kinds
        # keep the measure of the hunks they were fitted on.
        for case in typed_cases_of(pair, cases_per_pair, typed_rng):
            typed_cases_in[package_of(pair)] += 1
            measure(case, package_of(pair), TYPED_ONLY_KINDS)
    tallies: dict[str, Tally] = defaultdict(Tally)
    for package, key, exact, typed in outcomes:
        count = typed_cases_in[package] if typed else cases_in[package]
        tallies[key].add(exact, min(1.0, CASES_PER_PACKAGE / count))
    return tallies


def package_of(pair: EditPair) -> str:
    """The corpus writes a pair's path under its package's folder."""
    return pair.path.split("/", 1)[0]


def measure_network(editor: NextEditor, pairs: list[EditPair], cases: int, seed: int = 12) -> Tally:
    rng = random.Random(seed)
    tally = Tally()
    for pair in pairs:
        for case in cases_of(pair, 2, rng):
            if tally.proposed >= cases:
                return tally
            rewrites = editor.rewrite_candidates(case.before, case.history, case.cursor_line, set(), 0.9,
                                                 lambda: False)
            if rewrites:
                best = max(rewrites, key=lambda p: p.confidence)
                tally.add(is_exact(case, best))
    return tally


def calibrate_next_edit(model_dir: Path, corpus_dir: Path, network_cases: int = 60) -> str:
    """Measure every source, write ``calibration.next_edit`` into the model's config.json."""
    all_pairs = read_pairs(corpus_dir / "edits_train.jsonl") + read_pairs(corpus_dir / "edits_dev.jsonl")
    tallies = measure_patterns(all_pairs)
    loaded = load_served_model(model_dir)
    tallies[MODEL_KIND] = measure_network(NextEditor(loaded), read_pairs(corpus_dir / "edits_dev.jsonl"),
                                          network_cases)
    store_calibration(model_dir, "next_edit", {
        kind: {"precision": round(tallies[kind].precision, 4), "proposed": tallies[kind].proposed,
               "exact": tallies[kind].exact, "weighted_proposed": round(tallies[kind].weighted_proposed, 1),
               "weighted_exact": round(tallies[kind].weighted_exact, 1)}
        for kind in (*CALIBRATION_KEYS, MODEL_KIND)
    })
    rows = [f"{'source':>26} {'proposed':>9} {'exact':>6} {'weighted':>17} {'precision':>10}"]
    for kind in (*CALIBRATION_KEYS, MODEL_KIND):
        tally = tallies[kind]
        weighted = f"{tally.weighted_exact:.1f} / {tally.weighted_proposed:.1f}"
        rows.append(f"{kind:>26} {tally.proposed:9d} {tally.exact:6d} {weighted:>17} {tally.precision:10.1%}")
    return (f"{len(all_pairs)} real file pairs (patterns; a package's cases weigh at most {CASES_PER_PACKAGE}), "
            "dev pairs only for the network:\n" + "\n".join(rows))
