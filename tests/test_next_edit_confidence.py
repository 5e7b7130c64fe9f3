"""Each pattern proposal's own confidence: the facts it reads and the model that weighs them."""

from __future__ import annotations

from model.calibration import Calibrator
from model.edit_patterns import Change, PatternEdit
from model.model_folder import SHIPPED_DIR
from model.next_edit import EditRecord, NextEditor
from model.next_edit_confidence import CONFIG_KEY, FEATURES, ChangeFacts
from model.serving import ServedModel
from model.tokenizer import CodeTokenizer

TOKENIZER = CodeTokenizer.load(SHIPPED_DIR / "tokenizer.json")


def test_repeats_count_earlier_changes_that_made_the_same_edit() -> None:
    changes = [
        Change(1, "x = old_name\n", "x = new_name\n"),
        Change(4, "print(3)\n", "print(4)\n"),  # another edit
        Change(7, "old_name = f(old_name)\n", "new_name = f(new_name)\n"),  # the same one, twice in a line
        Change(9, "z = old_name + 1\n", "z = new_name + 1\n"),  # the newest
    ]
    facts = ChangeFacts(changes)
    assert facts.repeats == 2
    assert facts.size == len("old_name") + len("new_name")


def test_a_change_typed_key_by_key_counts_as_one_edit() -> None:
    # The first rename arrived as keystrokes (old → o → ne → new); the second as one event.
    changes = [
        Change(1, "a = old\n", "a = o\n"),
        Change(1, "a = o\n", "a = ne\n"),
        Change(1, "a = ne\n", "a = new\n"),
        Change(5, "b = old\n", "b = new\n"),
    ]
    assert ChangeFacts(changes).repeats == 1


def test_features_follow_the_names_and_the_rank() -> None:
    facts = ChangeFacts([Change(0, "a\n", "b\n")])
    edit = PatternEdit(3, 4, "b\n", "same_line", lines_away=3)
    first, third = facts.features(edit, 0, 5), facts.features(edit, 2, 5)
    assert len(first) == len(FEATURES)
    at = FEATURES.index("log_rank")
    assert first[at] == 0.0 < third[at]
    assert first[FEATURES.index("same_line")] == 1.0 and first[FEATURES.index("near")] == 1.0
    assert sum(first[: FEATURES.index("near")]) == 1.0  # one kind


def _editor(calibration: dict[str, object]) -> NextEditor:
    # No network: its bucket is never reached (precision 0, below every min_confidence used here).
    return NextEditor(ServedModel(None, TOKENIZER, {"calibration": calibration}))  # type: ignore[arg-type]


def test_the_editor_weighs_each_proposal_with_the_stored_model() -> None:
    # A model that only reads the rank: the first proposal is likely, later ones are not.
    weights = tuple(-8.0 if name == "log_rank" else 0.0 for name in FEATURES)
    model = Calibrator(weights, 2.0)
    editor = _editor({"next_edit": {"rename:near": {"precision": 0.55}},
                      CONFIG_KEY: model.to_dict(FEATURES)})
    text = "def f(old):\n    a = old\n    b = old\n    c = old\n    return old\n"
    edited = text.replace("def f(old)", "def f(new)")
    history = [EditRecord("m.py", 0, "def f(old):\n", "def f(new):\n")]
    proposals = editor.propose(edited, history, 0, limit=3, min_confidence=1e-9)
    assert proposals[0].confidence > 0.8  # the nearest use
    assert all(p.confidence < 0.1 for p in proposals[1:])


def test_a_folder_calibrated_before_the_model_keeps_its_buckets() -> None:
    editor = _editor({"next_edit": {"rename:near": {"precision": 0.55}}})
    text = "def f(new):\n    a = old\n    return old\n"
    history = [EditRecord("m.py", 0, "def f(old):\n", "def f(new):\n")]
    assert {p.confidence for p in editor.propose(text, history, 0, min_confidence=1e-9)} == {0.55}


def test_a_model_fitted_on_other_features_is_not_used() -> None:
    stale = {"features": ["kind", "near"], "weights": [1.0, 1.0], "bias": 0.0}
    editor = _editor({"next_edit": {"rename:near": {"precision": 0.55}}, CONFIG_KEY: stale})
    assert editor.pattern_model is None
