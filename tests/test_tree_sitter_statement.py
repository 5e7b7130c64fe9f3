"""Whether JavaScript and TypeScript parse with a candidate in place, on tree-sitter."""

from model.languages import JAVASCRIPT, TYPESCRIPT, UNKNOWN_PARSE


def test_a_candidate_that_finishes_the_line_parses_and_one_that_breaks_it_is_ruled_out() -> None:
    statement = JAVASCRIPT.statement("function add(a, b) {\n  const total = a + ", "\n  return total;\n}\n")
    assert statement.parses_with("b;") == 1.0 and not statement.rules_out("b;")
    assert statement.parses_with("b)") == 0.0 and statement.rules_out("b)")
    assert statement.parses_with("b; }") == 0.0 and statement.rules_out("b; }")


def test_a_header_typed_before_its_body_is_not_broken() -> None:
    statement = JAVASCRIPT.statement("function f(a) {\n  ", "\n  return a;\n}\n")
    assert statement.parses_with("const x = 1;") == 1.0 == statement.still_parses("const x = 1;")
    # Its brackets closed after it, it parses: not known to be right, not ruled out.
    assert statement.parses_with("if (a) {") == UNKNOWN_PARSE and not statement.rules_out("if (a) {")
    assert statement.rules_out("}") and statement.rules_out("const = ;")


def test_marks_elsewhere_in_the_file_do_not_count_against_a_candidate() -> None:
    # (An unclosed bracket above is another matter: the tree around the cursor is then read
    # inside it, and every candidate looks broken.)
    broken_above = "const s = \"x\" +;\n\nfunction f(a) {\n  return "
    statement = TYPESCRIPT.statement(broken_above, ";\n}\n")
    assert statement.parses_with("a + 1") == 1.0
    assert statement.parses_with("a +") == 0.0


def test_only_a_window_around_the_cursor_is_parsed() -> None:
    far = "const x: number = 1;\n" * 2_000  # ~40 KB each side, beyond the window
    statement = TYPESCRIPT.statement(far + "const y = ", "\n" + far)
    assert statement.parses_with("x + 1;") == 1.0 and statement.rules_out("x +);")
