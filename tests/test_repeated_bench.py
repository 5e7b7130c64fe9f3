"""`redraft bench repeated`: runs of similar lines, each operation's expected result on every
line of a run, and the same change carried down a run through the real server."""

import sys
from pathlib import Path

import pytest

from benchmarks.code_tokens import DIALECTS, Source, lsp_lines, source_of
from benchmarks.edit_chains import DONE, EditCase, applied, run_cases
from benchmarks.repeated_lines import format_repeated, repeated_cases, run_edit, run_repeated_bench, runs
from lsp_server.cli import main

SERVER = [sys.executable, "-m", "lsp_server", "serve"]


def source(text: str, suffix: str = ".py") -> Source:
    return source_of(Path(f"m{suffix}"), text, DIALECTS[suffix])


def run_texts(text: str, suffix: str = ".py") -> list[list[str]]:
    return [[line.text for line in run] for run in runs(source(text, suffix))]


def edited(text: str, operation: str, choice: str, suffix: str = ".py") -> list[str] | None:
    """Each line of the text's one run with the operation applied; None if one admits none."""
    scanned = source(text, suffix)
    (run,) = list(runs(scanned))
    sites = run_edit(run, operation, choice)
    if sites is None:
        return None
    lines = lsp_lines(text)
    return [lsp_lines(applied(lines, [site]))[site.row].rstrip("\n") for site in sites]


def test_a_run_is_three_similar_lines_in_a_row_at_one_indentation() -> None:
    text = ("a = 1\nbb = 'x'\nc = 2.5  # why\nd = f(x)\n"  # the call's brackets end the run
            "    e = 1\n    g = 2\n\n    h = 3\n"  # too short, and a blank line breaks a run
            "ITEMS = {\n    'a': 1,\n    'b': 2,\n    'c': 3,\n}\n")
    assert run_texts(text) == [["a = 1", "bb = 'x'", "c = 2.5  # why"], ["    'a': 1,", "    'b': 2,", "    'c': 3,"]]


def test_lines_of_a_multi_line_string_an_import_list_or_a_spanning_call_are_no_run() -> None:
    text = ('DOC = """\nx = 1\ny = 2\nz = 3\n"""\n'
            "from m import (\n    a,\n    b,\n    c,\n)\n"
            "f(a,\n  b)\nf(c,\n  d)\nf(e,\n  g)\n"
            "# a = 1\n# b = 2\n# c = 3\n")
    assert run_texts(text) == []


def test_typescript_lines_holding_a_type_are_no_run_but_an_object_s_entries_are() -> None:
    text = ("interface A {\n  id?: string\n  name: string\n  size: number\n}\n"
            "const o = {\n  id: 1,\n  name: 'n',\n  size: 3,\n};\n")
    assert run_texts(text, ".ts") == [["  id: 1,", "  name: 'n',", "  size: 3,"]]


PYTHON_RUN = "def f(row):\n    a = row.get('a')\n    b = row.get('b')\n    c = data.get(key)\n"


def test_wrap_method_suffix_and_prefix_edit_each_python_line_on_its_own() -> None:
    assert edited(PYTHON_RUN, "wrap", "str") == [
        "    a = str(row.get('a'))", "    b = str(row.get('b'))", "    c = str(data.get(key))"]
    assert edited(PYTHON_RUN, "method", ".strip()") == [
        "    a = row.get('a').strip()", "    b = row.get('b').strip()", "    c = data.get(key).strip()"]
    assert edited(PYTHON_RUN, "suffix", " or None") == [
        "    a = row.get('a') or None", "    b = row.get('b') or None", "    c = data.get(key) or None"]
    assert edited(PYTHON_RUN, "prefix", "self.") == [
        "    self.a = row.get('a')", "    self.b = row.get('b')", "    self.c = data.get(key)"]
    assert edited(PYTHON_RUN, "keyword", "default=None") == [
        "    a = row.get('a', default=None)", "    b = row.get('b', default=None)",
        "    c = data.get(key, default=None)"]


def test_a_method_needs_one_operand_and_a_python_prefix_an_indented_block() -> None:
    assert edited("a = x + 1\nb = y + 2\nc = z + 3\n", "method", ".copy()") is None
    assert edited("a = x + 1\nb = y + 2\nc = z + 3\n", "wrap", "str") == ["a = str(x + 1)", "b = str(y + 2)",
                                                                        "c = str(z + 3)"]
    assert edited("a = 1\nb = 2\nc = 3\n", "prefix", "self.") is None


def test_a_python_annotation_has_no_value_and_a_dict_entry_s_value_ends_before_its_comma() -> None:
    annotated = "class C:\n    a: int\n    b: str\n    c: bytes\n"
    assert edited(annotated, "wrap", "str") is None
    assert edited("D = {\n    'a': 1,\n    'b': x,\n    'c': y,\n}\n", "wrap", "repr") == [
        "    'a': repr(1),", "    'b': repr(x),", "    'c': repr(y),"]


def test_a_keyword_goes_before_the_first_call_s_parenthesis_and_the_callee_must_be_shared() -> None:
    calls = "    one = load(a)\n    two = load(b)\n    three = load()\n"
    assert edited(calls, "keyword", "strict=True") == [
        "    one = load(a, strict=True)", "    two = load(b, strict=True)", "    three = load(strict=True)"]
    assert edited(calls, "callee", "convert") == [
        "    one = convert(a)", "    two = convert(b)", "    three = convert()"]
    assert edited("x = f(a)\ny = g(b)\nz = f(c)\n", "callee", "convert") is None
    # A call that already passes the keyword does not take it again.
    assert edited("load(a, strict=1)\nload(b, strict=2)\nload(c, strict=3)\n", "keyword", "strict=True") is None


JS_RUN = "function f(row) {\n  const a = load(row.a);\n  const b = load(row.b);\n  const c = load(data.c);\n}\n"


def test_each_operation_on_a_javascript_run() -> None:
    assert edited(JS_RUN, "wrap", "String", ".js") == [
        "  const a = String(load(row.a));", "  const b = String(load(row.b));", "  const c = String(load(data.c));"]
    assert edited(JS_RUN, "method", ".trim()", ".js") == [
        "  const a = load(row.a).trim();", "  const b = load(row.b).trim();", "  const c = load(data.c).trim();"]
    assert edited(JS_RUN, "keyword", "true", ".js") == [
        "  const a = load(row.a, true);", "  const b = load(row.b, true);", "  const c = load(data.c, true);"]
    assert edited(JS_RUN, "callee", "convert", ".js") == [
        "  const a = convert(row.a);", "  const b = convert(row.b);", "  const c = convert(data.c);"]
    assert edited(JS_RUN, "suffix", " ?? null", ".js") == [
        "  const a = load(row.a) ?? null;", "  const b = load(row.b) ?? null;", "  const c = load(data.c) ?? null;"]
    assert edited(JS_RUN, "prefix", "this.", ".js") is None  # `const a`, no bare name assigned to
    assert edited("  a = 1;\n  b = 2;\n  c = 3;\n", "prefix", "this.", ".js") == [
        "  this.a = 1;", "  this.b = 2;", "  this.c = 3;"]


def test_cases_are_one_per_run_drawn_with_the_seed_and_typed_at_a_random_line_with_at_any(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(PYTHON_RUN + "\n\n" + "x = 1\ny = 2\nz = 3\n")
    (tmp_path / "b.js").write_text(JS_RUN)
    (tmp_path / "notes.txt").write_text("a = 1\nb = 2\nc = 3\n")
    paths = sorted(tmp_path.iterdir())
    cases, read = repeated_cases(paths, 10, seed=0)
    assert read == 2 and len(cases) == 3
    assert {case.language for case in cases} == {"Python", "JS/TS"}
    assert all(case.typed == 0 and len(case.sites) == 3 for case in cases)
    assert [c.label for c in repeated_cases(paths, 10, seed=0)[0]] == [c.label for c in cases]
    anywhere = [c.typed for seed in range(5) for c in repeated_cases(paths, 10, seed, anywhere=True)[0]]
    assert any(typed > 0 for typed in anywhere)


def test_a_call_s_new_argument_or_name_is_carried_down_the_run_through_the_server(tmp_path: Path) -> None:
    text = "def f(config):\n    one = load(config.a)\n    two = load(config.b)\n    three = load(config.c)\n"
    scanned = source(text)
    (run,) = list(runs(scanned))
    cases = []
    for operation, choice in (("keyword", "strict=True"), ("callee", "convert")):
        sites = run_edit(run, operation, choice)
        assert sites is not None
        cases.append(EditCase(scanned.path, text, sites, 0, "Python", operation))
    outcomes = run_cases(cases, SERVER, 0.5, "repeated")
    # The call-site and rename patterns need no network: the next line is proposed, alone.
    assert all(o.shown and o.exact for o in outcomes)
    assert outcomes[1].chain == DONE
    assert all(o.latencies_ms and len(o.latencies_ms) <= 3 for o in outcomes)


def test_the_bench_prints_every_figure_per_operation_and_language(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(PYTHON_RUN)
    (tmp_path / "b.js").write_text(JS_RUN)
    report = run_repeated_bench(tmp_path, 10, SERVER)
    assert report.files == 2 and len(report.outcomes) == 2
    printed = format_repeated(report, 0.5)
    assert printed.startswith("2 repeated-line edits in 2 files, threshold 0.5")
    for heading in ("shown", "exact", "precision", "every line done", "a wrong edit", "p50", "p95"):
        assert heading in printed
    assert "operation" in printed and "Python" in printed and "JS/TS" in printed


def test_the_command_refuses_a_folder_that_is_not_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "repeated", str(tmp_path / "missing")]) == 1
    assert "is not a folder" in capsys.readouterr().err
