"""`redraft bench latency`: typing through the real server, here inside a workspace."""

import sys
from pathlib import Path

import pytest

from benchmarks.latency import LatencyReport, Typing, format_latency, pooled, run_latency_bench, typing_spots
from lsp_server.cli import main
from lsp_server.options import ServerOptions

SERVER = [sys.executable, "-m", "lsp_server", "serve"]


def test_typing_in_a_workspace_answers_every_keystroke_or_drops_it_for_the_next(tmp_path: Path) -> None:
    body = "".join(f"def handler_{n}(request):\n    return respond(request, status={n})\n\n" for n in range(30))
    module = tmp_path / "handlers.py"
    module.write_text(body)
    (tmp_path / "views.py").write_text(body.replace("handler_", "view_"))
    [(path, text, start, end)] = typing_spots([module], 1, seed=0)
    assert path == module and start >= 1_000 and text[start:end].strip()
    report = run_latency_bench([module], 1, 20.0, SERVER, workspace=tmp_path)
    typed = len(text[start:end].lstrip())
    assert report.errors == 0 and report.requests == typed and len(report.latencies_ms) >= 1
    assert report.cold_start_ms > 0 and "cold start to first answer" in format_latency(report, 20.0)
    assert report.threshold == ServerOptions().confidence_threshold  # what users get, unless told otherwise
    # The server worked while the user typed, and rests once they stop: a second of quiet
    # costs it far less than a second of CPU (a busy loop would cost one or two).
    assert report.typing_cpu_s > 0 and 0 <= report.idle_cpu_s < 0.5
    assert "server CPU while typing" in format_latency(report, 20.0)


def test_the_threshold_reaches_the_server_and_the_table(tmp_path: Path) -> None:
    module = tmp_path / "handlers.py"
    module.write_text("".join(f"def handler_{n}(request):\n    return respond(request, status={n})\n\n"
                              for n in range(30)))
    report = run_latency_bench([module], 1, 20.0, SERVER, threshold=1.0)  # no confidence reaches 1
    assert report.errors == 0 and report.latencies_ms and report.shown == 0
    assert ["confidence", "threshold", "1"] in [row.split() for row in format_latency(report, 20.0).splitlines()]


def test_runs_are_pooled_request_by_request_and_each_runs_figures_stay_in_the_table() -> None:
    first = LatencyReport(latencies_ms=[10.0, 20.0], shown=1, dropped=1, cold_start_ms=900.0, rss_start_mb=190,
                          rss_end_mb=200, typing_cpu_s=0.06, idle_cpu_s=0.0)
    second = LatencyReport(latencies_ms=[30.0, 40.0, 50.0], shown=2, errors=1, cold_start_ms=1500.0,
                           rss_start_mb=185, rss_end_mb=210, typing_cpu_s=0.04, idle_cpu_s=0.01)
    third = LatencyReport(latencies_ms=[60.0], cold_start_ms=1000.0, rss_start_mb=195, rss_end_mb=205)
    report = pooled([first, second, third])
    assert report.latencies_ms == [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
    assert (report.shown, report.dropped, report.errors, report.requests) == (3, 1, 1, 8)
    assert report.cold_start_ms == 1000.0  # the median run's
    assert (report.rss_start_mb, report.rss_end_mb, report.idle_cpu_s) == (185, 210, 0.01)
    assert abs(report.typing_cpu_s - 0.1) < 1e-9
    table = format_latency(report, 100.0)
    assert "15.0 / 19.5, 40.0 / 49.0, 60.0 / 60.0 ms" in table and "(median)" in table
    assert "12.5 ms per keystroke (12% of a core)" in table  # 100 ms of CPU over 8 keystrokes
    assert pooled([first]) is first


def test_the_command_refuses_fewer_than_one_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "latency", "--runs", "0"]) == 1
    assert "runs must be at least 1" in capsys.readouterr().err


def test_back_and_forth_types_two_files_lines_in_halves_and_times_the_first_keystrokes_back(tmp_path: Path) -> None:
    body = "".join(f"def handler_{n}(request):\n    return respond(request, status={n})\n\n" for n in range(30))
    files = [tmp_path / "handlers.py", tmp_path / "views.py"]
    files[0].write_text(body)
    files[1].write_text(body.replace("handler_", "view_"))
    spots = typing_spots(files, 1, seed=0)
    report = run_latency_bench(files, 1, 20.0, SERVER, typing=Typing(back_and_forth=True))
    typed = sum(len(text[start:end].lstrip()) for _, text, start, end in spots)
    assert report.errors == 0 and report.requests == typed
    # Each line's second half starts back at its place: two first keystrokes, each answered or dropped.
    assert len(report.back_ms) <= 2 and set(report.back_ms) <= set(report.latencies_ms)
    assert "first keystroke back at a place" in format_latency(report, 20.0)
    assert "first keystroke back" not in format_latency(run_latency_bench(files[:1], 1, 20.0, SERVER), 20.0)


def test_back_and_forth_pairs_lines_of_two_files_and_types_an_odd_file_s_alone() -> None:
    from benchmarks.latency import _Line, _pairs

    paths = [Path("a.py"), Path("a.py"), Path("b.py"), Path("c.py"), Path("c.py")]
    lines = [_Line.of(f"file:///{n}", "x = 1\n", 0, 5) for n in range(5)]
    assert [[line.uri for line in batch] for batch in _pairs(paths, lines)] == [
        ["file:///0", "file:///2"], ["file:///1"], ["file:///3"], ["file:///4"]]


def test_a_cursor_resting_first_is_announced_and_each_place_s_first_keystroke_is_timed(tmp_path: Path) -> None:
    module = tmp_path / "handlers.py"
    module.write_text("".join(f"def handler_{n}(request):\n    return respond(request, status={n})\n\n"
                              for n in range(30)))
    [(_, text, start, end)] = typing_spots([module], 1, seed=0)
    report = run_latency_bench([module], 1, 20.0, SERVER, typing=Typing(rest_ms=200.0))
    assert report.errors == 0 and report.requests == len(text[start:end].lstrip())
    assert report.typing.rest_ms == 200.0
    assert len(report.first_ms) <= 1 and set(report.first_ms) <= set(report.latencies_ms)
    table = format_latency(report, 20.0)
    assert ["typing", "the", "cursor", "rests", "200", "ms", "first", "(redraft/cursor)"] in [
        row.split() for row in table.splitlines()]
    assert "first keystroke at a new place p50 / p95" in table


def test_auto_closed_brackets_bring_their_closer_which_is_typed_over_and_every_keystroke_asks() -> None:
    import asyncio

    from benchmarks.latency import _Line, _type

    class Client:
        def __init__(self) -> None:
            self.changes: list[str] = []
            self.requests = 0

        async def did_change(self, uri: str, version: int, changes: list[dict[str, object]]) -> None:
            self.changes.append(str(changes[0]["text"]))

        async def cancel(self, request_id: int) -> None:
            pass

        def send_request(self, method: str, params: object) -> tuple[int, asyncio.Future[object]]:
            self.requests += 1
            future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
            future.set_result(None)
            return self.requests, future

    text = "x = 1\n" * 200 + "    total = f(a[0]) + g(\n    )\n"
    start = text.index("    total")
    line = _Line.of("file:///t.py", text, start, text.index("\n", start))
    client, report = Client(), LatencyReport(typing=Typing(auto_close=True))
    asyncio.run(_type(client, line, line.end, 0.0, report, 1))  # type: ignore[arg-type]  # a stand-in client
    assert client.changes == [*"total = f", "()", "a", "[]", "0", " ", "+", " ", "g", "()"]
    assert client.requests == len("total = f(a[0]) + g(") == len(report.latencies_ms)
    assert line.document == text[:line.end] + ")" + text[line.end:]  # g('s closer stays, as in an editor


def test_a_shown_suggestion_is_right_as_far_as_it_goes_and_whole_when_it_ends_the_line_as_the_file_does() -> None:
    from benchmarks.latency import judged

    final = "x = 1\n    total = compute(a, b)\ny = 2\n"
    document = "x = 1\n    total = comp\ny = 2\n"
    cursor = document.index("\ny = 2")

    def insert(text: str) -> dict[str, object]:
        return {"insertText": text}

    whole = judged(final, document, cursor, insert("ute(a, b)"))
    assert (whole.right, whole.whole, whole.shown, whole.line_start) == (True, True, "    total = compute(a, b)", 6)
    partial = judged(final, document, cursor, insert("ute("))
    assert (partial.right, partial.whole) == (True, False)
    wrong = judged(final, document, cursor, insert("are(a, b)"))
    assert (wrong.right, wrong.whole) == (False, False)
    # A range that replaces the word typed so far is judged by the text it leaves.
    word = {"line": 1, "character": 12}
    ranged = {"insertText": "compute(a, b)", "range": {"start": word, "end": {"line": 1, "character": 16}}}
    assert judged(final, document, cursor, ranged).whole
    # A suggestion that runs past the line's end is right only if the next lines follow too.
    assert judged(final, document, cursor, insert("ute(a, b)\ny = 2")).whole
    assert not judged(final, document, cursor, insert("ute(a, b)\nz")).right


def test_each_distinct_suggestion_counts_once_however_long_it_stays_shown() -> None:
    import asyncio

    from benchmarks.latency import _Line, _type

    class Client:
        """Suggests the line as the file has it for the first 11 keystrokes, then
        ``compute(a, c)``, as type-through keeps a suggestion while the typing agrees."""

        def __init__(self, line: _Line) -> None:
            self.line = line

        async def did_change(self, uri: str, version: int, changes: list[dict[str, object]]) -> None:
            pass

        async def cancel(self, request_id: int) -> None:
            pass

        def send_request(self, method: str, params: dict[str, dict[str, int]]) -> tuple[int, asyncio.Future[object]]:
            row_start = self.line.document.rfind("\n", 0, self.line.offset) + 1
            typed = self.line.document[row_start:row_start + params["position"]["character"]].lstrip()
            suggested = "total = compute(a, b)" if len(typed) <= 11 else "total = compute(a, c)"
            rest = suggested[len(typed):] if suggested.startswith(typed) else ""
            future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
            future.set_result({"items": [{"insertText": rest}] if rest else []})
            return 1, future

    text = "x = 1\n" * 200 + "    total = compute(a, b)\n"
    start = text.index("    total")
    line = _Line.of("file:///t.py", text, start, text.index("\n", start))
    report = LatencyReport()
    asyncio.run(_type(Client(line), line, line.end, 0.0, report, 1))  # type: ignore[arg-type]  # a stand-in client
    typed = len("total = compute(a, b)")
    assert report.requests == typed and report.shown == 11 + 8
    assert report.right == 11 and report.whole_line == report.right
    # Two suggestions were shown: the right one over 11 keystrokes, then `c)` for 8.
    assert sorted(report.distinct.values()) == [False, True]
    assert "1 of 2 (50.0%)" in format_latency(report, 100.0)


def test_every_line_types_short_lines_and_comments_too(tmp_path: Path) -> None:
    module = tmp_path / "short.py"
    module.write_text(f'"""{"a" * 1_000}"""\n' + "if x:\n    pass\n# done\nelse_branch_is_here = 2\n\n")
    long_only = typing_spots([module], 10, seed=0)
    every = typing_spots([module], 10, seed=0, every_line=True)
    typed = {text[start:end].strip() for _, text, start, end in every}
    assert {text[start:end].strip() for _, text, start, end in long_only} == {"else_branch_is_here = 2"}
    assert typed == {"if x:", "pass", "# done", "else_branch_is_here = 2"}
    assert "every line" in Typing(every_line=True).describe()


def test_at_the_end_each_line_is_typed_with_nothing_after_it_as_new_code_is_written() -> None:
    from benchmarks.latency import _Line

    text = "def f(xs):\n    for x in xs:\n        print(x)\n    return 0\n"
    start = text.index("    for")
    line = _Line.of("file:///t.py", text, start, text.index("\n", start), at_end=True)
    assert line.document == "def f(xs):\n    \n" and line.text == "def f(xs):\n    for x in xs:\n"
    assert line.text[line.offset:line.end] == "for x in xs:"
    assert "at the end of the file (new code)" in Typing(at_end=True).describe()
