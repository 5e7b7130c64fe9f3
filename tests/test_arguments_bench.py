"""`redraft bench arguments`: a function's calls found by the token scan, the argument each
is expected to get, and an argument added at the first call carried to the next through
the real server."""

import re
import sys
from pathlib import Path

import pytest

from benchmarks.arguments import NESTED, NOT_NESTED, argument_cases, format_arguments, run_arguments_bench
from benchmarks.code_tokens import lsp_lines
from benchmarks.edit_chains import DONE, EditCase, applied
from lsp_server.cli import main

SERVER = [sys.executable, "-m", "lsp_server", "serve"]

PYTHON = '''def load(path, mode="r"):
    """load(path) opens it."""  # load(x) in a comment
    return open(path, mode)


class Store:
    def fetch(self, key):
        return self.cache.fetch(key) or load(key)

    def size(self):
        return len(self.cache)

    def report(self):
        return self.size(), self.size() * 2, (self.fetch("a"), self.size)


first = load("a.txt")
second = load("b.txt", mode="rb")
empty = load()
'''

SCRIPT = '''function load(url) {
  return fetch(url);
}
const parse = async (text) => JSON.parse(text);
class Api {
  send(path) {
    return this.client.request(path);
  }
  both() {
    return [this.send("/one"), this.send("/two")];
  }
}
const a = load("x"); // load("comment")
items.map((item) => load(item));
const b = wrap(load(`${base}/y`));
parse(a);
'''


def cases_of(tmp_path: Path, name: str, text: str, seed: int = 0) -> dict[str, EditCase]:
    """The cases of one file, by the name of the function whose calls they are."""
    cases, read = argument_cases([_write(tmp_path, name, text)], 20, seed)
    assert read == 1
    return {_called(case): case for case in cases}


def _called(case: EditCase) -> str:
    """The name called at the case's first site: the word before its matching ``(``."""
    site = case.sites[0]
    line, depth = lsp_lines(case.text)[site.row][: site.pieces[0][0]], 1
    for column in range(len(line) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(line[column], 0)
        if depth == 0:
            return re.findall(r"\w+$", line[:column])[0]
    raise AssertionError("no call")


def _write(folder: Path, name: str, text: str) -> Path:
    (folder / name).write_text(text)
    return folder / name


def edited_calls(case: EditCase) -> list[str]:
    lines = lsp_lines(case.text)
    return [lsp_lines(applied(lines, [site]))[site.row].strip() for site in case.sites]


def test_python_calls_skip_strings_comments_and_definitions_and_a_method_is_called_through_self(
        tmp_path: Path) -> None:
    cases = cases_of(tmp_path, "store.py", PYTHON)
    # `fetch` is also called through `self.cache.`, whose method that may be no scan can tell.
    assert set(cases) == {"load", "size"}
    load = cases["load"]
    keyword = load.sites[1].pieces[0][2].lstrip(", ")
    assert edited_calls(load) == [
        f"return self.cache.fetch(key) or load(key, {keyword})", f'first = load("a.txt", {keyword})',
        f'second = load("b.txt", mode="rb", {keyword})', f"empty = load({keyword})"]
    # `self.size` without a call is no call; the two calls share a line.
    assert [site.row for site in cases["size"].sites] == [13, 13] and cases["size"].label == NOT_NESTED
    assert all(case.language == "Python" and case.typed == 0 for case in cases.values())


def test_a_python_keyword_a_call_passes_already_is_not_the_one_added(tmp_path: Path) -> None:
    text = "def run(x, **options):\n    return x\n\n\nrun(1, timeout=2)\nrun(2, strict=True, retries=1)\n"
    for seed in range(4):
        (case,) = argument_cases([_write(tmp_path, "run.py", text)], 5, seed)[0]
        assert all(piece[2] == ", verbose=False" for site in case.sites for piece in site.pieces)


def test_javascript_functions_arrows_and_methods_with_their_nested_calls(tmp_path: Path) -> None:
    cases = cases_of(tmp_path, "api.js", SCRIPT)
    # `parse` is called once; `send` is a method, called through `this.` twice on one line
    # (its definition is no call); two of `load`'s calls stand inside `map(…)` and `wrap(…)`.
    assert set(cases) == {"load", "send"}
    literal = cases["load"].sites[0].pieces[0][2].lstrip(", ")
    assert edited_calls(cases["load"]) == [
        f'const a = load("x", {literal}); // load("comment")', f"items.map((item) => load(item, {literal}));",
        f"const b = wrap(load(`${{base}}/y`, {literal}));"]
    drawn = cases["send"].sites[0].pieces[0][2].lstrip(", ")
    assert edited_calls(cases["send"]) == [f'return [this.send("/one", {drawn}), this.send("/two")];',
                                           f'return [this.send("/one"), this.send("/two", {drawn})];']
    assert cases["load"].label == NESTED and cases["send"].label == NOT_NESTED


def test_a_function_with_a_call_spanning_lines_is_left_out(tmp_path: Path) -> None:
    text = "function load(a) {}\nload(1);\nload(2);\nload(\n  3,\n);\n"
    assert argument_cases([_write(tmp_path, "a.ts", text)], 5, 0)[0] == []


def test_an_argument_added_by_hand_is_carried_to_the_next_call_through_the_server(tmp_path: Path) -> None:
    _write(tmp_path, "load.py", 'def load(path, mode="r"):\n    return open(path, mode)\n\n\n'
                                'first = load("a.txt")\nsecond = load("b.txt")\n')
    _write(tmp_path, "load.js", 'function load(url) {\n  return fetch(url);\n}\nconst a = load("x");\n'
                                "items.map((item) => load(item));\n")
    report = run_arguments_bench(tmp_path, 10, SERVER)
    assert report.files == 2 and len(report.outcomes) == 2
    # The call-site pattern needs no network: the first proposal is the next call's argument,
    # and with it every call is done.
    assert all(o.shown and o.exact and o.chain == DONE for o in report.outcomes)
    printed = format_arguments(report, 0.5)
    assert printed.startswith("2 arguments added at a first call in 2 files, threshold 0.5")
    assert "precision 100.0%" in printed and "every call done 100.0%" in printed
    assert NESTED in printed and "JS/TS" in printed


def test_the_command_prints_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, "load.py", "def load(x):\n    return x\n\n\nload(1)\nload(2)\n")
    assert main(["bench", "arguments", str(tmp_path), "--limit", "5", "--seed", "1"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("1 arguments added at a first call in 1 files, threshold 0.5")
    assert "every call done 100.0%" in printed
