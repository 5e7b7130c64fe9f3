"""`redraft bench rename`: a name renamed by hand, keystroke by keystroke, through the real server."""

import sys
from pathlib import Path

from benchmarks.rename import (
    CHAIN_DONE,
    RenameCase,
    format_rename,
    is_part_of_the_rename,
    rename_cases,
    run_rename_bench,
)

SERVER = [sys.executable, "-m", "lsp_server", "serve"]

MODULE = '''def send(message, retries):
    """Send a message."""
    payload = encode(message)  # the message, encoded
    for attempt in range(retries):
        if post(url="/x", message=payload):
            return attempt
    raise SendError(message)
'''


def test_cases_are_a_functions_names_used_twice_with_their_uses_in_order(tmp_path: Path) -> None:
    (tmp_path / "send.py").write_text(MODULE)
    (tmp_path / "broken.py").write_text("def (:\n")
    cases, parsed = rename_cases(sorted(tmp_path.glob("*.py")), 10, seed=0)
    assert parsed == 1
    uses = {case.name: case.uses for case in cases}
    # `message=` in the call is a keyword, not a use; `range` is a builtin; `attempt` twice.
    assert uses == {"message": ((0, 9), (2, 21), (6, 20)), "retries": ((0, 18), (3, 25)),
                    "payload": ((2, 4), (4, 34)), "attempt": ((3, 8), (5, 19))}
    assert all(case.new_name != case.name and case.name in case.new_name for case in cases)


def test_a_nested_function_s_own_variable_is_not_a_use_of_the_outer_one(tmp_path: Path) -> None:
    (tmp_path / "nested.py").write_text(
        "def outer(key, total):\n    def quoted(key):\n        return key\n\n    def add():\n"
        "        nonlocal total\n        total = key\n\n    pick = lambda key: key\n    return quoted(key), total\n\n\n"
        "def later(key):\n    def ready():\n        nonlocal task\n        if key:\n            task = key\n"
        "    task = None\n    return ready\n")
    cases, _ = rename_cases([tmp_path / "nested.py"], 20, seed=0)
    uses = {(case.name, case.uses[0]): case.uses for case in cases}
    # `quoted`'s parameter and the lambda's are their own; `add` reads `key` and declares `total`.
    assert uses[("key", (0, 10))] == ((0, 10), (6, 16), (9, 18))
    assert uses[("total", (0, 15))] == ((0, 15), (5, 17), (6, 8), (9, 24))
    assert uses[("key", (1, 15))] == ((1, 15), (2, 15))
    # `ready` declares a name and only reads `key`: `later`'s, not a name of its own.
    assert uses[("key", (12, 10))] == ((12, 10), (15, 11), (16, 19))
    assert not [case for case in cases if case.uses[0] == (15, 11)]


def test_a_name_an_except_clause_binds_is_used_there(tmp_path: Path) -> None:
    (tmp_path / "handled.py").write_text(
        "def load(path):\n    error = None\n    try:\n        return open(path)\n    except OSError as error:\n"
        "        log(error)\n    return error\n")
    cases, _ = rename_cases([tmp_path / "handled.py"], 20, seed=0)
    assert {case.name: case.uses for case in cases}["error"] == ((1, 4), (4, 22), (5, 12), (6, 11))


def test_renames_typed_through_the_server_are_carried_to_the_next_use(tmp_path: Path) -> None:
    (tmp_path / "send.py").write_text(MODULE)
    report = run_rename_bench(tmp_path, 10, SERVER)
    assert report.files == 1 and len(report.outcomes) == 4
    # The rename pattern needs no network: every case is answered, and rightly.
    assert all(o.shown and o.right for o in report.outcomes)
    # Accepting one proposal after another renames every use, and nothing else.
    assert all(o.chain == CHAIN_DONE for o in report.outcomes)
    assert "right among shown 100.0%" in format_rename(report, 0.5)


def test_a_keyword_renamed_with_the_variable_is_a_wrong_edit() -> None:
    case = RenameCase(Path("m.py"), "def f(path):\n    g(path=path)\n", "path", ((0, 6), (1, 11)), "target")
    assert is_part_of_the_rename("def f(target):\n    g(path=target)\n", case)
    assert is_part_of_the_rename("def f(target):\n    g(path=path)\n", case)
    assert not is_part_of_the_rename("def f(target):\n    g(target=target)\n", case)


def test_a_rename_typed_at_a_later_use_is_carried_to_the_uses_above(tmp_path: Path) -> None:
    (tmp_path / "send.py").write_text(MODULE)
    cases, _ = rename_cases([tmp_path / "send.py"], 10, seed=3, anywhere=True)
    assert all(0 <= case.typed < len(case.uses) for case in cases)
    assert any(case.typed > 0 for case in cases)
    report = run_rename_bench(tmp_path, 10, SERVER, seed=3, anywhere=True)
    # Uses above the typed one are measured on release diffs replayed bottom-up and shown.
    assert all(o.shown and o.right and o.chain == CHAIN_DONE for o in report.outcomes)
    assert "typed at a use drawn at random" in format_rename(report, 0.5)


CLASS = '''class Reader:
    def __init__(self, source):
        self.stream = source
        self.mode = "r"

    def read(self):
''' + "".join(f"        step_{i} = {i}\n" for i in range(40)) + '''        return self.stream.read(), "stream"

    def close(self):
        self.stream.close()
        print(self.name)

    class Inner:
        def close(self):
            self.stream = None
            self.stream.flush()
'''


def test_member_cases_are_what_a_class_sets_or_defines_with_its_uses_through_self(tmp_path: Path) -> None:
    (tmp_path / "reader.py").write_text(CLASS)
    cases, _ = rename_cases([tmp_path / "reader.py"], 10, seed=0, members=True)
    # `mode` is used once, `name` is never set, the string is not a use, `read` and `close`
    # are never called through `self.`; the nested class's `stream` is its own attribute.
    assert sorted((case.name, case.uses) for case in cases) == [
        ("stream", ((2, 13), (46, 20), (49, 13))), ("stream", ((54, 17), (55, 17)))]


def test_an_attribute_renamed_at_its_first_use_is_carried_through_its_class(tmp_path: Path) -> None:
    (tmp_path / "reader.py").write_text(CLASS)
    report = run_rename_bench(tmp_path, 10, SERVER, members=True)
    # The outer class's next use is 44 lines below, in another method: shown all the same,
    # and each chain renames every use of its class's attribute with no wrong edit on the way.
    assert len(report.outcomes) == 2 and all(o.shown and o.right and o.chain == CHAIN_DONE for o in report.outcomes)
    assert "2 member renames" in format_rename(report, 0.5)


SERVICE = '''class Service:
    def start(self):
        self._connect("db")
        return self

    def stop(self):
''' + "".join(f"        step_{i} = {i}\n" for i in range(40)) + '''        self._connect(None)

    def _connect(self, target):
        return target
'''


def test_a_method_renamed_at_a_call_is_renamed_at_its_def_and_its_other_calls(tmp_path: Path) -> None:
    (tmp_path / "service.py").write_text(SERVICE)
    cases, _ = rename_cases([tmp_path / "service.py"], 10, seed=0, members=True)
    assert [(case.name, case.uses) for case in cases] == [("_connect", ((2, 13), (46, 13), (48, 8)))]
    # Typed at the first call: the next call (44 lines down) and the `def` follow.
    report = run_rename_bench(tmp_path, 10, SERVER, members=True)
    assert [(o.shown, o.right, o.chain) for o in report.outcomes] == [(True, True, CHAIN_DONE)]


LOOPS = '''def pairs(mapping, limit):
    out = [v for v in mapping.values() if v]
    for k, v in mapping.items():
        if k in out:
            out.append(k)
    with open(limit) as f:
        f.read()
    for i in range(limit):
        print(i)
    return out
'''


def test_each_case_says_what_binds_its_name(tmp_path: Path) -> None:
    (tmp_path / "loops.py").write_text(LOOPS)
    cases, _ = rename_cases([tmp_path / "loops.py"], 20, seed=0)
    kinds = {(case.name, case.uses[0]): case.kind for case in cases}
    # One-letter names are renamed too; the comprehension's `v` is its own, the loop's another.
    assert kinds == {("mapping", (0, 10)): "parameter", ("limit", (0, 19)): "parameter",
                     ("out", (1, 4)): "assigned", ("v", (1, 11)): "comprehension variable",
                     ("k", (2, 8)): "tuple target", ("f", (5, 24)): "with/except target",
                     ("i", (7, 8)): "for target"}
    comprehension = next(case for case in cases if case.kind == "comprehension variable")
    assert comprehension.uses == ((1, 11), (1, 17), (1, 42))


def test_every_typing_style_gets_the_next_use_s_line_and_only_it(tmp_path: Path) -> None:
    (tmp_path / "loops.py").write_text(LOOPS)
    for typing in ("select", "append", "retype"):
        report = run_rename_bench(tmp_path, 20, SERVER, typing=typing)
        # `k`'s uses stand on consecutive lines: typed, the next line is proposed alone.
        assert all(o.shown and o.right and o.next_line and o.chain == CHAIN_DONE for o in report.outcomes), typing
        printed = format_rename(report, 0.5)
        assert "next use's line exactly 100.0%" in printed and "tuple target" in printed
    appended, _ = rename_cases([tmp_path / "loops.py"], 20, seed=0, appended=True)
    assert all(case.new_name.startswith(case.name) for case in appended)


def test_javascript_cases_are_drawn_per_binding_kind_and_only_where_the_scope_declares_the_name_once(
        tmp_path: Path) -> None:
    from benchmarks.rename_trees import tree_cases

    text = ("import { x as y } from 'm';\nfunction f(a) {\n  const b = a + y;\n  { let b = 2; use(b); }\n"
            "  return obj.a + b;\n}\nfor (const it of xs) use(it);\n")
    cases = tree_cases(tmp_path / "a.js", text, {})
    assert cases is not None
    assert {(name, kind, len(uses)) for name, kind, uses in cases} == {
        ("y", "import", 2), ("a", "parameter", 2), ("it", "for-of/in binding", 2),
        ("b", "let/const", 2)}  # the inner `b`, its block's own; the outer one's scope declares it twice
    assert tree_cases(tmp_path / "b.js", "function (\n", {}) is None  # does not parse cleanly
