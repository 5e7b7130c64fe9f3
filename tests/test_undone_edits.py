"""Undone edits cancel out of the history the next-edit patterns read."""

from model.next_edit.edit_record import EditRecord
from model.next_edit.editor import pattern_proposals
from model.next_edit.undone_edits import without_undone

LINE = "    log.debug('start')\n"
DELETE = EditRecord("twin.py", 1, LINE, "")
RESTORE = EditRecord("twin.py", 1, "", LINE)


def test_an_undone_deletion_leaves_nothing_and_says_so() -> None:
    remaining = without_undone([DELETE, RESTORE])
    assert remaining.records == [] and remaining.just_undone


def test_a_redo_is_a_change_again() -> None:
    remaining = without_undone([DELETE, RESTORE, DELETE])
    assert remaining.records == [DELETE] and not remaining.just_undone


def test_undoing_an_accepted_proposal_keeps_the_change_it_followed() -> None:
    accepted = EditRecord("twin.py", 2, LINE, "")  # the twin, below the first deletion
    undo = EditRecord("twin.py", 2, "", LINE)
    remaining = without_undone([DELETE, accepted, undo])
    assert remaining.records == [DELETE] and remaining.just_undone
    remaining = without_undone([DELETE, accepted, undo, RESTORE])  # and the first one too
    assert remaining.records == [] and remaining.just_undone


def test_a_rename_typed_in_steps_is_undone_in_one() -> None:
    steps = [EditRecord("g.py", 0, "def g(count):\n", "def g():\n"),
             EditRecord("g.py", 0, "def g():\n", "def g(n):\n"),
             EditRecord("g.py", 0, "def g(n):\n", "def g(num):\n")]
    undo = EditRecord("g.py", 0, "def g(num):\n", "def g(count):\n")
    remaining = without_undone([*steps, undo])
    assert remaining.records == [] and remaining.just_undone
    # Undoing only the last step (back to `n`) keeps the first two.
    remaining = without_undone([*steps, EditRecord("g.py", 0, "def g(num):\n", "def g(n):\n")])
    assert remaining.records == steps[:2] and remaining.just_undone


def test_changes_that_do_not_reverse_the_newest_are_kept() -> None:
    other_place = EditRecord("twin.py", 3, "", LINE)  # the same text restored elsewhere
    other_text = EditRecord("twin.py", 1, "", "    log.info('start')\n")
    other_file = EditRecord("other.py", 1, "", LINE, in_document=False)
    for newest in (other_place, other_text, other_file):
        remaining = without_undone([DELETE, newest])
        assert remaining.records == [DELETE, newest] and not remaining.just_undone
    # An older change is not undone by reversing it out of order: undo takes the newest first.
    rewrite = EditRecord("twin.py", 0, "def f(a, b):\n", "def f(a, b, c):\n")
    remaining = without_undone([DELETE, rewrite, RESTORE])
    assert remaining.records == [DELETE, rewrite, RESTORE] and not remaining.just_undone


def test_another_files_change_between_does_not_hide_the_undo() -> None:
    elsewhere = EditRecord("other.py", 7, "a = 1\n", "a = 2\n", in_document=False)
    remaining = without_undone([DELETE, elsewhere, RESTORE])
    assert remaining.records == [elsewhere] and remaining.just_undone


def test_read_raw_undoing_two_steps_would_undo_the_users_own_edit_too() -> None:
    # An argument added by hand at line 0 and accepted at line 1, an edit at line 2; then
    # `u` twice. Read as they come, the newest change removes the argument at line 1, and
    # the patterns propose removing it from line 0, the edit the user kept.
    first = ("a = fetch(url)\n", "a = fetch(url, timeout=5)\n")
    accepted = ("c = fetch(other)\n", "c = fetch(other, timeout=5)\n")
    other = ("b = 1\n", "b = 2\n")
    doc = [first[1], accepted[0], other[0], "print(a, b, c)\n"]
    history = [EditRecord("m.py", 0, *first), EditRecord("m.py", 1, *accepted), EditRecord("m.py", 2, *other),
               EditRecord("m.py", 2, *reversed(other)), EditRecord("m.py", 1, *reversed(accepted))]
    assert [(p.start_line, p.new_text) for p in pattern_proposals(doc, history)] == [(0, first[0])]
    remaining = without_undone(history)
    assert remaining.records == history[:1] and remaining.just_undone
