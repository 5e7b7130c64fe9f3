"""``redraft bench fim --dialect``: cases rewritten with \\r\\n breaks and tab indents, the
same spans in every dialect, which the server answers as their \\n, four-space twins (the
server's own mapping is tested in ``test_document_dialect.py`` and ``test_server_e2e.py``)."""

import json
import sys
from pathlib import Path

import pytest

from benchmarks.case_dialect import rewritten, rewritten_text
from benchmarks.fim import held_out_cases, run_fim_bench
from lsp_server.document_dialect import Dialect

TEXT = "def f(x):\n    if x:\n        return 1\n    return 0\n"


def cut(text: str, at: str, length: int) -> tuple[str, str, str]:
    start = text.index(at)
    return text[:start], text[start:start + length], text[start + length:]


@pytest.mark.parametrize("dialect", ["lf", "crlf", "tabs", "crlf-tabs"])
def test_the_cuts_land_on_the_same_text_in_every_dialect(dialect: str) -> None:
    for at, length in [("return 1", 8), ("        return 1", 17), ("    return 0", 4), ("if x", 4)]:
        prefix, middle, suffix = cut(TEXT, at, length)
        done = rewritten(TEXT, [len(prefix), len(prefix) + len(middle)], dialect)
        assert done is not None
        text, (start, end) = done
        # Read back as the server reads it (\n, four spaces a tab), each piece is the original.
        tabs = dialect.endswith("tabs")
        assert Dialect(tabs=tabs).to_model(text[:start], text[start:]) == (prefix, middle + suffix)
        assert Dialect(tabs=tabs).to_model(text[start:end], "")[0] == middle
        assert ("\r\n" in text) == dialect.startswith("crlf") and ("\t" in text) == tabs
    assert rewritten(TEXT, [], "lf") == (TEXT, [])
    assert rewritten_text(TEXT, "crlf-tabs") == "def f(x):\r\n\tif x:\r\n\t\treturn 1\r\n\treturn 0\r\n"


def test_a_cut_inside_an_indent_that_becomes_a_tab_leaves_the_case_out() -> None:
    assert rewritten(TEXT, [TEXT.index("    if") + 2], "tabs") is None
    assert rewritten(TEXT, [TEXT.index("    if") + 2], "crlf") is not None  # no tab, nothing to split
    assert rewritten(TEXT, [len(TEXT)], "crlf") == (TEXT.replace("\n", "\r\n"), [len(TEXT) + 4])
    with pytest.raises(ValueError, match="unknown dialect"):
        rewritten(TEXT, [], "cr")


@pytest.mark.parametrize("dialect", ["crlf", "tabs", "crlf-tabs"])
def test_the_server_answers_rewritten_spans_as_their_lf_twins(tmp_path: Path, dialect: str) -> None:
    corpus = tmp_path / "dev.jsonl"
    text = "".join(f"def scale_{i}(values, factor):\n    result = []\n    for value in values:\n"
                   f"        result.append(value * factor + {i})\n    return result\n\n\n" for i in range(8))
    corpus.write_text(json.dumps({"package": "pkg", "path": "m.py", "text": text}) + "\n")
    server = [sys.executable, "-m", "lsp_server", "serve"]
    cases = held_out_cases(corpus, 12, dialect=dialect)
    kept = {case.task_id for case in cases}  # with tabs, a span cut inside an indent is left out
    twins = [case for case in held_out_cases(corpus, 12) if case.task_id in kept]
    assert len(cases) == len(twins) >= 10
    lf = run_fim_bench(corpus, None, 0.0, server, cases=twins)
    other = run_fim_bench(corpus, None, 0.0, server, cases=cases, dialect=dialect)
    assert [r.exact for r in other.results] == [r.exact for r in lf.results]
    assert any(r.exact for r in lf.results)  # not vacuous: some spans are answered right
    assert [r.completion is None for r in other.results] == [r.completion is None for r in lf.results]
