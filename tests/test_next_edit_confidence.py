"""A next-edit proposal's confidence: its bucket's measured precision, and when the network is run."""

from typing import Any

import pytest

from model.next_edit.edit_patterns import CALL_SITE, PatternEdit
from model.next_edit.edit_record import EditRecord
from model.next_edit.editor import MODEL_KIND, NextEditor, ProposedEdit, measured_precisions

DOCUMENT = "def area(width, height):\n    return width * height\n"
# A change no edit pattern repeats: only the network could propose something.
HISTORY = [EditRecord("a.py", 1, "    return width * height\n", "    return width * height / 2\n")]


@pytest.fixture(scope="module")
def editor() -> NextEditor:
    from model.model_folder import SHIPPED_DIR
    from model.runtime.serving import load_served_model

    return NextEditor(load_served_model(SHIPPED_DIR))


@pytest.mark.parametrize(("precision", "min_confidence", "runs"), [
    (0.0, 0.0, False),  # never right on held-out edits: not run even when every proposal is asked for
    (0.2, 0.0, True),
    (0.2, 0.5, False),  # below the caller's threshold
])
def test_the_network_runs_only_when_its_measured_precision_could_reach_the_threshold(
    editor: NextEditor, monkeypatch: pytest.MonkeyPatch, precision: float, min_confidence: float, runs: bool
) -> None:
    calls: list[Any] = []

    def rewrite_candidates(*args: Any) -> list[ProposedEdit]:
        calls.append(args)
        return []

    monkeypatch.setattr(editor, "rewrite_candidates", rewrite_candidates)
    monkeypatch.setitem(editor.precision, MODEL_KIND, precision)
    assert editor.propose(DOCUMENT, HISTORY, 1, min_confidence=min_confidence) == []
    assert bool(calls) == runs


def test_a_folder_calibrated_before_the_again_buckets_uses_the_bucket_without_it(
    editor: NextEditor, monkeypatch: pytest.MonkeyPatch
) -> None:
    edit = PatternEdit(3, 4, "b = fetch(other, timeout=5)\n", CALL_SITE, lines_away=1, again=True)
    monkeypatch.setattr(editor, "precision", {"call_site:near": 0.65})
    assert editor.precision_of(edit) == 0.65
    monkeypatch.setattr(editor, "precision", {"call_site:near": 0.65, "call_site:near:again": 0.76})
    assert editor.precision_of(edit) == 0.76


def test_a_bucket_never_proposed_in_falls_back_to_the_one_without_again(editor: NextEditor,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    stored = {"calibration": {"next_edit": {
        "call_site:near": {"precision": 0.65, "proposed": 300, "exact": 197},
        "call_site:near:again": {"precision": 0.0, "proposed": 0, "exact": 0},  # never measured
        "model": {"precision": 0.0, "proposed": 50, "exact": 0},  # measured: never right
        "old": {"precision": 0.5}}}}  # a folder from before counts were stored
    assert measured_precisions(stored) == {"call_site:near": 0.65, "model": 0.0, "old": 0.5}
    monkeypatch.setattr(editor, "precision", measured_precisions(stored))
    edit = PatternEdit(3, 4, "b = fetch(other, timeout=5)\n", CALL_SITE, lines_away=1, again=True)
    assert editor.precision_of(edit) == 0.65
