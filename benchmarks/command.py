"""``redraft bench``: each suite run and printed as a table; all but ``decode`` drive
``redraft serve`` as an editor would, and ``http`` drives ``redraft http`` as its clients do."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from types import ModuleType

from benchmarks.case_dialect import DIALECTS
from lsp_server.arguments import MAX_CANVAS, canvas_size
from lsp_server.options import ServerOptions


def add_bench_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``redraft bench`` and its suites, registered on the ``redraft`` command's subparsers."""
    bench = commands.add_parser("bench", help="benchmarks that print a table")
    suites = bench.add_subparsers(dest="suite", required=True)
    fim = suites.add_parser("fim", help="HumanEval infilling through the real server")
    fim_cases = fim.add_mutually_exclusive_group(required=True)
    fim_cases.add_argument("--data", type=Path, help="a HumanEval-infilling .jsonl.gz")
    fim_cases.add_argument("--dev", type=Path,
                           help="held-out spans cut from a corpus .jsonl (as `redraft calibrate`; exact match only)")
    fim.add_argument("--limit", type=int, help="first N cases only (--dev: default 400)")
    fim.add_argument("--spans", choices=("mix", "blocks"), default="mix",
                     help="--dev: spans cut as calibration cuts them (mix), or missing bodies of 2 to 8 lines "
                          "after a line that opens one, the cursor on its empty first line (blocks)")
    fim.add_argument("--threshold", type=float, default=0.0, help="confidenceThreshold sent to the server")
    fim.add_argument("--invoked", action="store_true",
                     help="ask as a user who pressed the key (triggerKind Invoked; item 0 applied), not as you type")
    fim.add_argument("--no-workspace", action="store_true",
                     help="--dev: open each case alone, without its package's other files as the workspace")
    fim.add_argument("--dialect", choices=DIALECTS, default="lf",
                     help="rewrite each case with \\r\\n line breaks and/or tab indents (the same spans; "
                          "a case cut inside an indent that becomes a tab is left out)")
    fim.add_argument("--save", type=Path, metavar="FILE", help="also write every case's result to FILE (for --against)")
    fim.add_argument("--against", type=Path, metavar="FILE",
                     help="compare case by case with a run saved by --save on the same cases: the cases only one "
                          "run got, and a sign test")
    fuzz = suites.add_parser("fuzz", help="random editing sessions; crashes and document divergences")
    fuzz.add_argument("--sessions", type=int, default=200)
    fuzz.add_argument("--steps", type=int, default=25, help="actions per session")
    fuzz.add_argument("--seed", type=int, default=0)
    soak = suites.add_parser("soak", help="many requests with cancellations against real files")
    soak.add_argument("files", type=Path, nargs="*", help="files to edit (default: stdlib modules)")
    soak.add_argument("--requests", type=int, default=10_000)
    latency = suites.add_parser("latency", help="simulated typing through the real server")
    latency.add_argument("files", type=Path, nargs="*", help="files to type into (default: stdlib modules)")
    latency.add_argument("--lines", type=int, default=4, help="lines typed per file")
    latency.add_argument("--interval-ms", type=float, default=100.0, help="time between keystrokes")
    latency.add_argument("--workspace", type=Path,
                         help="a folder the server watches and indexes as its workspace (e.g. the files' own)")
    latency.add_argument("--threshold", type=float, default=ServerOptions.confidence_threshold,
                         help="confidenceThreshold sent to the server (default: the server's; 0 scores every "
                              "candidate in full, the slowest setting)")
    latency.add_argument("--runs", type=int, default=1,
                         help="replay the typing this many times, each against a new server, and pool them "
                              "(one run's p95 moves by several ms on a busy 2-core machine)")
    latency.add_argument("--back-and-forth", action="store_true",
                         help="type the lines in pairs, each in two halves, A B A B: the table adds the first "
                              "keystrokes back at a place the server has left")
    latency.add_argument("--rest-ms", type=float, default=0.0,
                         help="before typing at a place, the cursor rests there this long, announced with "
                              "redraft/cursor as the Neovim and VS Code clients do (default 0: not announced)")
    latency.add_argument("--auto-close", action="store_true",
                         help="close brackets as editors do: typing ( [ { also inserts its closer after the "
                              "cursor, and typing the closer there moves over it")
    latency.add_argument("--every-line", action="store_true",
                         help="type lines of any length, comments too (default: code lines of 12 characters or "
                              "more), so that the suggestions judged are those of all typing")
    latency.add_argument("--at-end", action="store_true",
                         help="type each line at the end of its file, the text after it gone: new code written "
                              "top down, whose blocks have no body yet when their header is typed")
    nextedit = suites.add_parser("nextedit", help="real hunks replayed through the real server")
    nextedit.add_argument("--data", type=Path, required=True, help="jsonl of {path, old, new} file pairs")
    nextedit.add_argument("--limit", type=int, help="first N file pairs only")
    nextedit.add_argument("--cases-per-pair", type=int, default=2, help="hunks asked about per file pair")
    nextedit.add_argument("--bottom-up", action="store_true",
                          help="replay the hunks after the target, from the last one up (the next edit is above)")
    nextedit.add_argument("--threshold", type=float, default=0.0,
                          help="nextEditConfidenceThreshold sent to the server (0: see every proposal; "
                               "0.5, the default the server serves, measures the served latency)")
    nextedit.add_argument("--hunk-context", type=int, default=0, metavar="N",
                          help="cut hunks as git diff -U<N> does (changes up to 2N lines apart are one "
                               "hunk, with N unchanged lines around it); default 0: each run of changed "
                               "lines is a hunk")
    nextedit.add_argument("--together", action="store_true",
                          help="send the applied hunks as the changes of one didChange, as a tool applying "
                               "a whole diff may")
    nextedit.add_argument("--typed", action="store_true",
                          help="type the last applied hunk when it changes one line, a word or a character "
                               "at a time, asking after each piece: the table adds the share of those "
                               "requests that showed a proposal before the line was finished")
    rename = suites.add_parser("rename", help="one use of a name renamed by hand, then the next edit asked for")
    rename.add_argument("folder", type=Path,
                        help="a folder of Python, JavaScript and TypeScript files (all of them, recursively)")
    rename.add_argument("--limit", type=int, default=300, help="renames, drawn at random")
    rename.add_argument("--threshold", type=float, default=0.5,
                        help="nextEditConfidenceThreshold sent to the server (default: the served default)")
    rename.add_argument("--at", choices=("first", "any"), default="first",
                        help="the use renamed by hand: the first, or one drawn at random (uses above it too)")
    rename.add_argument("--members", action="store_true",
                        help="rename attributes a class sets (self.name = ...) and methods it defines, used "
                             "through self. (in JS/TS a class's members used through this.), instead of "
                             "functions' parameters and locals")
    rename.add_argument("--typing", choices=("select", "append", "retype"), default="select",
                        help="how the use is renamed by hand: select it and type over it, type a suffix at its end "
                             "(the new names are the old with a suffix), or delete it and type the new one")
    repeated = suites.add_parser("repeated", help="the same change made to each of a run of similar lines, by hand "
                                                  "on one, then the next edit asked for")
    repeated.add_argument("--at", choices=("first", "any"), default="first",
                          help="the line edited by hand: the run's first, or one drawn at random (lines above too)")
    arguments = suites.add_parser("arguments", help="an argument added by hand at a function's first call, then the "
                                                    "next edit asked for")
    for suite in (repeated, arguments):
        suite.add_argument("folder", type=Path,
                           help="a folder of Python, JavaScript and TypeScript files (all of them, recursively)")
        suite.add_argument("--limit", type=int, default=300, help="cases, drawn at random")
        suite.add_argument("--threshold", type=float, default=0.5,
                           help="nextEditConfidenceThreshold sent to the server (default: the served default)")
        suite.add_argument("--seed", type=int, default=0, help="the draw's seed")
        suite.add_argument("--typing", choices=("piece", "chars"), default="piece",
                           help="the hand edit sent as one didChange per piece, or one per character typed")
        suite.add_argument("--by-hand", type=int, default=1,
                           help="sites edited by hand, one after the other, before the next edit is asked for "
                                "(default 1)")
    http = suites.add_parser("http", help="many clients at once against redraft http: throughput, latency, 429s")
    http.add_argument("files", type=Path, nargs="*", help="files whose lines are completed (default: stdlib modules)")
    http.add_argument("--clients", default=None,
                      help="concurrent clients, or a list of counts for a row each (default 1,4,8; --burst: 32)")
    http.add_argument("--requests", type=int, default=200, help="requests a row")
    http.add_argument("--burst", action="store_true",
                      help="send every request at once and check each is answered or refused with 429, and "
                           "that the server is still up")
    http.add_argument("--url", help="a running redraft http to measure (default: one started for the bench)")
    http.add_argument("--max-pending", type=int, help="--max-pending of the server started (default: its own)")
    http.add_argument("--workers", type=int, help="--workers of the server started (default: its own)")
    http.add_argument("--max-tokens", type=int, default=24,
                      help="max_tokens of each request (default 24: a line, answered on a 32-token canvas)")
    decode = suites.add_parser("decode", help="commit rules side by side on the same FIM cases (in-process)")
    cases = decode.add_mutually_exclusive_group(required=True)
    cases.add_argument("--data", type=Path, help="a HumanEval-infilling .jsonl.gz")
    cases.add_argument("--dev", type=Path, help="held-out spans cut from a corpus .jsonl (as `redraft calibrate`)")
    decode.add_argument("--limit", type=int, default=100, help="first N cases only")
    decode.add_argument("--canvas", type=canvas_size, default=32, help=f"canvas tokens (2–{MAX_CANVAS})")


def bench(args: argparse.Namespace) -> int:
    import sys

    if args.suite == "decode":
        from model.bench.decode import dev_cases, format_rows, read_cases, run_decode_bench
        from model.model_folder import SHIPPED_DIR
        from model.runtime.serving import load_served_model

        loaded = load_served_model(args.model or SHIPPED_DIR)
        cases = read_cases(args.data, args.limit) if args.data else dev_cases(args.dev, args.limit)
        print(format_rows(run_decode_bench(loaded, cases, args.canvas)))
        return 0

    command = [sys.executable, "-m", "lsp_server"]
    if args.model:
        command += ["--model", str(args.model)]
    if args.suite == "http":
        from benchmarks.http import format_http, parse_clients, run_http_bench

        clients = parse_clients(args.clients or ("32" if args.burst else "1,4,8"))
        files = args.files or [Path(module.__file__ or "") for module in _latency_modules()]
        print(format_http(run_http_bench(files, clients, args.requests, command, url=args.url, burst=args.burst,
                                         max_tokens=args.max_tokens, max_pending=args.max_pending,
                                         workers=args.workers)))
        return 0
    command.append("serve")
    if args.suite == "fuzz":
        from benchmarks.fuzz import format_fuzz, run_fuzz_bench

        print(format_fuzz(run_fuzz_bench(args.sessions, args.steps, command, args.seed)))
        return 0

    if args.suite == "soak":
        from benchmarks.soak import format_soak, run_soak_bench

        print(format_soak(run_soak_bench(args.requests, args.files or None, command)))
        return 0

    if args.suite == "latency":
        from benchmarks.latency import Typing, format_latency, run_latency_bench

        files = args.files or [Path(module.__file__ or "") for module in _latency_modules()]
        typing = Typing(args.back_and_forth, args.rest_ms, args.auto_close, args.every_line, args.at_end)
        typed = run_latency_bench(files, args.lines, args.interval_ms, command, workspace=args.workspace,
                                  threshold=args.threshold, runs=args.runs, typing=typing)
        print(format_latency(typed, args.interval_ms))
        return 0

    if args.suite == "rename":
        from benchmarks.rename import format_rename, run_rename_bench

        if not args.folder.is_dir():
            raise ValueError(f"{args.folder} is not a folder")
        renames = run_rename_bench(args.folder, args.limit, command, args.threshold, anywhere=args.at == "any",
                                   members=args.members, typing=args.typing)
        print(format_rename(renames, args.threshold))
        return 0

    if args.suite in ("repeated", "arguments"):
        if not args.folder.is_dir():
            raise ValueError(f"{args.folder} is not a folder")
        if args.by_hand < 1:
            raise ValueError("--by-hand must be at least 1")
        if args.suite == "repeated":
            from benchmarks.repeated_lines import format_repeated, run_repeated_bench

            repeats = run_repeated_bench(args.folder, args.limit, command, args.threshold, args.seed,
                                         anywhere=args.at == "any", typing=args.typing, by_hand=args.by_hand)
            print(format_repeated(repeats, args.threshold))
        else:
            from benchmarks.arguments import format_arguments, run_arguments_bench

            print(format_arguments(run_arguments_bench(args.folder, args.limit, command, args.threshold, args.seed,
                                                       typing=args.typing, by_hand=args.by_hand), args.threshold))
        return 0

    if args.suite == "nextedit":
        from benchmarks.nextedit import format_nextedit, run_nextedit_bench

        print(format_nextedit(run_nextedit_bench(args.data, args.limit, args.cases_per_pair, command,
                                                 threshold=args.threshold, bottom_up=args.bottom_up,
                                                 hunk_context=args.hunk_context, typed=args.typed,
                                                 together=args.together)))
        return 0

    from benchmarks.fim import (
        AUTOMATIC,
        INVOKED,
        format_report,
        held_out_cases,
        in_dialect,
        load_cases,
        run_fim_bench,
    )
    from benchmarks.paired import compare, format_comparison, load_results, save_results

    saved = load_results(args.against) if args.against is not None else None  # a bad file fails before the run
    trigger_kind = INVOKED if args.invoked else AUTOMATIC
    if args.dev is not None:
        with tempfile.TemporaryDirectory(prefix="redraft-bench-workspace-") as folder:
            workspace = None if args.no_workspace else Path(folder)
            spans = held_out_cases(args.dev, args.limit or 400, workspace, args.dialect, args.spans == "blocks")
            report = run_fim_bench(args.dev, None, args.threshold, command, cases=spans, workspace=workspace,
                                   trigger_kind=trigger_kind, dialect=args.dialect)
    else:
        rewritten = in_dialect(load_cases(Path(args.data), args.limit), args.dialect)
        report = run_fim_bench(Path(args.data), None, args.threshold, command, cases=rewritten,
                               trigger_kind=trigger_kind, dialect=args.dialect)
    print(format_report(report))
    if args.save is not None:
        save_results(report, args.save)
    if saved is not None:
        note = "" if saved.threshold == report.threshold else \
            f"(the saved run was at threshold {saved.threshold:g}, this one at {report.threshold:g})"
        print()
        print(format_comparison(compare(report, saved), args.against, note))
    return 0


def _latency_modules() -> list[ModuleType]:
    """Real, varied files that every Python install has."""
    import argparse as argparse_module
    import json.decoder
    import textwrap

    return [argparse_module, json.decoder, textwrap]
