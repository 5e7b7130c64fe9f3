"""Edit patterns: the newest change carried to the places it applies again (runs of lines,
call sites, twin lines, substituted and inserted runs; the order they are proposed in).
Renames are in ``test_rename_pattern.py``, typing modernisation in ``test_typing_modernisation.py``."""

from dataclasses import replace

from model.next_edit.edit_patterns import (
    CALL_SITE,
    INSERTION,
    LONGEST_LINE,
    RENAME,
    REPEATED_LINE,
    SAME_LINE,
    SUBSTITUTION,
    Change,
    edited_insertion,
    moved_lines,
    net_change,
    pattern_edits,
    previous_change,
    repeats_previous,
    travel,
)
from model.next_edit.edit_record import EditRecord
from model.next_edit.editor import pattern_proposals


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def test_a_run_of_consecutive_lines_is_one_edit() -> None:
    text = "def f(n):\n    a = count + 1\n    b = count * 2\n    return a + b\n"
    edits = pattern_edits(lines_of(text), Change(0, "def f(count):\n", "def f(n):\n"), "m.py")
    assert [(e.start_line, e.end_line, e.new_text) for e in edits] == [
        (1, 3, "    a = n + 1\n    b = n * 2\n")]


def test_an_argument_added_to_one_call_is_offered_at_the_next_call() -> None:
    text = "a = fetch(url, timeout=5)\nb = fetch(other)\nc = fetch(third, timeout=5)\nd = fetchall(x)\n"
    change = Change(0, "a = fetch(url)\n", "a = fetch(url, timeout=5)\n")
    edits = pattern_edits(lines_of(text), change, "m.py")
    assert [(e.start_line, e.new_text, e.kind) for e in edits] == [(1, "b = fetch(other, timeout=5)\n", CALL_SITE)]


def test_an_argument_added_to_a_call_nested_in_another_is_offered_at_the_inner_calls() -> None:
    text = ("const a = items.map(x => load(x, true));\nfoo(1);\nconst b = others.filter(y => load(y));\n"
            "print(load(z), w);\n")
    change = Change(0, "const a = items.map(x => load(x));\n", "const a = items.map(x => load(x, true));\n")
    edits = pattern_edits(lines_of(text), change, "m.js", (), -1)  # typed: a proposal a line
    assert [(e.start_line, e.new_text, e.kind) for e in edits] == [
        (2, "const b = others.filter(y => load(y, true));\n", CALL_SITE), (3, "print(load(z, true), w);\n", CALL_SITE)]


def test_a_comma_in_a_string_argument_is_the_string_s() -> None:
    text = "a = parse(value, ',;', strict=True)\nb = parse(other, ',;')\n"
    change = Change(0, "a = parse(value, ',;')\n", "a = parse(value, ',;', strict=True)\n")
    edits = pattern_edits(lines_of(text), change, "m.py")
    assert [(e.start_line, e.new_text) for e in edits] == [(1, "b = parse(other, ',;', strict=True)\n")]


def test_an_added_argument_leaves_the_other_arguments_as_they_were_written() -> None:
    text = "t.remove(9.2,14.2, check=False)\n\nt.remove(4.0,9.0)\nt.remove( 1 )\n"
    change = Change(0, "t.remove(9.2,14.2)\n", "t.remove(9.2,14.2, check=False)\n")
    edits = pattern_edits(lines_of(text), change, "m.py", (), -1)
    assert [(e.start_line, e.new_text) for e in edits] == [
        (2, "t.remove(4.0,9.0, check=False)\n"), (3, "t.remove( 1, check=False )\n")]


def test_a_replaced_or_removed_argument_follows_the_same_rule() -> None:
    text = "run(cmd, check=True)\nrun(other, check=False)\nrun(x, shell=True)\n"
    replaced = pattern_edits(lines_of(text), Change(0, "run(cmd, check=False)\n", "run(cmd, check=True)\n"), "m.py")
    assert [(e.start_line, e.new_text) for e in replaced] == [(1, "run(other, check=True)\n")]
    text = "run(cmd)\nrun(x, shell=True)\nrun(y)\n"
    removed = pattern_edits(lines_of(text), Change(0, "run(cmd, shell=True)\n", "run(cmd)\n"), "m.py")
    assert [(e.start_line, e.new_text) for e in removed] == [(1, "run(x)\n")]


def test_a_deleted_line_offers_its_twin_and_a_rewritten_line_its_copies() -> None:
    text = "def a():\n    x = 1\n    return x\n\ndef b():\n    print('debugging here')\n    return 2\n"
    deleted = pattern_edits(lines_of(text), Change(1, "    print('debugging here')\n", ""), "m.py")
    assert [(e.start_line, e.end_line, e.new_text, e.kind) for e in deleted] == [(5, 6, "", SAME_LINE)]
    text = "if a:\n    log.info('x')\nelse:\n        log.warn('x')\n"
    rewritten = pattern_edits(lines_of(text), Change(1, "    log.warn('x')\n", "    log.info('x')\n"), "m.py")
    assert [(e.start_line, e.new_text) for e in rewritten] == [(3, "        log.info('x')\n")]


def test_short_common_lines_are_not_twins() -> None:
    text = "if a:\n    pass\nelse:\n    pass\n"
    assert pattern_edits(lines_of(text), Change(1, "    pass\n", ""), "m.py") == []


def test_keystrokes_on_one_line_add_up_to_one_change() -> None:
    typed = [Change(3, "x = value\n", "x = \n"), Change(3, "x = \n", "x = a\n"), Change(3, "x = a\n", "x = am\n")]
    assert net_change(typed) == Change(3, "x = value\n", "x = am\n")
    # An edit elsewhere in between ends the chain.
    assert net_change([typed[0], Change(9, "y\n", "z\n"), typed[1]]) == typed[1]
    assert net_change([]) is None


def test_a_copied_line_then_changed_is_not_a_rewrite_of_the_lines_like_it() -> None:
    original = '    width = config.get("width", 80)\n'
    copy = '    height = config.get("height", 24)\n'
    text = f"def setup(config):\n{original}{copy}    return width\n\n\ndef other(config):\n{original}"
    yyp = Change(2, "", original)
    edited = [Change(2, original, original.replace("width", "height", 1)),
              Change(2, original.replace("width", "height", 1), copy)]
    assert edited_insertion([yyp, *edited]) == range(2, 3)
    history = [EditRecord("m.py", c.start_line, c.old_text, c.new_text) for c in (yyp, *edited)]
    assert pattern_proposals(lines_of(text), history) == []
    # The same edits of a line that was there before are a rewrite: its twin gets it.
    rewritten = text.replace(f"config):\n{original}{copy}", f"config):\n{copy}", 1)
    assert edited_insertion([Change(0, "x\n", "y\n"), *edited]) is None
    proposed = pattern_proposals(lines_of(rewritten), history[1:])
    assert [(p.start_line, p.new_text) for p in proposed] == [(6, copy)]


def test_a_pasted_function_being_adapted_gets_proposals_within_it_only() -> None:
    loader = "def load_json(path):\n    data = read(path)\n    return parse(data, path)\n"
    text = f"{loader}\n\n{loader.replace('(path)', '(filename)', 1)}"
    paste = Change(4, "", loader)
    renamed = Change(4, "def load_json(path):\n", "def load_json(filename):\n")
    assert edited_insertion([paste, renamed]) == range(4, 7)
    history = [EditRecord("m.py", c.start_line, c.old_text, c.new_text) for c in (paste, renamed)]
    proposed = pattern_proposals(lines_of(text), history)
    assert proposed and {p.start_line for p in proposed} <= {5, 6}
    assert "filename" in proposed[0].new_text
    # Edits that leave the pasted lines end it; so does one of a line not among them.
    assert edited_insertion([paste, renamed, Change(9, "x\n", "y\n")]) is None
    assert edited_insertion([paste, Change(7, "\n", "x\n")]) is None


def test_a_moved_line_is_not_a_deleted_one() -> None:
    line = "    log.debug('start')\n"
    before = f"def f(a, b):\n{line}    x = a + b\n    y = x * 2\n    z = y - 1\n{line}    return z\n"
    dd = Change(1, line, "")
    after_dd = before.replace(line, "", 1)
    (twin,) = pattern_proposals(lines_of(after_dd), [EditRecord("m.py", 1, line, "")])
    assert (twin.start_line, twin.new_text) == (4, "")  # deleted: its twin goes too
    # ddp: put back one line below. Moved, not deleted: its twin stays.
    p = Change(2, "", line)
    moved = after_dd.replace("    x = a + b\n", "    x = a + b\n" + line)
    assert moved_lines([dd, p])
    assert pattern_proposals(lines_of(moved), [EditRecord("m.py", c.start_line, c.old_text, c.new_text)
                                               for c in (dd, p)]) == []
    # A copy pasted first, then the original deleted, is a move too.
    assert moved_lines([Change(3, "", line), Change(1, line, "")])
    # Not a move: another line put back, or the deletion's twin deleted after it.
    assert not moved_lines([dd, Change(2, "", "    log.info('start')\n")])
    assert not moved_lines([dd, Change(3, line, "")])


def test_a_change_of_indentation_alone_proposes_no_edit_that_changes_nothing() -> None:
    # Dedenting a line: its twin, rewritten "at its own indentation", would be itself.
    text = "def f(a):\n    if a:\nreturn None\n\n\ndef g(a):\n    if a:\n        return None\n"
    history = [EditRecord("m.py", 2, "        return None\n", "return None\n")]
    assert pattern_proposals(lines_of(text), history) == []


def test_only_edits_of_the_document_asked_about_drive_the_patterns() -> None:
    text = "def f(n):\n    return n\n"
    here = EditRecord("m.py", 0, "def f(count):\n", "def f(n):\n", in_document=True)
    there = EditRecord("other.py", 0, "total = 1\n", "amount = 1\n", in_document=False)
    assert [(p.start_line, p.new_text) for p in pattern_proposals(lines_of(text.replace("return n", "return count")),
                                                                  [here, there])] == [(1, "    return n\n")]
    assert pattern_proposals(lines_of(text), [there]) == []


def test_proposals_below_the_change_come_before_those_above() -> None:
    text = "y = total\ntotal = 3\nz = total\n"
    edits = pattern_edits(lines_of(text.replace("total = 3", "amount = 3")), Change(1, "total = 3\n", "amount = 3\n"),
                          "m.py")
    assert [(e.start_line, e.lines_away) for e in edits] == [(2, 1), (0, -1)]
    # Near is near on either side: the calibration measures both directions.
    assert [e.calibration_key for e in edits] == ["rename:near", "rename:near"]


def test_a_change_to_a_line_holding_characters_python_splits_lines_at_still_applies() -> None:
    odd = "\x0c\x0b\x1c\x1d\x1e\x85\u2028\u2029"  # line breaks to str.splitlines, not to LSP
    head = f"def area(width, height, unit='{odd}'):\n"
    text = head.replace("width", "w", 1) + f"    half = '{odd}' and width / 2\n    return half * height\n"
    lines = [line + "\n" for line in text.split("\n")[:-1]]
    edits = pattern_edits(lines, Change(0, head, head.replace("width", "w", 1)), "m.py")
    assert [(e.start_line, e.end_line, e.new_text) for e in edits] == [(1, 2, f"    half = '{odd}' and w / 2\n")]


def test_a_replaced_run_of_tokens_is_repeated_where_the_same_neighbours_hold_it() -> None:
    text = "if value is None:\n    pass\nwhile node == None:\n    node = a==None\n"
    edits = pattern_edits(lines_of(text), Change(0, "if value == None:\n", "if value is None:\n"))
    # `==` between spaces, as in the change; `a==None` has other neighbours.
    assert [(e.start_line, e.new_text, e.kind) for e in edits] == [(2, "while node is None:\n", SUBSTITUTION)]
    assert edits[0].calibration_key == "substitution:near"


def test_a_substitution_gives_way_to_a_more_specific_pattern_and_needs_a_replaced_run() -> None:
    text = "def f(n):\n    return count + 1\n"
    renamed = pattern_edits(lines_of(text), Change(0, "def f(count):\n", "def f(n):\n"), "m.py")
    assert [e.kind for e in renamed] == [RENAME]
    # A pure insertion replaces nothing: there is no run to look for elsewhere.
    inserted = pattern_edits(lines_of("x = f(a, b)\ny = f(a)\n"), Change(0, "x = f(a)\n", "x = f(a, b)\n"))
    assert all(e.kind != SUBSTITUTION for e in inserted)


def test_the_way_a_person_moves_is_read_from_their_last_two_changes() -> None:
    assert travel([]) == 0
    assert travel([Change(4, "a = 1\n", "a = 2\n")]) == 0  # one change: no way yet
    down = [Change(2, "x = 1\n", "x = 2\n"), Change(9, "y = 3\n", "y = 4\n")]
    assert travel(down) == 1 and travel(down[::-1]) == -1
    # Keystrokes on one line are one change: `v`, `va` after `value` on line 9 still moves down.
    typed = [Change(2, "a = 1\n", "a = 2\n"), Change(9, "value\n", "v\n"), Change(9, "v\n", "va\n")]
    assert travel(typed) == 1
    # Two steps of one rename are one edit, not a way through the file.
    assert travel([Change(9, "f(count)\n", "f(total)\n"), Change(2, "g(count)\n", "g(total)\n")]) == 0


def test_what_a_person_moving_down_has_passed_is_not_proposed() -> None:
    text = "old_call(1)\nkeep = 0\nnew_call(1)\nkeep = 1\nold_call(1)\nkeep = 2\nold_call(1)\n"
    lines = lines_of(text)
    first = EditRecord("m.py", 2, "old_call(1)\n", "new_call(1)\n")
    # Alone, the change's twins above and below are both offered, nearest first.
    assert [p.start_line for p in pattern_proposals(lines, [first])] == [4, 0, 6]
    # After an edit above it, the person is moving down: line 0 was passed and left as it is.
    earlier = EditRecord("m.py", 1, "keep = 9\n", "keep = 0\n")
    assert [p.start_line for p in pattern_proposals(lines, [earlier, first])] == [4, 6]
    # Moving up, the lines below were passed.
    later = EditRecord("m.py", 5, "keep = 9\n", "keep = 2\n")
    assert [p.start_line for p in pattern_proposals(lines, [later, first])] == [0]


def test_a_line_wrapped_over_several_wraps_its_twin_at_the_twins_indentation() -> None:
    wrapped = '    headers = {\n        "Target": "Delete",\n        "Type": "json",\n    }\n'
    text = wrapped + 'def other():\n        headers = {"Target": "Delete", "Type": "json"}\n'
    change = Change(0, '    headers = {"Target": "Delete", "Type": "json"}\n', wrapped)
    edits = pattern_edits(lines_of(text), change, "m.py")
    assert [(e.start_line, e.end_line, e.new_text, e.kind) for e in edits] == [
        (5, 6, '        headers = {\n            "Target": "Delete",\n            "Type": "json",\n        }\n',
         SAME_LINE)]
    # What a rewrite adds around one line is that place's own.
    guarded = "    try:\n        run_all()\n    except OSError:\n        pass\n"
    assert pattern_edits(lines_of(guarded + "        run_all()\n"), Change(0, "    run_all()\n", guarded),
                         "m.py") == []
    # New lines left of the old line's indentation can't be placed at another indentation.
    dedented = "    if ready:\nstart()\n"
    assert pattern_edits(lines_of(dedented + "        if ready: start()\n"),
                         Change(0, "    if ready: start()\n", dedented), "m.py") == []


def test_an_inserted_run_is_repeated_where_the_same_words_surround_it_on_a_line_of_the_same_kind() -> None:
    text = ("    def image(self, request: Fixture):\n        return request\n"
            "    def part(self, request):\n        return part(request)\n"
            "    def done(self, request: Other):\n")
    change = Change(0, "    def image(self, request):\n", "    def image(self, request: Fixture):\n")
    edits = pattern_edits(lines_of(text), change, "m.py")
    # Not `part(request)` (another first word), not a parameter already annotated.
    assert [(e.start_line, e.new_text, e.kind) for e in edits] == [
        (2, "    def part(self, request: Fixture):\n", INSERTION)]
    assert edits[0].calibration_key == "insertion:near"
    # Two words or symbols on each side must match (fewer at the line's end): `-> None`
    # after `()` and before the colon of a `def`, not after `x)`.
    text = "def a() -> None:\n    pass\ndef b():\n    pass\ndef c(x):\n    pass\n"
    edits = pattern_edits(lines_of(text), Change(0, "def a():\n", "def a() -> None:\n"), "m.py")
    assert [(e.start_line, e.new_text) for e in edits] == [(2, "def b() -> None:\n")]


def test_a_change_of_several_lines_that_made_one_rewrite_on_each_is_that_rewrite() -> None:
    # A commit's hunk (git joins changes up to six lines apart) gave two tests `-> None`.
    text = ("def test_a() -> None:\n    assert a\n\n\ndef test_b() -> None:\n    assert b\n\n\n"
            "def test_c():\n    assert c\n")
    change = Change(0, "def test_a():\n    assert a\n\n\ndef test_b():\n",
                    "def test_a() -> None:\n    assert a\n\n\ndef test_b() -> None:\n")
    edits = pattern_edits(lines_of(text), change, "m.py")
    assert [(e.start_line, e.new_text, e.kind) for e in edits] == [(8, "def test_c() -> None:\n", INSERTION)]
    # Two lines, two different rewrites: neither is the change.
    text = "x = a.get(k)\ny = b.get(k)\nz = c[k]\n"
    assert pattern_edits(lines_of(text), Change(0, "x = a[k]\ny = b.get(k, 0)\n", "x = a.get(k)\ny = b.get(k)\n"),
                         "m.py") == []
    # The same substitution on both lines is one.
    text = "if a is None:\n    pass\nif b is None:\n    pass\nif c == None:\n    pass\n"
    change = Change(0, "if a == None:\n    pass\nif b == None:\n", "if a is None:\n    pass\nif b is None:\n")
    assert [(e.start_line, e.new_text, e.kind) for e in pattern_edits(lines_of(text), change, "m.py")] == [
        (4, "if c is None:\n", SUBSTITUTION)]


def test_edits_a_few_lines_apart_are_one_when_changes_come_as_git_hunks() -> None:
    text = ("def a() -> None:\n    pass\ndef b():\n    pass\n\ndef c():\n    pass\n"
            "\n\n\n\n\n\n\ndef d():\n    pass\n")
    change = Change(0, "def a():\n", "def a() -> None:\n")
    assert [(e.start_line, e.end_line) for e in pattern_edits(lines_of(text), change, "m.py")] == [
        (2, 3), (5, 6), (14, 15)]
    joined = pattern_edits(lines_of(text), change, "m.py", joined_within=6)
    # `def d` is 7 lines past `def c`: git would cut another hunk there.
    assert [(e.start_line, e.end_line) for e in joined] == [(2, 6), (14, 15)]
    assert joined[0].new_text == "def b() -> None:\n    pass\n\ndef c() -> None:\n"
    # Never across the lines just edited: above and below them are two hunks.
    text = "def b():\n    pass\ndef a() -> None:\n    pass\ndef c():\n"
    edits = pattern_edits(lines_of(text), Change(2, "def a():\n", "def a() -> None:\n"), "m.py", joined_within=6)
    assert sorted((e.start_line, e.end_line) for e in edits) == [(0, 1), (4, 5)]
    # Through the history: the newest change says how it was sent.
    record = EditRecord("m.py", 0, "def a():\n", "def a() -> None:\n", context_lines=3)
    lines = lines_of("def a() -> None:\n    pass\ndef b():\n    pass\n\ndef c():\n    pass\n")
    assert [(e.start_line, e.end_line) for e in pattern_proposals(lines, [record])] == [(2, 6)]


def test_an_insertion_at_the_edge_of_a_line_or_beside_a_replaced_run_is_not_repeated() -> None:
    text = "x = 1  # noqa\ny = 2\n"
    assert pattern_edits(lines_of(text), Change(0, "x = 1\n", "x = 1  # noqa\n"), "m.py") == []
    text = "x = g(a, b)\ny = f(a)\n"  # `f(a` replaced: not an insertion (typed, the line next to it: the same change)
    assert [e.kind for e in pattern_edits(lines_of(text), Change(0, "x = f(a)\n", "x = g(a, b)\n"), "m.py")] == [
        SUBSTITUTION]
    assert [e.kind for e in pattern_edits(lines_of(text), Change(0, "x = f(a)\n", "x = g(a, b)\n"), "m.py", (),
                                          -1)] == [REPEATED_LINE]
    text = "x = g(a, b)\n\ny = f(a)\n"  # apart: the substitution's
    assert [e.kind for e in pattern_edits(lines_of(text), Change(0, "x = f(a)\n", "x = g(a, b)\n"), "m.py")] == [
        SUBSTITUTION]


def test_the_change_before_a_small_fix_still_offers_its_twin_lines() -> None:
    text = ("    size = width(box) * 2\n"  # rewritten from `+ 1`
            "# a comment fixed\n"  # the newest change: nothing to repeat
            "    size = width(box) + 1\n")
    history = [EditRecord("m.py", 0, "    size = width(box) + 1\n", "    size = width(box) * 2\n"),
               EditRecord("m.py", 1, "# a coment fixed\n", "# a comment fixed\n")]
    assert [(p.start_line, p.new_text, p.kind) for p in pattern_proposals(lines_of(text), history)] == [
        (2, "    size = width(box) * 2\n", SAME_LINE)]
    # Only twin lines: the change before's rename is not carried on.
    renamed = [EditRecord("m.py", 0, "total = 1\n", "amount = 1\n"), EditRecord("m.py", 1, "# coment\n", "# comment\n")]
    assert pattern_proposals(lines_of("amount = 1\n# comment\nprint(total)\n"), renamed) == []


def test_the_change_before_the_newest_is_found_where_its_lines_are_now() -> None:
    first = Change(4, "x = 1\n", "x = 2\n")
    # Two lines inserted above it since: it is now on line 6.
    assert previous_change([first, Change(0, "", "a\nb\n")]) == Change(6, "x = 1\n", "x = 2\n")
    # A change below it leaves it where it was; one that rewrote it leaves nothing to repeat.
    assert previous_change([first, Change(9, "y\n", "z\n")]) == first
    assert previous_change([first, Change(4, "x = 2\n", "x = 3\n\n")]) is None
    assert previous_change([first]) is None


def test_a_line_too_long_to_be_code_is_left_to_itself() -> None:
    long_line = "y = b == None; " * (LONGEST_LINE // 10) + "\n"
    edits = pattern_edits(["x = a is None\n", long_line, "z = c == None\n"],
                          Change(0, "x = a == None\n", "x = a is None\n"), "m.py")
    assert [(e.start_line, e.new_text) for e in edits] == [(2, "z = c is None\n")]


def test_a_change_that_repeats_the_one_before_it_is_told_apart() -> None:
    first = Change(2, "    x = fetch(url)\n", "    x = fetch(url, timeout=5)\n")
    same = Change(5, "  y = fetch(url)  \n", "  y = fetch(url, timeout=5)  \n")  # its own indentation
    other = Change(5, "  y = fetch(url)\n", "  y = fetch(url, retries=2)\n")
    assert repeats_previous([first, same])
    assert not repeats_previous([first, other])
    assert not repeats_previous([same])  # nothing before it
    # keystrokes on one line are one change, both for the newest and the one before
    typed = [Change(5, "  y = fetch(url)\n", "  y = fetch(url, t)\n"),
             Change(5, "  y = fetch(url, t)\n", "  y = fetch(url, timeout=5)\n")]
    assert repeats_previous([first, *typed])
    assert not repeats_previous(typed)


def test_repeating_a_change_puts_its_proposals_in_buckets_of_their_own_except_a_rename_s() -> None:
    text = "a = fetch(url, timeout=5)\nb = fetch(other)\nc = fetch(third)\n"
    history = [EditRecord("m.py", 0, "a = fetch(url)\n", "a = fetch(url, timeout=5)\n")]
    once = pattern_proposals(lines_of(text), history)
    # Typed, each call is an edit of its own; as a diff's hunk, both calls are one.
    assert [(e.start_line, e.calibration_key) for e in once] == [(1, "call_site:near"), (2, "call_site:near")]
    as_hunk = [replace(history[0], whole_lines=True)]
    assert [(e.start_line, e.end_line) for e in pattern_proposals(lines_of(text), as_hunk)] == [(1, 3)]
    text = "a = fetch(url, timeout=5)\nb = fetch(other, timeout=5)\nc = fetch(third)\n"
    history.append(EditRecord("m.py", 1, "b = fetch(other)\n", "b = fetch(other, timeout=5)\n"))
    again = pattern_proposals(lines_of(text), history)
    assert [(e.start_line, e.calibration_key) for e in again] == [(2, "call_site:near:again")]
    text = "def f(n):\n    a = n + 1\n    b = count * 2\n    return count\n"
    history = [EditRecord("m.py", 0, "def f(count):\n", "def f(n):\n"),
               EditRecord("m.py", 1, "    a = count + 1\n", "    a = n + 1\n")]
    assert {e.calibration_key for e in pattern_proposals(lines_of(text), history)} == {"rename:near"}


def test_an_argument_added_at_a_call_goes_to_the_other_calls_not_to_the_definition() -> None:
    text = 'def fetch(url, retries=3):\n    return url\n\na = fetch("a", retries=5)\nb = fetch("b")\n'
    history = [EditRecord("m.py", 3, 'a = fetch("a")\n', 'a = fetch("a", retries=5)\n')]
    proposals = pattern_proposals(lines_of(text), history)
    assert [(e.start_line, e.new_text) for e in proposals] == [(4, 'b = fetch("b", retries=5)\n')]
