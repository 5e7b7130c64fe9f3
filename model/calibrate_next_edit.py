"""Next-edit calibration: the precision of each proposal source on real edits.

A case is a real file pair (one file in two releases) and a hunk k ≥ 1: hunks 1..k-1 are
applied as the edit history, and the top proposal is correct when applying it gives the
file after hunk k (lines compared without trailing whitespace) — exactly what
``redraft bench nextedit`` checks through the server. A source's confidence is its
precision on these cases, shrunk towards zero (exact / (proposed + 2)), so a kind seen
rarely is not trusted much.

The edit patterns learn nothing from data, so every pair (training and dev) is held out
for them; the network is measured on the dev pairs only.
"""

from __future__ import annotations

import json
import logging
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from model.edit_patterns import CALIBRATION_KEYS
from model.model_folder import CONFIG_FILE
from model.next_edit import MODEL_KIND, EditRecord, NextEditor, ProposedEdit, pattern_proposals
from model.next_edit_examples import EditPair, line_hunks
from model.serving import load_served_model

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Case:
    before: list[str]  # the document (lines with endings) after hunks 1..k-1
    history: list[EditRecord]
    cursor_line: int
    expected: list[str]  # the document after hunk k


@dataclass
class Tally:
    proposed: int = 0
    exact: int = 0

    @property
    def precision(self) -> float:
        return self.exact / (self.proposed + 2)


def cases_of(pair: EditPair, limit: int, rng: random.Random) -> list[Case]:
    hunks = line_hunks(pair.old, pair.new)
    if len(hunks) < 2:
        return []
    found = []
    for k in sorted(rng.sample(range(1, len(hunks)), min(limit, len(hunks) - 1))):
        lines = pair.old.splitlines(keepends=True)
        history = []
        for hunk in hunks[:k]:
            lines[hunk.start : hunk.start + len(hunk.old_lines)] = hunk.new_lines
            history.append(EditRecord(pair.path, hunk.start, "".join(hunk.old_lines), "".join(hunk.new_lines)))
        target = hunks[k]
        expected = lines[: target.start] + target.new_lines + lines[target.start + len(target.old_lines) :]
        last = hunks[k - 1]
        cursor = last.start + max(0, len(last.new_lines) - 1)
        found.append(Case(lines, history, cursor, expected))
    return found


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


def measure_patterns(pairs: list[EditPair], cases_per_pair: int = 3, seed: int = 11) -> dict[str, Tally]:
    rng = random.Random(seed)
    tallies: dict[str, Tally] = defaultdict(Tally)
    for pair in pairs:
        for case in cases_of(pair, cases_per_pair, rng):
            proposals = pattern_proposals(case.before, case.history)
            if proposals:
                top = proposals[0]
                as_proposed = ProposedEdit(top.start_line, top.end_line, top.new_text, 0.0, top.kind)
                tallies[top.calibration_key].proposed += 1
                tallies[top.calibration_key].exact += is_exact(case, as_proposed)
    return tallies


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
                tally.proposed += 1
                tally.exact += is_exact(case, best)
    return tally


def calibrate_next_edit(model_dir: Path, corpus_dir: Path, network_cases: int = 60) -> str:
    """Measure every source, write ``calibration.next_edit`` into the model's config.json."""
    all_pairs = read_pairs(corpus_dir / "edits_train.jsonl") + read_pairs(corpus_dir / "edits_dev.jsonl")
    tallies = measure_patterns(all_pairs)
    loaded = load_served_model(model_dir)
    tallies[MODEL_KIND] = measure_network(NextEditor(loaded), read_pairs(corpus_dir / "edits_dev.jsonl"),
                                          network_cases)
    config_path = model_dir / CONFIG_FILE
    config = json.loads(config_path.read_text())
    config.setdefault("calibration", {})["next_edit"] = {
        kind: {"precision": round(tallies[kind].precision, 4), "proposed": tallies[kind].proposed,
               "exact": tallies[kind].exact}
        for kind in (*CALIBRATION_KEYS, MODEL_KIND)
    }
    config_path.write_text(json.dumps(config, indent=2) + "\n")
    rows = [f"{'source':>16} {'proposed':>9} {'exact':>6} {'precision':>10}"]
    for kind in (*CALIBRATION_KEYS, MODEL_KIND):
        tally = tallies[kind]
        rows.append(f"{kind:>16} {tally.proposed:9d} {tally.exact:6d} {tally.precision:10.1%}")
    return f"{len(all_pairs)} real file pairs (patterns), dev pairs only for the network:\n" + "\n".join(rows)
