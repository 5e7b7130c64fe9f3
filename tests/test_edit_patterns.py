"""Edit patterns: the newest change carried to the places it applies again."""

from model.next_edit.edit_patterns import (
    CALL_SITE,
    INSERTION,
    LONGEST_LINE,
    RENAME,
    SAME_LINE,
    SUBSTITUTION,
    Change,
    net_change,
    pattern_edits,
    previous_change,
    travel,
)
from model.next_edit.editor import EditRecord, pattern_proposals


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


FUNCTION = '''def total(amount, rate):
    """Sum of value and rate."""
    scaled = value * rate  # value, before tax
    label = "value"
    return self.value + value


def other(value):
    return value
'''


def test_a_renamed_parameter_is_carried_through_its_function_only() -> None:
    change = Change(0, "def total(value, rate):\n", "def total(amount, rate):\n")
    edits = pattern_edits(lines_of(FUNCTION), change, "m.py")
    # Strings, comments, attributes and the docstring keep the old word; `other`'s own
    # `value` is untouched.
    assert [(e.start_line, e.end_line, e.new_text, e.kind) for e in edits] == [
        (2, 3, "    scaled = amount * rate  # value, before tax\n", RENAME),
        (4, 5, "    return self.value + amount\n", RENAME),
    ]
    assert edits[0].lines_away == 2 and edits[0].calibration_key == "rename:near"


def test_a_run_of_consecutive_lines_is_one_edit() -> None:
    text = "def f(n):\n    a = count + 1\n    b = count * 2\n    return a + b\n"
    edits = pattern_edits(lines_of(text), Change(0, "def f(count):\n", "def f(n):\n"), "m.py")
    assert [(e.start_line, e.end_line, e.new_text) for e in edits] == [
        (1, 3, "    a = n + 1\n    b = n * 2\n")]


def test_a_renamed_function_is_carried_to_its_callers_anywhere_in_the_file() -> None:
    text = "def load(path):\n    return open(path)\n\n\nx = load('a')\n\n\ny = load('b')\n"
    change = Change(0, "def fetch(path):\n", "def load(path):\n")
    text = text.replace("load(", "fetch(").replace("def fetch", "def load", 1)
    edits = pattern_edits(lines_of(text), change, "m.py")
    assert [(e.start_line, e.new_text) for e in edits] == [(4, "x = load('a')\n"), (7, "y = load('b')\n")]


def test_a_changed_annotation_or_builtin_is_not_a_rename() -> None:
    text = "def f(items: Sequence[int]) -> list:\n    return list(items)\n"
    change = Change(0, "def f(items: list[int]) -> list:\n", "def f(items: Sequence[int]) -> list:\n")
    assert pattern_edits(lines_of(text), change, "m.py") == []
    local = "x = 1\nresult = str(x)\nprint(str(x))\n"
    assert pattern_edits(lines_of(local), Change(1, "result = repr(x)\n", "result = str(x)\n"), "m.py") == []


def test_an_argument_added_to_one_call_is_offered_at_the_next_call() -> None:
    text = "a = fetch(url, timeout=5)\nb = fetch(other)\nc = fetch(third, timeout=5)\nd = fetchall(x)\n"
    change = Change(0, "a = fetch(url)\n", "a = fetch(url, timeout=5)\n")
    edits = pattern_edits(lines_of(text), change, "m.py")
    assert [(e.start_line, e.new_text, e.kind) for e in edits] == [(1, "b = fetch(other, timeout=5)\n", CALL_SITE)]


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


def test_a_renamed_variable_keeps_the_keywords_it_is_passed_as() -> None:
    text = ('def save(data):\n    target = pick()\n    write(data, target=path, mode="w")\n'
            '    log(\n        level=1, path=path,\n    )\n    return path\n')
    before = "    path = pick()\n"
    edits = pattern_edits(lines_of(text), Change(1, before, "    target = pick()\n"), "m.py")
    assert [(e.start_line, e.end_line, e.new_text) for e in edits] == [
        (2, 3, '    write(data, target=target, mode="w")\n'),
        (4, 5, "        level=1, path=target,\n"),
        (6, 7, "    return target\n"),
    ]


def test_a_keyword_renamed_at_one_call_is_renamed_at_the_others_but_not_as_a_variable() -> None:
    text = "connect(host, wait=timeout)\nconnect(other, timeout=timeout)\ntimeout = 3\n"
    edits = pattern_edits(lines_of(text), Change(0, "connect(host, timeout=timeout)\n", text.split("\n")[0] + "\n"),
                          "m.py")
    assert [(e.start_line, e.new_text) for e in edits] == [(1, "connect(other, wait=timeout)\n")]


def test_the_other_uses_on_the_edited_line_are_renamed_too() -> None:
    text = "def f(items):\n    first = stack if stack else items\n    return stack\n"
    edits = pattern_edits(lines_of(text), Change(1, "    first = stack if stack else items\n",
                                                 "    first = queue if stack else items\n"), "m.py")
    assert [(e.start_line, e.end_line, e.new_text) for e in edits] == [
        (1, 3, "    first = queue if queue else items\n    return queue\n")]


def test_a_rename_in_one_function_is_not_copied_to_the_same_line_in_another() -> None:
    text = ("def add(self, other):\n    result = minus(self, other)\n    return result\n\n\n"
            "def sub(self, other):\n    result = minus(self, other)\n    return result\n")
    change = Change(6, "    result = minus(self, other)\n", "    total = minus(self, other)\n")
    lines = lines_of(text)
    lines[6] = change.new_text
    edits = pattern_edits(lines, change, "m.py")
    # `add`'s twin of the edited line is another function's `result`.
    assert [(e.start_line, e.new_text, e.kind) for e in edits] == [(7, "    return total\n", RENAME)]


def test_strings_are_read_across_lines_when_a_quote_holds_triple_quotes() -> None:
    text = ('QUOTE = \'"""\'\n\n\ndef f(name):\n    """Greets\n    who is named."""\n'
            '    return "hi who" + who  # who\n')
    lines = lines_of(text)
    edits = pattern_edits(lines, Change(3, "def f(who):\n", "def f(name):\n"), "m.py")
    # Before, `'"""'` opened a docstring that ran to the end of the file and hid every use;
    # the docstring's closing line is prose up to its quotes.
    assert [(e.start_line, e.new_text) for e in edits] == [(6, '    return "hi who" + name  # who\n')]


def test_a_parameter_named_like_its_function_leaves_the_function_name_alone() -> None:
    text = "def limit(self, bound: int) -> None:\n    self._limit = limit\n"
    lines = lines_of(text)
    edits = pattern_edits(lines, Change(0, "def limit(self, limit: int) -> None:\n", lines[0]), "m.py")
    assert [(e.start_line, e.new_text) for e in edits] == [(1, "    self._limit = bound\n")]


def test_a_multi_line_string_at_the_left_margin_does_not_end_the_function() -> None:
    text = 'def test():\n    expected = """a = 1\nb = 2\n"""\n    assert parse(content)\n\n\ncontent = 3\n'
    lines = lines_of(text)
    edits = pattern_edits(lines, Change(1, '    content = """a = 1\n', lines[1]), "m.py")
    # The function goes on after `b = 2` and the closing quotes; the module's `content` is another name.
    assert [(e.start_line, e.new_text) for e in edits] == [(4, "    assert parse(expected)\n")]


def test_the_replacement_fields_of_an_f_string_are_renamed_and_its_text_is_not() -> None:
    text = 'def show(count):\n    return f"{count} items, count={count!r:>{width}} {{count}}" + "{total}"\n'
    lines = lines_of(text)
    edits = pattern_edits(lines, Change(0, "def show(total):\n", lines[0]), "m.py")
    assert edits == []  # `total` appears only in a plain string
    lines = lines_of(text.replace("count", "total").replace("def show(total)", "def show(count)"))
    edits = pattern_edits(lines, Change(0, "def show(total):\n", "def show(count):\n"), "m.py")
    assert [e.new_text for e in edits] == [
        '    return f"{count} items, total={count!r:>{width}} {{total}}" + "{total}"\n']


def test_a_local_of_a_function_whose_header_is_split_over_lines_stays_in_that_function() -> None:
    text = ("def check(\n    value: int,\n    memo: dict,\n) -> None:\n    found = set(value)\n"
            "    return found & keys\n\n\nkeys = {1}\n")
    lines = lines_of(text)
    edits = pattern_edits(lines, Change(4, "    keys = set(value)\n", lines[4]), "m.py")
    assert [(e.start_line, e.new_text, e.calibration_key) for e in edits] == [
        (5, "    return found & found\n", "rename:near")]


def test_a_rename_reaches_the_end_of_its_function_as_near_and_beyond_it_as_far() -> None:
    text = "def run():\n    total = 0\n" + "    step()\n" * 40 + "    return count\n"
    inside = pattern_edits(lines_of(text), Change(1, "    count = 0\n", "    total = 0\n"), "m.py")
    # The use 41 lines below is in the same function: still "near".
    assert [(e.start_line, e.calibration_key) for e in inside] == [(42, "rename:near")]
    module = "total = 0\n" + "y = 2\n" * 40 + "print(count)\n"
    outside = pattern_edits(lines_of(module), Change(0, "count = 0\n", "total = 0\n"), "m.py")
    assert [(e.start_line, e.calibration_key) for e in outside] == [(41, "rename:far")]


def test_a_name_the_function_binds_stays_in_it_and_a_global_one_goes_file_wide() -> None:
    text = ("def first(node):\n    visit(tree)\n    return tree\n\n\n"
            "def second(node):\n    visit(node)\n")
    lines = lines_of(text)
    # `node` is `first`'s parameter, renamed at a use: its header (above), never `second`'s
    # call (not an argument change of `visit` either).
    edits = pattern_edits(lines, Change(1, "    visit(node)\n", lines[1]), "m.py")
    assert [(e.start_line, e.new_text, e.calibration_key) for e in edits] == [
        (0, "def first(tree):\n", "rename:near")]
    # `visit` is bound nowhere in `first`: a global, renamed in `second` too.
    text = "def first(node):\n    walk(node)\n\n\ndef second(node):\n    visit(node)\n"
    edits = pattern_edits(lines_of(text), Change(1, "    visit(node)\n", "    walk(node)\n"), "m.py")
    assert [(e.start_line, e.new_text, e.kind) for e in edits] == [(5, "    walk(node)\n", RENAME)]


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


def test_a_name_replaced_by_a_constant_is_a_value_changed_not_a_rename() -> None:
    text = "def eq(a, b):\n    c = cmp(a, b)\n    if c:\n        return None\n    return c == 0\n\n\n" \
           "def ne(a, b):\n    c = cmp(a, b)\n    if c:\n        return c\n    return c != 0\n"
    lines = lines_of(text)
    edits = pattern_edits(lines, Change(3, "        return c\n", "        return None\n"), "m.py")
    # `c` is not renamed to `None` in `return c == 0`; the line's twin changes like it.
    assert [(e.start_line, e.new_text, e.kind) for e in edits] == [(10, "        return None\n", SAME_LINE)]


def test_a_parameter_renamed_after_an_edit_below_is_still_carried_to_its_uses_below() -> None:
    # Typed on line 2 first, then up to rename the parameter: its use below is still to do.
    lines = lines_of("def add(first, b):\n    return a + 1\n")
    typed = EditRecord("m.py", 1, "    return a\n", "    return a + 1\n")
    renamed = EditRecord("m.py", 0, "def add(a, b):\n", "def add(first, b):\n")
    assert [(p.start_line, p.new_text) for p in pattern_proposals(lines, [typed, renamed])] == [
        (1, "    return first + 1\n")]


def _class_with_far_methods(name: str) -> str:
    filler = "".join(f"        step_{i} = {i}\n" for i in range(40))  # methods far apart
    return (f"class Reader:\n    def __init__(self, source):\n        self.{name} = source\n\n"
            f"    def read(self):\n{filler}        return self.{name}.read()\n\n"
            f"    def close(self):\n{filler}        self.{name}.close()\n\n\n"
            f"class Writer:\n    def close(self):\n        self.{name}.flush()\n")


def test_an_attribute_the_class_sets_is_renamed_through_that_class_however_far() -> None:
    lines = lines_of(_class_with_far_methods("stream").replace("self.stream = source", "self.handle = source"))
    change = Change(2, "        self.stream = source\n", "        self.handle = source\n")
    edits = pattern_edits(lines, change, "m.py")
    assert [(e.new_text.strip(), e.calibration_key) for e in edits] == [
        ("return self.handle.read()", "rename:near"), ("self.handle.close()", "rename:near")]
    # Another class's attribute of the same name is its own: `Writer` is left alone.
    assert all(lines[e.start_line].strip() != "self.stream.flush()" for e in edits)
    # Through another receiver it may be another class's attribute: as far as it is.
    lines[-6] = "        other.stream.close()\n"
    assert [(e.new_text.strip(), e.calibration_key) for e in pattern_edits(lines, change, "m.py")] == [
        ("return self.handle.read()", "rename:near"), ("other.handle.close()", "rename:far")]


def test_a_method_switched_at_one_call_is_not_carried_through_the_class() -> None:
    text = ("class T(TestCase):\n    def test_a(self):\n        self.assertListEqual(a, [1])\n"
            + "".join(f"        x{i} = {i}\n" for i in range(40)) + "        self.assertEqual(b, 2)\n")
    change = Change(2, "        self.assertEqual(a, [1])\n", "        self.assertListEqual(a, [1])\n")
    edits = pattern_edits(lines_of(text), change, "m.py")
    assert [e.calibration_key for e in edits] == ["rename:far"]  # offered, at the confidence of a far rename


SERVICE = ("class Service:\n    def open(self, url):\n        return url\n\n    def run(self):\n"
           + "".join(f"        step_{i} = {i}\n" for i in range(40))
           + "        return self.connect('a'), super().connect('b')\n\n\n"
           "def main(service):\n    return service.connect('c')\n\n\ndef connect():\n    pass\n")


def test_a_method_renamed_in_its_def_is_renamed_at_its_calls_through_any_object() -> None:
    change = Change(1, "    def connect(self, url):\n", "    def open(self, url):\n")
    edits = pattern_edits(lines_of(SERVICE), change, "m.py")
    # The module-level function of the same name is another thing, and keeps its name.
    assert [(e.new_text.strip(), e.calibration_key) for e in edits] == [
        ("return self.open('a'), super().open('b')", "rename:near"), ("return service.open('c')", "rename:far")]


def test_a_method_renamed_at_a_call_through_self_is_renamed_in_its_def() -> None:
    text = SERVICE.replace("def open", "def connect").replace("self.connect('a')", "self.open('a')")
    change = Change(45, "        return self.connect('a'), super().connect('b')\n",
                    "        return self.open('a'), super().connect('b')\n")
    edits = pattern_edits(lines_of(text), change, "m.py")
    assert [(e.new_text.strip(), e.calibration_key) for e in edits] == [
        ("return self.open('a'), super().open('b')", "rename:near"), ("return service.open('c')", "rename:near"),
        ("def open(self, url):", "rename:near")]
    # A call switched to another method the class defines renames no `def`: the dotted
    # rename as before, each use as near as it is.
    switched = text.replace("    def run(self):", "    def close(self):\n        pass\n\n    def run(self):")
    switched = switched.replace("self.open('a')", "self.close('a')")
    change = Change(48, "        return self.connect('a'), super().connect('b')\n",
                    "        return self.close('a'), super().connect('b')\n")
    assert lines_of(switched)[48] == change.new_text
    assert [(e.new_text.strip(), e.calibration_key) for e in pattern_edits(lines_of(switched), change, "m.py")] == [
        ("return self.close('a'), super().close('b')", "rename:near"), ("return service.close('c')", "rename:near")]


TYPED = '''from typing import Dict, List, Optional


def load(path: str) -> Dict[str, List[int]]:
    """Returns Dict[str, List[int]]."""
    cache: Optional[Dict[str, int]] = None  # a List[int] per key
    return read(path)


def save(data: Dict[str, List[int]], where: Optional["Path"]) -> None:
    pass
'''


def test_typing_aliases_dropped_from_the_import_are_written_as_builtins_below() -> None:
    from model.next_edit.edit_patterns import BUILTIN_GENERIC

    lines = lines_of(TYPED.replace("from typing import Dict, List, Optional", "from typing import Optional"))
    change = Change(0, "from typing import Dict, List, Optional\n", "from typing import Optional\n")
    edits = pattern_edits(lines, change, "m.py")
    # Strings and comments keep their words; `Optional` is still imported, so it stays.
    assert [(e.new_text.strip(), e.kind) for e in edits] == [
        ("def load(path: str) -> dict[str, list[int]]:", BUILTIN_GENERIC),
        ("cache: Optional[dict[str, int]] = None  # a List[int] per key", BUILTIN_GENERIC),
        ('def save(data: dict[str, list[int]], where: Optional["Path"]) -> None:', BUILTIN_GENERIC)]
    assert pattern_edits(lines, change, "m.js") == []  # Python's typing only


def test_optional_written_as_a_union_with_none_brings_the_builtins_too() -> None:
    lines = lines_of(TYPED.replace("cache: Optional[Dict[str, int]]", "cache: dict[str, int] | None"))
    change = Change(5, "    cache: Optional[Dict[str, int]] = None  # a List[int] per key\n",
                    "    cache: dict[str, int] | None = None  # a List[int] per key\n")
    edits = pattern_edits(lines, change, "m.py")
    # A string forward reference stays in `Optional[...]`: `"Path" | None` fails at runtime.
    assert [e.new_text.strip() for e in edits] == [
        "def load(path: str) -> dict[str, list[int]]:",
        'def save(data: dict[str, list[int]], where: Optional["Path"]) -> None:']


def test_unions_nest_and_a_plain_edit_is_no_modernisation() -> None:
    from model.next_edit.edit_patterns.builtin_generics import _modernised

    names = {"Optional", "Union", "List", "Tuple"}
    assert _modernised("x: Optional[Union[int, List[Tuple[int, str]]]] = None", names) == \
        "x: int | list[tuple[int, str]] | None = None"
    assert _modernised("y: t.Optional[Callable[..., int]]", names) == "y: Callable[..., int] | None"
    text = "from typing import List\nx: List[int] = []\ny: List[int] = [1]\n"
    assert pattern_edits(lines_of(text), Change(1, "x: List[int] = [0]\n", "x: List[int] = []\n"), "m.py") == []


def test_a_use_switched_to_another_variable_of_the_function_is_not_a_rename() -> None:
    text = "def process(data):\n    cleaned = clean(data)\n    save(cleaned)\n    return len(data)\n"
    change = Change(2, "    save(data)\n", "    save(cleaned)\n")
    assert [e for e in pattern_edits(lines_of(text), change, "m.py") if e.kind == RENAME] == []
    # A rename half done binds only the new name: it goes on.
    text = "def process(items):\n    cleaned = clean(items)\n    save(cleaned)\n    return len(data)\n"
    change = Change(1, "    cleaned = clean(data)\n", "    cleaned = clean(items)\n")
    assert [(e.new_text, e.kind) for e in pattern_edits(lines_of(text), change, "m.py")] == [
        ("    return len(items)\n", RENAME)]


def test_a_rename_in_steps_goes_on_when_the_old_name_is_still_bound_further_down() -> None:
    text = ("def count(items):\n    total = 0\n    for item in items:\n        total += 1\n"
            "    n -= 1\n    return n\n")
    change = Change(3, "        n += 1\n", "        total += 1\n")
    # Both names are bound apart from the edited line; without more, a switch of variables.
    assert [e for e in pattern_edits(lines_of(text), change, "m.py") if e.kind == RENAME] == []
    # But `total = 0` was `n = 0` a step ago: a rename in steps, which goes on.
    earlier = [Change(1, "    n = 0\n", "    total = 0\n")]
    assert [e.new_text for e in pattern_edits(lines_of(text), change, "m.py", earlier)] == [
        "    total -= 1\n    return total\n"]


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


def test_an_insertion_at_the_edge_of_a_line_or_beside_a_replaced_run_is_not_repeated() -> None:
    text = "x = 1  # noqa\ny = 2\n"
    assert pattern_edits(lines_of(text), Change(0, "x = 1\n", "x = 1  # noqa\n"), "m.py") == []
    text = "x = g(a, b)\ny = f(a)\n"  # `f(a` replaced: the substitution's, not an insertion
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


def test_a_word_changed_inside_a_string_or_comment_renames_nothing() -> None:
    # Replayed werkzeug commit: the header's name in a string was capitalised; renaming
    # the variable `etag` to `ETag` below was the pattern's wrong answer.
    text = ('def check(headers):\n    etag = headers.get("ETag")\n    if etag:\n        return etag\n'
            '    return None  # no etag\n')
    string_change = Change(1, '    etag = headers.get("etag")\n', '    etag = headers.get("ETag")\n')
    assert [e for e in pattern_edits(lines_of(text), string_change, "m.py") if e.kind == RENAME] == []
    commented = text.replace("# no etag", "# no tag")
    comment_change = Change(4, "    return None  # no etag\n", "    return None  # no tag\n")
    assert [e for e in pattern_edits(lines_of(commented), comment_change, "m.py") if e.kind == RENAME] == []
    # The same word renamed in code is carried as before.
    code = text.replace("    etag = headers", "    tag = headers")
    code_change = Change(1, '    etag = headers.get("ETag")\n', '    tag = headers.get("ETag")\n')
    renamed = [e for e in pattern_edits(lines_of(code), code_change, "m.py") if e.kind == RENAME]
    assert [e.new_text for e in renamed] == ["    if tag:\n        return tag\n"]
