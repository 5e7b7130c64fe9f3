"""What `bench repeated` and `bench arguments` share: the token scan, the hand edit as
didChange events, and how a document after proposals is judged."""

from pathlib import Path

from benchmarks.code_tokens import PYTHON, SCRIPT, Dialect, Kind, lsp_lines, tokens
from benchmarks.edit_chains import EditCase, Site, added_argument, applied, hand_edit, is_part_of_the_edit


def kinds(text: str, dialect: Dialect) -> list[tuple[str, str]]:
    return [(token.kind.value, token.text) for token in tokens(text, dialect)]


def test_python_strings_with_prefixes_triple_quotes_and_escapes_are_one_token_each() -> None:
    text = "x = rb'a\\'b' + f'''q\n'''  # note\n"
    assert kinds(text, PYTHON) == [("name", "x"), ("punctuation", "="), ("string", "rb'a\\'b'"),
                                   ("punctuation", "+"), ("string", "f'''q\n'''"), ("comment", "# note")]


def test_a_template_literal_s_substitution_is_code_and_a_regex_is_a_string() -> None:
    text = "s = `a${load(`b${c}`)}d` + /[/]x/g.test(y) / 2 // end"
    scanned = kinds(text, SCRIPT)
    assert ("name", "load") in scanned and ("name", "c") in scanned
    assert ("string", "`a${") in scanned and ("string", "}d`") in scanned
    assert ("string", "/[/]x/g") in scanned
    # After `)` a slash divides.
    assert ("punctuation", "/") in scanned and scanned[-1] == ("comment", "// end")


def test_lines_are_split_where_lsp_splits_them_not_at_a_form_feed() -> None:
    assert lsp_lines("a\r\nb\x0cc\rd\n") == ["a\r\n", "b\x0cc\r", "d\n"]
    assert [t.kind for t in tokens("a = 1\x0c\n", PYTHON)] == [Kind.NAME, Kind.PUNCT, Kind.NUMBER]


def test_an_added_argument_takes_a_comma_unless_the_call_is_empty_or_ends_with_one() -> None:
    assert added_argument("", "true") == "true"
    assert added_argument("a, b", "timeout=30") == ", timeout=30"
    assert added_argument("a,", "true") == " true"
    assert added_argument("a, ", "true") == "true"


TEXT = "x = f(a)\ny = f(b)\nz = f(c)\n"
CASE = EditCase(Path("m.py"), TEXT, tuple(Site(row, ((7, 7, ", k=1"),)) for row in range(3)), 0, "Python", "keyword")


def test_a_document_with_some_sites_edited_is_part_of_the_edit_and_anything_else_is_wrong() -> None:
    lines = lsp_lines(TEXT)
    assert is_part_of_the_edit(applied(lines, CASE.sites[:2]), CASE)
    assert is_part_of_the_edit(applied(lines, [CASE.sites[0], CASE.sites[2]]), CASE)
    assert not is_part_of_the_edit(TEXT, CASE)  # the hand edit undone
    assert not is_part_of_the_edit(applied(lines, CASE.sites[:1]).replace("y = f(b)", "y = f(b, k=2)"), CASE)
    assert not is_part_of_the_edit(applied(lines, CASE.sites[:1]) + "\n", CASE)


def test_a_hand_edit_is_typed_piece_by_piece_or_a_character_at_a_time_with_the_cursor_after_it() -> None:
    # Positions are UTF-16: the emoji counts two.
    wrapped = EditCase(Path("m.py"), "x = 😀 + v\n", (Site(0, ((4, 4, "str("), (9, 9, ")"))),), 0, "Python", "wrap")
    changes, cursor = hand_edit(wrapped, "piece")
    assert [(c["range"]["start"]["character"], c["range"]["end"]["character"], c["text"]) for c in changes] == [
        (4, 4, "str("), (14, 14, ")")]
    assert cursor == {"line": 0, "character": 15}
    renamed = EditCase(Path("m.py"), "y = f(a)\n", (Site(0, ((4, 5, "gh"),)),), 0, "Python", "callee")
    changes, cursor = hand_edit(renamed, "chars")
    # The first keystroke replaces the old name, the next one is inserted after it.
    assert [(c["range"]["start"]["character"], c["range"]["end"]["character"], c["text"]) for c in changes] == [
        (4, 5, "g"), (5, 5, "h")]
    assert cursor == {"line": 0, "character": 6}
