"""``redraft bench``: each suite run and printed as a table; all but ``decode`` drive
``redraft serve`` as an editor would."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from types import ModuleType


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
    command.append("serve")
    if args.suite == "fuzz":
        from lsp_server.bench.fuzz import format_fuzz, run_fuzz_bench

        print(format_fuzz(run_fuzz_bench(args.sessions, args.steps, command, args.seed)))
        return 0

    if args.suite == "soak":
        from lsp_server.bench.soak import format_soak, run_soak_bench

        print(format_soak(run_soak_bench(args.requests, args.files or None, command)))
        return 0

    if args.suite == "latency":
        from lsp_server.bench.latency import Typing, format_latency, run_latency_bench

        files = args.files or [Path(module.__file__ or "") for module in _latency_modules()]
        typing = Typing(args.back_and_forth, args.rest_ms, args.auto_close, args.every_line, args.at_end)
        typed = run_latency_bench(files, args.lines, args.interval_ms, command, workspace=args.workspace,
                                  threshold=args.threshold, runs=args.runs, typing=typing)
        print(format_latency(typed, args.interval_ms))
        return 0

    if args.suite == "rename":
        from lsp_server.bench.rename import format_rename, run_rename_bench

        if not args.folder.is_dir():
            raise ValueError(f"{args.folder} is not a folder")
        renames = run_rename_bench(args.folder, args.limit, command, args.threshold, anywhere=args.at == "any",
                                   members=args.members)
        print(format_rename(renames, args.threshold))
        return 0

    if args.suite == "nextedit":
        from lsp_server.bench.nextedit import format_nextedit, run_nextedit_bench

        print(format_nextedit(run_nextedit_bench(args.data, args.limit, args.cases_per_pair, command,
                                                 threshold=args.threshold, bottom_up=args.bottom_up,
                                                 hunk_context=args.hunk_context, typed=args.typed,
                                                 together=args.together)))
        return 0

    from lsp_server.bench.fim import (
        AUTOMATIC,
        INVOKED,
        format_report,
        held_out_cases,
        in_dialect,
        load_cases,
        run_fim_bench,
    )
    from lsp_server.bench.paired import compare, format_comparison, load_results, save_results

    saved = load_results(args.against) if args.against is not None else None  # a bad file fails before the run
    trigger_kind = INVOKED if args.invoked else AUTOMATIC
    if args.dev is not None:
        with tempfile.TemporaryDirectory(prefix="redraft-bench-workspace-") as folder:
            workspace = None if args.no_workspace else Path(folder)
            spans = held_out_cases(args.dev, args.limit or 400, workspace, args.dialect)
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
