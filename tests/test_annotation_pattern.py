"""The ``annotation`` kind: after a ``def`` got its return annotation, the nearest
unannotated ``def`` on each side gets the types its code tells."""

from model.next_edit.edit_patterns import ANNOTATION, Change, pattern_edits

TESTS = '''from app import Tester


def tester(app: App) -> Tester:
    return Tester(app)


def test_runs(tester: Tester) -> None:
    assert tester.run() == 0


def test_runs_twice(tester, name="é", *rest):  # noqa: D103
    """Return code 0, twice.
    return it"""
    assert tester.run(name) == tester.run(name)


def test_fails(tester):
    assert tester.run("x") == 1
'''
CHANGE = Change(7, "def test_runs(tester):\n", "def test_runs(tester: Tester) -> None:\n")


def proposed(text: str, change: Change, path: str = "test_m.py") -> list[tuple[int, str]]:
    edits = pattern_edits(text.splitlines(keepends=True), change, path)
    return [(e.start_line, e.new_text) for e in edits if e.kind == ANNOTATION]


def test_the_next_def_gets_the_return_type_its_body_tells_and_its_parameters_the_file_s_types() -> None:
    text = TESTS.replace("def tester(app: App)", "def tester(app: App, name: str = '', *rest: int)")
    # The defs below, nearest first; the one above already has its annotations. A
    # docstring's "return it" returns nothing. PEP 8 spacing: `name="é"` unannotated,
    # `name: str = "é"` annotated.
    assert proposed(text, CHANGE) == [
        (11, 'def test_runs_twice(tester: Tester, name: str = "é", *rest: int) -> None:  # noqa: D103\n'),
        (17, "def test_fails(tester: Tester) -> None:\n")]


def test_a_parameter_whose_type_the_file_does_not_tell_leaves_the_def_and_those_past_it_alone() -> None:
    assert proposed(TESTS, CHANGE) == []  # `name`'s and `rest`'s types are nowhere
    assert proposed(TESTS.replace("def tester(app: App)", "def tester(app: App, name: str)"), CHANGE) == []


def test_return_types_told_by_the_body() -> None:
    def first_proposal(body: str, header: str = "def check(self):") -> str | None:
        text = ("class C:\n    def run(self) -> None:\n        pass\n\n"
                f"    {header}\n" + "".join(f"        {line}\n" for line in body.split("\n")))
        found = proposed(text, Change(1, "    def run(self):\n", "    def run(self) -> None:\n"), "m.py")
        return found[0][1].strip() if found else None

    assert first_proposal("return self.a == 1") == "def check(self) -> bool:"
    assert first_proposal("if self.a:\n    return True\nreturn not self.b") == "def check(self) -> bool:"
    assert first_proposal('return f"<C {self.a}>"') == "def check(self) -> str:"
    assert first_proposal("return self.a", "def __len__(self):") == "def __len__(self) -> int:"
    assert first_proposal("def inner():\n    return 1\nself.a = inner()") == "def check(self) -> None:"
    # A value the code does not type, a generator, or None on one path only: left alone.
    assert first_proposal("return self.a") is None
    assert first_proposal("return self.a if self.a < self.b else self.b") is None
    assert first_proposal("yield self.a") is None
    assert first_proposal("if self.a:\n    return\nreturn self.a == 1") is None


def test_siblings_taking_the_same_parameters_return_alike() -> None:
    text = ("def validate_a(key: str, info: dict) -> bool:\n    return check(key, info)\n\n\n"
            "def validate_b(key, info):\n    return check(info, key)\n")
    change = Change(0, "def validate_a(key, info):\n", "def validate_a(key: str, info: dict) -> bool:\n")
    assert proposed(text, change, "m.py") == [(4, "def validate_b(key: str, info: dict) -> bool:\n")]


def test_only_a_return_annotation_added_to_a_one_line_python_def_starts_the_sweep() -> None:
    text = TESTS.replace("def tester(app: App)", "def tester(app: App, name: str, *rest: int)")
    assert proposed(text, CHANGE) != []
    assert proposed(text, CHANGE, "test_m.js") == []  # not Python
    params_only = Change(7, "def test_runs(tester):\n", "def test_runs(tester: Tester):\n")
    assert proposed(text.replace("def test_runs(tester: Tester) -> None:", "def test_runs(tester: Tester):"),
                    params_only) == []
    # The next def spread over lines: the next hunk is likely there, not past it.
    spread = text.replace('(tester, name="é", *rest):', '(\n    tester, name="é", *rest\n):')
    assert proposed(spread, CHANGE) == []


def test_a_change_that_left_parameters_untyped_sweeps_return_types_alone() -> None:
    text = TESTS.replace("def test_runs(tester: Tester) -> None:", "def test_runs(tester) -> None:")
    change = Change(7, "def test_runs(tester):\n", "def test_runs(tester) -> None:\n")
    assert proposed(text, change) == [(11, 'def test_runs_twice(tester, name="é", *rest) -> None:  # noqa: D103\n'),
                                      (17, "def test_fails(tester) -> None:\n")]


def test_a_def_in_a_string_is_text() -> None:
    text = TESTS.replace("def test_runs_twice(", 'SAMPLE = """\ndef sample():\n    pass\n"""\n\n\ndef test_runs_twice(')
    change = Change(7, "def test_runs(tester):\n", "def test_runs(tester) -> None:\n")
    edits = proposed(text.replace("def test_runs(tester: Tester) -> None:", "def test_runs(tester) -> None:"), change)
    assert [line for line, _ in edits] == [17, 23]  # past the sample's `def sample():` at 12
