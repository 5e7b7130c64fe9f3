"""The document's line breaks and indentation, and the model's (``document_dialect.py``)."""

from lsp_server.completion import build_query
from lsp_server.document_dialect import Dialect, indented_with_tabs, line_break_at
from lsp_server.options import ServerOptions


def test_a_crlf_document_is_read_with_lf_and_answered_with_crlf() -> None:
    text = "def f():\r\n    x = 1\r\n    \r\n    return x\r\n"
    offset = text.index("    \r\n    return") + 4
    query = build_query(text, offset, ServerOptions(), invoked=False)
    assert (query.prefix, query.suffix) == ("def f():\n    x = 1\n    ", "\n    return x\n")
    dialect = Dialect.at(text, offset)
    assert dialect == Dialect("\r\n", tabs=False)
    assert dialect.to_document("y = x\n    z = y", query.prefix) == "y = x\r\n    z = y"


def test_the_line_break_is_the_one_ending_the_cursor_s_line_or_on_the_last_line_the_one_before() -> None:
    assert line_break_at("a = 1\nb", 7) == "\n"
    assert line_break_at("a = 1\r\nb", 8) == "\r\n"
    assert line_break_at("a = 1\r\nb = 2\nc", 3) == "\r\n"
    assert line_break_at("b", 1) == "\n"


def test_tabs_are_the_indentation_when_most_indented_lines_around_the_cursor_start_with_one() -> None:
    assert indented_with_tabs("def f():\n\tx = 1\n\ty = 2\n    # aligned\n", 9)
    assert not indented_with_tabs("def f():\n    x = 1\n\ty = 2\n    z = 3\n", 9)
    assert not indented_with_tabs("x = 1\ny = 2\n", 3)  # nothing indented: the model's spaces


def test_a_tab_indented_document_is_read_with_spaces_and_answered_with_tabs() -> None:
    text = "def f(items):\n\tfor item in items:\n\t\t\n\treturn items\n"
    offset = text.index("\t\t\n") + 2  # in the indentation of an empty line
    dialect = Dialect.at(text, offset)
    prefix, suffix = dialect.to_model(text[:offset], text[offset:])
    assert prefix == "def f(items):\n    for item in items:\n        "
    assert suffix == "\n    return items\n"
    assert dialect.to_document("print(item)\n        break", prefix) == "print(item)\n\t\tbreak"
    # At the line's start, a whole line: its indentation is the document's too.
    line_start = text.index("\treturn")
    prefix, suffix = dialect.to_model(text[:line_start], text[line_start:])
    assert suffix == "    return items\n"
    assert dialect.to_document("    del item\n", prefix) == "\tdel item\n"
    # After code on the line, the rest of the line is not indentation: tabs there stay tabs
    # in the model's text, and spaces in the answer's first line stay spaces.
    after_code = text.index(" in items")
    prefix, suffix = dialect.to_model(text[:after_code], "\t# why" + text[after_code:])
    assert prefix.endswith("\n    for item") and suffix.startswith("\t# why in items:\n        \n")
    assert dialect.to_document("    x\n    y", prefix) == "    x\n\ty"
