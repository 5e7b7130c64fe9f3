import ast
import random
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.fim.calibrate import precision_curve, precision_table
from model.fim.calibration import FEATURE_NAMES, Calibrator, fit
from model.languages.python_parse import ignore_candidate_warnings, parses


def test_the_calibrator_learns_that_confident_candidates_are_right() -> None:
    rng = random.Random(0)
    rows, labels = [], []
    for _ in range(400):
        mean_logp = rng.uniform(-3, 0)
        rows.append([mean_logp, mean_logp - 1, 1.0, 1.0, -0.1, 1.0])
        labels.append(rng.random() < 0.05 + 0.9 * (mean_logp > -1))
    calibrator = fit(rows, labels)
    sure, unsure = calibrator([-0.2, -1.2, 1, 1, -0.1, 1]), calibrator([-2.5, -3.5, 1, 1, -0.1, 1])
    assert sure > 0.8 and unsure < 0.2


def test_a_stored_calibrator_round_trips_and_a_foreign_one_is_refused() -> None:
    calibrator = Calibrator(tuple(float(i) for i in range(len(FEATURE_NAMES))), 0.5)
    assert Calibrator.from_dict(calibrator.to_dict()) == calibrator
    assert Calibrator.from_dict({"features": ["other"], "weights": [1.0], "bias": 0.0}) is None


def test_parse_check_and_precision_table() -> None:
    assert parses("x = 1\n") and not parses("x = (\n")
    table = precision_table(precision_curve([0.95, 0.5, 0.15], [True, False, False]))
    assert table.splitlines()[-1].split() == ["0.9", "33.3%", "100.0%"]
    assert table.splitlines()[1].split() == ["0.1", "100.0%", "33.3%"]


def test_the_parse_check_gives_no_warning_about_an_odd_candidate() -> None:
    odd = "x = 1if y else 2\n"  # valid, but Python's parser warns "invalid decimal literal"
    with warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)
        ignore_candidate_warnings()  # as `redraft` does at start; put before the filter above
        with pytest.raises(SyntaxError):
            ast.parse(odd)  # the same text under another name does warn (here: raise)
        assert parses(odd)


def test_nothing_shown_above_every_confidence_has_no_precision() -> None:
    curve = precision_curve([0.05, 0.02], [True, False])
    assert curve[0] == (0.1, 0.0, None)
    assert precision_table(curve).splitlines()[1].split() == ["0.1", "0.0%", "–"]


def test_the_parse_check_is_measured_only_when_it_could_matter() -> None:
    from model.fim.calibration import features, with_parse_check
    from model.languages.python_statement import UNKNOWN_PARSE, CursorStatement
    from model.sampler import Denoised

    run = Denoised(tokens=[5, 6, 1], probabilities=[0.5, 0.4, 0.9], steps=2)
    unknown = features(run, frozenset({1}), "x = (", ")", "\n", check_parse=False)
    assert unknown[-1] == UNKNOWN_PARSE
    measured = with_parse_check(unknown, CursorStatement("x = (", "\n"), ")")
    assert features(run, frozenset({1}), "x = (", ")", "\n") == measured
    calibrator = Calibrator((0.0, 0.0, 0.0, 0.0, 0.0, -2.0), 0.0)  # a failed parse only raises it
    low, high = calibrator.with_either_parse(unknown)
    assert (low, high) == (calibrator([*unknown[:-1], 1.0]), calibrator([*unknown[:-1], 0.0]))
    assert low < calibrator(unknown) < high


def test_a_middle_that_finishes_the_cursor_s_statement_parses_with_it() -> None:
    from model.languages.python_statement import MAX_PARSED_CHARS, UNKNOWN_PARSE, statement_parses

    prefix = "import os\n\n\ndef f(items):\n    total = len(it"
    assert statement_parses(prefix, "ems)", "\n    return total\n") == 1.0  # the line is finished
    assert statement_parses(prefix, "ems):", "\n    return total\n") == 0.0
    assert statement_parses(prefix, "ems)", ")\n    return total\n") == 1.0  # the editor's own ")" is kept
    assert statement_parses("x = [" + "1, " * MAX_PARSED_CHARS, "2]", "\n") == UNKNOWN_PARSE


def test_a_middle_breaks_its_statement_only_if_nothing_typed_later_could_mend_it() -> None:
    from model.languages.python_statement import CursorStatement, with_awaited_body

    def breaks(prefix: str, middle: str, suffix: str = "\n") -> bool:
        return CursorStatement(prefix, suffix).breaks_with(middle)

    method = "class A:\n    def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)"
    assert breaks(method, ":") and not breaks(method, "")  # a call is no block's header
    assert breaks("def f(items):\n    total = len(items)", ":", "\n    return total\n")
    # A statement that did not parse before is not judged: the rest may be typed later.
    assert not breaks("def f(items):\n    total = len(it", "ems):", "\n    return total\n")
    assert not breaks("try:\n    import mako\n    from re import (\n        comp", "ile,")
    # New code: a header is typed before its body, a decorator before its definition.
    loop = "def list_files(root):\n    found = []\n    for name in os.listdir(root)"
    assert not breaks(loop, ":") and not breaks(loop, ":  # each entry", "\n\n\ndef other():\n    pass\n")
    assert not breaks('import os\n\nif __name__ == "__main__"', ":", "")
    assert not breaks("def f():\n    tr", "y:") and breaks("def f():\n    tr", "y")
    assert not breaks("class A:\n    @property", "()") and breaks(method, "):")
    # A half-typed clause is found again finished: `ex` started a statement, `except` goes on with `try`.
    assert not breaks("try:\n    import mako\nex", "cept ImportError:", "\n    mako = None\n")
    # Where a triple quote is open, the statement's extent is not known.
    assert not breaks('def f():\n    ""', '"', "\n    Docs.\n    \"\"\"\n")
    assert not breaks('"""Usage:\n  tool FILE\n"""\n', "from docopt import docopt", "\n\nx = 1\n")
    assert with_awaited_body("x = 1\ny = 2\n", 8) is None
    assert with_awaited_body("    for a in b:  # c\nz", 5) == "    for a in b:  # c\n        pass\nz"
    assert with_awaited_body("  @wrap\n", 3) == "  @wrap\n  def _(): pass\n"


def test_an_else_clause_at_column_0_belongs_to_the_statement_above() -> None:
    from model.languages.python_statement import statement_around

    before, after = statement_around("if sys.version_info >= (3, 11):\n    import tomllib\nelse:\n    import to",
                                     "ml\nx = 1\n")
    assert before.startswith("if sys.version_info") and after == "ml\n"


def test_a_decorated_definition_is_one_statement_with_its_decorators() -> None:
    from model.languages.python_statement import statement_around

    above = "import pytest\n\n\n@pytest.mark.parametrize(\n    'x',\n    [1, 2],\n)\n@slow\n"
    before, after = statement_around(above + "def test_it(x):\n    assert x", " > 0\n\n\ndef other():\n    pass\n")
    assert before.startswith("@pytest.mark") and after == " > 0\n\n\n"
    before, after = statement_around("import pytest\n\n\n@pytest.mark.parametrize(\n    'x',\n    [1, ",
                                     "2],\n)\n@slow\ndef test_it(x):\n    assert x\nz = 1\n")
    assert before.startswith("@pytest.mark") and after.endswith("assert x\n")


def test_in_a_class_the_method_around_the_cursor_is_parsed_alone() -> None:
    from model.languages.python_statement import MAX_PARSED_CHARS, statement_around, statement_parses

    methods = "".join(f"    def method_{n}(self):\n        return {n}\n\n" for n in range(MAX_PARSED_CHARS // 40))
    prefix = f'class Box:\n    """A box.\n\n    size = 3\n    """\n\n{methods}'
    prefix += "    def grow(self, by):\n        self.size += b"
    suffix = "y\n        return self\n\n    def broken(self:\n        pass\n\n\nx = 1\n"
    before, after = statement_around(prefix, suffix)
    assert before.endswith("\n    def grow(self, by):\n        self.size += b") and len(before) < 100
    assert after == "y\n        return self\n\n"
    # Measured though the class is longer than the cap, and the method elsewhere that doesn't parse is not read.
    assert statement_parses(prefix, "y", suffix[1:]) == 1.0 and statement_parses(prefix, "y)", suffix[1:]) == 0.0


def test_a_class_body_starts_after_its_header_and_its_docstring_is_not_code() -> None:
    from model.languages.python_statement import statement_around

    header = "class Result(\n    Base[int],\n    ", "Other,\n):\n    x = 1\n"
    assert statement_around(*header) == header  # the cursor in the header: the whole class
    prefix = 'class A:\n    """Doc.\n\n    Text at the body\'s indentation.\n    """\n\n    # the options'
    before, after = statement_around(prefix, "\n    x = 1\n\n    @property\n    def y(self):\n        pass\n")
    # The docstring is one statement: no line of it starts another.
    assert before == "if True:\n" + prefix[len("class A:\n"):] and after == "\n"
    before, after = statement_around("class A:\n    @cached(\n        size=2",
                                     ")\n    def f(self):\n        pass\n    z = 2\n")
    assert before.endswith("    @cached(\n        size=2") and after == ")\n    def f(self):\n        pass\n"


def test_a_long_string_closing_at_column_0_neither_starts_nor_ends_a_top_level_statement() -> None:
    from model.languages.python_statement import statement_around, statement_parses

    # After a module docstring the statement starts where the docstring opened, not at its closing quotes.
    prefix = '#!/usr/bin/env python\n"""Usage:\n  tool FILE\n\nOptions:\n  -h\n"""\n'
    before, after = statement_around(prefix, "\n\nx = 1\n")
    assert before == prefix[len("#!/usr/bin/env python\n"):] and after == "\n\n"
    assert statement_parses(prefix, "from docopt import docopt", "\n\nx = 1\n") == 1.0
    # A string whose lines start at column 0, above the cursor and below it, stays inside its function.
    prefix = 'def test_it():\n    content = """\n[a]\nb = 1\n"""\n\n    doc ='
    suffix = '\n    expected = """\nc = 2\n"""\n    assert doc\n\n\ndef other():\n    pass\n'
    before, after = statement_around(prefix, suffix[1:])
    assert before == prefix and after == suffix[1:suffix.index("def other")]
    assert statement_parses(prefix, " parse(content)", suffix) == 1.0


def test_a_middle_that_opens_a_docstring_is_parsed_with_the_lines_it_makes_a_string() -> None:
    from model.languages.python_statement import statement_parses

    prefix = "import os\n\n\ndef delta(value"
    suffix = 'specific errors\n    """\n    return value\n\n\nclass Other:\n    pass\n'
    assert statement_parses(prefix, '):\n    """\n    Delta ', suffix) == 1.0
    assert statement_parses(prefix, ']:\n    """\n    Delta ', suffix) == 0.0


def test_a_half_typed_clause_is_parsed_with_the_statement_it_goes_on() -> None:
    from model.languages.python_statement import statement_parses

    prefix = "try:\n    import mako\nex"
    assert statement_parses(prefix, "cept ImportError:", "\n    mako = None\n") == 1.0
    assert statement_parses(prefix, "cept ImportError", "\n    mako = None\n") == 0.0
    assert statement_parses("x = 1\nex", "it()", "\n") == 1.0  # a name that only starts like one


@pytest.mark.parametrize(("prefix", "middle", "suffix"), [
    ("def f(dt):\n    assert isinstance(dt, datetime.datetime)", ":", "\n"),
    ("try:\n    from toon_format import decode as ", "e:", "\nexcept ImportError:\n    pass\n"),
    ("def f():\n    return x", ":", "\n"),
    ("class A:\n    x: int", " = 1:  # one", "\n"),
    ("def f():\n    x = (\n        1", "\n    y = 2:", "\n"),  # any line of the middle
])
def test_a_colon_ending_a_line_that_is_no_header_is_stray(prefix: str, middle: str, suffix: str) -> None:
    from model.languages.python_statement import CursorStatement

    assert CursorStatement(prefix, suffix).ends_with_a_stray_colon(middle)


@pytest.mark.parametrize(("prefix", "middle", "suffix"), [
    ("def f(x):\n    if x", ":", "\n        return 1\n"),
    ("class A(B", "):", "\n"),
    ("def f(\n    a,\n", ") -> str:", "\n"),
    ("x = sorted(a, key=lambda v", ":", "\n    v[0])\n"),  # a lambda's colon, its body below
    ("d = {\n    'a'", ":", "\n        1,\n}\n"),
    ("match x:\n    case Point(x=0", "):", "\n        pass\n"),
    ("def f():\n    try", ":", ""),  # its clauses are to come
    ("def f():\n    with open(p) as fh, open(q", ") as gh:", ""),
    ("y = x[1", ":", "]\n"),
    ("if (a and\n        b", "):", "\n    pass\n"),
    ("    elif x > 0", ":", ""),
    ("def f():\n    x = 1  # note", ":", ""),  # in the comment
    ("def f():\n    print('a", ":", "')\n"),  # in a string
    ('def f():\n    """Returns', ":", '\n    """\n'),  # in a docstring
    ("def f():\n    assert x:", "\n    return 1", "\n"),  # the user's own line
    ("def f():\n    ", "return 1\n", "    assert x:\n"),
])
def test_a_colon_ending_a_header_or_joined_to_the_next_line_is_not(prefix: str, middle: str, suffix: str) -> None:
    from model.languages.python_statement import CursorStatement

    assert not CursorStatement(prefix, suffix).ends_with_a_stray_colon(middle)


@pytest.mark.parametrize(("above", "middle", "refused"), [
    ("    try:\n        x = 1\n    e", "lse:", True),  # a try's body, no handler yet
    ("    try:\n        x = 1\n    e", "xcept KeyError:", False),
    ("    try:\n        x = 1\n    except KeyError:\n        pass\n    e", "lse:", False),
    ("    if a:\n        x = 1\n    e", "lif b:", False),
    ("    if a:\n        x = 1\n    e", "xcept KeyError:", True),
    ("    with a:\n        x = 1\n    e", "lse:", True),
    ("    for a in b:\n        x = 1\n\n        # done\n    e", "lse:", False),
    ("    if a:\n        x = 1\n        e", "lse:", False),  # at the body's indentation: editors dedent it
    ("    x = 1\n    e", "lse:", False),  # under a plain statement: it may yet be dedented
    ("    if f(\n        a,\n    ):\n        x = 1\n    e", "lse:", False),
    ("    try:\n        x = 1\n    e", "lse_value = 2", False),  # a name, not the clause
])
def test_a_clause_right_under_a_header_that_refuses_it_is_ruled_out(above: str, middle: str, refused: bool) -> None:
    from model.languages.python_statement import CursorStatement

    statement = CursorStatement("def f():\n" + above, "\n")
    assert statement.opens_a_clause_its_header_refuses(middle) == refused
    assert statement.rules_out(middle) or not refused


def test_nothing_is_parsed_in_a_docstring() -> None:
    from model.languages.python_statement import UNKNOWN_PARSE, statement_parses

    assert statement_parses('"""Usage:\nprog run <file>\n\nOptions:\n  -h  Show', " help.", '\n"""\n') == UNKNOWN_PARSE
    assert statement_parses('"""Usage."""\nx = (1', ", 2)", "\n") == 1.0


def test_a_list_item_ends_with_a_comma_as_the_items_around_it_do() -> None:
    from model.languages.python_statement import ends_unlike_its_siblings, statement_parses

    prefix = "CHANGES = [\n    ('old_value', 'value', None),\n    ('old_type', 'type', Non"
    suffix = "\n    ('new_path', 'path', None),\n]\n"
    assert ends_unlike_its_siblings(prefix, "e)", suffix) and not ends_unlike_its_siblings(prefix, "e),", suffix)
    assert statement_parses(prefix, "e)", suffix) == 0.0  # Python would read a call: it parses
    assert statement_parses(prefix, "e),", suffix) == 1.0
    # Lines at other indentations say nothing.
    assert not ends_unlike_its_siblings("def f(\n    a,\n    b", "=1", "\n):\n")
    assert not ends_unlike_its_siblings("x = {\n    'a': 1,\n    # L", "inks", "\n    'b': 2,\n}\n")  # a comment


def test_the_first_item_ends_with_a_comma_when_the_item_below_does() -> None:
    from model.languages.python_statement import ends_unlike_its_siblings

    prefix = "CHANGES = [\n    ('old_type', 'type', Non"
    suffix = "\n    ('new_path', 'path', None),\n]\n"
    assert ends_unlike_its_siblings(prefix, "e)", suffix) and not ends_unlike_its_siblings(prefix, "e),", suffix)
    # The last item may leave its comma out, and a line ending in an operator goes on below.
    assert not ends_unlike_its_siblings("x = [\n    'a',\n    'b", "'", "\n]\n")
    assert not ends_unlike_its_siblings("total = f(\n    a", " +", "\n    b,\n)\n")
    # A docstring's opening quotes have prose below them.
    assert not ends_unlike_its_siblings('def f():\n    "', '""', "\n    Returns a, b,\n")


def test_a_middle_that_puts_two_strings_side_by_side_does_not_count_as_parsing() -> None:
    from model.languages.python_statement import joins_string_literals, statement_parses

    prefix = '__all__ = [\n    "Box",\n    "DDBox"'
    assert joins_string_literals(prefix, '""', "\n]\n") and statement_parses(prefix, '""', "\n]\n") == 0.0
    assert not joins_string_literals(prefix, ",", "\n]\n") and statement_parses(prefix, ",", "\n]\n") == 1.0
    # Strings side by side before the cursor are the file's own business.
    assert not joins_string_literals('x = "a""b" + ', '"c"', "\n")
    assert joins_string_literals('x = "a', '"', '"b"\n')  # closed right against the suffix's string
    assert not joins_string_literals('def f():\n    "', '""', "\n    Doc.\n")  # a docstring opens


def test_calibration_decodes_the_canvas_as_the_server_does_as_you_type() -> None:
    """The calibrators read features of the canvas's decode; fitted on another decode than
    the one served, a threshold would not mean the precision it was fitted to."""
    from lsp_server.completion import build_query
    from lsp_server.options import ServerOptions
    from model.fim.calibrate import network_alone

    served = build_query("x = 1\ny = ", 10, ServerOptions(), invoked=False)
    fitted_on = network_alone(served.prefix, served.suffix)
    assert (fitted_on.max_steps, fitted_on.canvas_size, fitted_on.threshold) == \
        (served.max_steps, served.canvas_size, served.sampler_threshold)
    assert not fitted_on.copy_lines and not fitted_on.left_to_right  # the network's own answer


_LINES = ("class A:", "class B(\n    Base,\n):", "    def f(self):", "    @property", '    """Doc.', '    """',
          "        return 1", "    x = (1,", "    )", "    else:", "    # note", "", "@dataclass", "def g():",
          "        '''", "\tdef h(self):", "    class Inner:", "        def m(self):", "x = 1")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_LINES), max_size=25), st.data())
def test_the_statement_around_the_cursor_is_a_slice_of_the_text_around_it(
        lines: list[str], data: st.DataObject) -> None:
    from model.languages.python_statement import statement_around

    text = "\n".join(lines) + "\n"
    cursor = data.draw(st.integers(0, len(text)))
    prefix, suffix = text[:cursor], text[cursor:]
    before, after = statement_around(prefix, suffix)
    nested = before.removeprefix("if True:\n")  # a class body's statement, with its header
    assert (prefix.endswith(before) or prefix.endswith(nested)) and suffix.startswith(after)
    assert cursor == 0 or before or after  # never nothing around a cursor inside the text
