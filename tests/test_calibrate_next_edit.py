"""Next-edit calibration cases: release diffs replayed top-down and bottom-up."""

import random

import pytest

from model.next_edit.calibrate import CASES_PER_PACKAGE, cases_of, is_exact, measure_patterns, typed_cases_of
from model.next_edit.editor import ProposedEdit
from model.training.next_edit_examples import EditPair

# Three hunks that change the line count (one line becomes two, one is deleted), so a
# replay that got a hunk's start wrong would put the next one on the wrong line.
OLD = "".join(f"line {n}\n" for n in range(12))
NEW = OLD.replace("line 2\n", "line 2a\nline 2b\n").replace("line 6\n", "").replace("line 10\n", "line ten\n")


def test_every_case_ends_at_the_next_release_when_the_rest_is_applied() -> None:
    pair = EditPair("m.py", OLD, NEW)
    for bottom_up in (False, True):
        cases = cases_of(pair, 5, random.Random(0), bottom_up=bottom_up)
        assert len(cases) == 2  # three hunks, each case with at least one hunk of history
        for case in cases:
            assert case.bottom_up == bottom_up
            assert "".join(case.before) != OLD
            assert len(case.history) in (1, 2)
    # Bottom-up, the first hunk is the target of the case whose history is the other two:
    # applying it gives the new release.
    first = cases_of(pair, 5, random.Random(0), bottom_up=True)[0]
    assert "".join(first.expected) == NEW
    assert [record.new_text for record in first.history] == ["line ten\n", ""]
    assert first.cursor_line == 6  # where the last hunk applied (line 6's deletion) starts


def test_a_proposal_is_exact_only_when_it_makes_the_target_edit() -> None:
    first = cases_of(EditPair("m.py", OLD, NEW), 5, random.Random(0), bottom_up=True)[0]
    assert is_exact(first, ProposedEdit(2, 3, "line 2a\nline 2b\n", 0.9, "rename"))
    assert not is_exact(first, ProposedEdit(2, 3, "line 2a\n", 0.9, "rename"))


def test_a_rename_made_in_the_middle_is_measured_above_the_change_too() -> None:
    # The name is renamed at its last use first, then upwards: the bottom-up cases have
    # the uses above left to rename, and the rename pattern proposes them.
    body = "".join(f"    total = total + {n}\n    print(n)\n" for n in range(4))
    old = f"def f(total):\n{body}    return total\n"
    pair = EditPair("m.py", old, old.replace("total", "amount"))
    top_down = measure_patterns([pair], cases_per_pair=6, directions=(False,))["rename:near"]
    both = measure_patterns([pair], cases_per_pair=6)["rename:near"]
    assert top_down.proposed >= 1 and top_down.exact == top_down.proposed
    # Bottom-up, the uses above are the next edit: as many cases again, all right.
    assert both.proposed > top_down.proposed and both.exact == both.proposed


def test_a_package_with_many_cases_weighs_as_much_as_the_cap_allows() -> None:
    # The same substitution 50 times in one package (right each time), once in another
    # package where the next hunk is something else (wrong).
    right = [EditPair(f"big/m{n}.py", "a = x + 1\n\nc = x + 1\n", "a = x * 1\n\nc = x * 1\n") for n in range(50)]
    wrong = EditPair("small/m.py", "a = x + 1\n\nb = 2\n\nc = x + 1\n", "a = x * 1\n\nb = 3\n\nc = x + 1\n")
    tally = measure_patterns([*right, wrong], directions=(False,))["substitution:near"]
    assert (tally.proposed, tally.exact) == (51, 50)
    # `big` counts as CASES_PER_PACKAGE cases, not 50.
    assert tally.weighted_proposed == pytest.approx(CASES_PER_PACKAGE + 1)
    assert tally.precision == pytest.approx(CASES_PER_PACKAGE / (CASES_PER_PACKAGE + 1 + 2))


def test_a_repeated_change_s_proposals_are_measured_apart_and_in_the_bucket_of_their_kind() -> None:
    # `+ 1` → `* 1` on three lines: with the first as history, the second is proposed once;
    # with the first two, the third is proposed again (and one pair's two cases are that).
    old = "a = x + 1\n\nb = x + 1\n\nc = x + 1\n"
    pair = EditPair("m.py", old, old.replace("+", "*"))
    tallies = measure_patterns([pair], cases_per_pair=2, directions=(False,))
    assert (tallies["substitution:near:again"].proposed, tallies["substitution:near:again"].exact) == (1, 1)
    assert (tallies["substitution:near"].proposed, tallies["substitution:near"].exact) == (2, 2)  # both


def test_a_hunk_rewriting_lines_one_for_one_is_replayed_as_typed_line_by_line() -> None:
    # The entries of a literal each wrapped in a call: one hunk in the release diff, two
    # edits to a person. Typed, the first line's change implies the second's.
    old = 'row = {\n    "a": get(0),\n    "b": get(1),\n    "c": get(2),\n}\n\nz = 1\n'
    new = old.replace("get(0)", "str(get(0))").replace("get(1)", "str(get(1))").replace(
        "get(2)", "str(get(2))").replace("z = 1", "z = 2")
    pair = EditPair("m.py", old, new)
    cases = typed_cases_of(pair, 5, random.Random(0))
    # The literal's hunk, its first line typed or its first two; `z`'s, one line with no
    # hunk after it, has no next edit.
    assert len(cases) == 2
    first, second = cases
    assert not first.history[-1].whole_lines and first.history[-1].new_text == '    "a": str(get(0)),\n'
    assert first.expected[2] == '    "b": str(get(1)),\n' and first.expected[3] == '    "c": get(2),\n'
    assert [record.new_text for record in second.history] == ['    "a": str(get(0)),\n', '    "b": str(get(1)),\n']
    assert second.expected[3] == '    "c": str(get(2)),\n'
    tallies = measure_patterns([pair], cases_per_pair=5, directions=(False,))
    assert (tallies["repeated_line:near"].proposed, tallies["repeated_line:near"].exact) == (2, 2)
    assert (tallies["repeated_line:near:again"].proposed, tallies["repeated_line:near:again"].exact) == (1, 1)
