"""HumanEval-infilling through the real server: one inline-completion request per case.

For each case the document is ``prompt + suffix`` and the cursor sits at the end of the prompt.
The server's first item, applied as an edit, gives the program that is scored:

* exact: the program equals ``prompt + canonical_solution + suffix`` once both are split into
  lines (``str.splitlines``) and every line is ``rstrip()``-ed; so trailing spaces and a final
  newline don't count, but any other character, line break or blank line does.
* pass@1: ``program + "\\n" + test + "\\ncheck(<entry_point>)\\n"`` exits with code 0 under
  ``python -I`` in a fresh temporary directory within 10 s.
* shown: the answer had a first item with non-empty ``insertText``.

No answer (null, an empty list, an error or a timeout) counts as neither exact nor passed.
Latency is wall-clock from sending the request to its answer, for answered requests only,
after one warm-up request that absorbs model loading.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import math
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from benchmarks.case_dialect import rewritten, rewritten_text
from benchmarks.lsp_client import LspClient, LspError, LspTimeout, language_id_for
from benchmarks.lsp_text import apply_item, first_item, item_text, offset_to_position
from benchmarks.scoring import is_exact, percentile, run_program

log = logging.getLogger("redraft.bench.fim")

AUTOMATIC = 2  # InlineCompletionTriggerKind.Automatic
INVOKED = 1  # the user asked (a key): up to 3 items, the Automatic answer first; item 0 is applied


@dataclass(frozen=True)
class FimCase:
    task_id: str
    entry_point: str
    prompt: str
    suffix: str
    canonical_solution: str
    test: str
    path: str = ""  # where the document lives in the benchmark's workspace; "" for none
    extension: str = ".py"  # its file's, so that a document without a workspace still names its language

    @property
    def language(self) -> str:
        """The languageId the document is opened with."""
        return language_id_for(f"case{self.extension}")


DATA_FIELDS = ("task_id", "entry_point", "prompt", "suffix", "canonical_solution", "test")


@dataclass(frozen=True)
class CaseResult:
    task_id: str
    completion: str | None
    """insertText of the first item; None when nothing was shown."""
    exact: bool
    passed: bool
    latency_ms: float | None
    """None when the request failed (error or timeout)."""
    error: str | None = None
    language: str = "python"  # the case's languageId
    lines: int = 1  # the reference's lines: 2 or more make the case a block
    # A block's shown text is its first line exactly (what one line of ghost text can get right).
    first_line: bool = False
    source: str = ""  # which source wrote what was shown (``shown_calibration.source_of``)


@dataclass(frozen=True)
class FimReport:
    data_path: Path
    threshold: float
    encoding: str
    results: tuple[CaseResult, ...]
    tested: bool = True  # the cases had tests to run (held-out spans have none)
    dialect: str = "lf"  # the line breaks and indents the cases were written in (``in_dialect``)

    @property
    def cases(self) -> int:
        return len(self.results)

    @property
    def shown(self) -> int:
        return sum(r.completion is not None for r in self.results)

    @property
    def exact(self) -> int:
        return sum(r.exact for r in self.results)

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def errors(self) -> int:
        return sum(r.error is not None for r in self.results)

    @property
    def latencies_ms(self) -> list[float]:
        return [r.latency_ms for r in self.results if r.latency_ms is not None]


def program_with_tests(program: str, case: FimCase) -> str:
    return program + "\n" + case.test + f"\ncheck({case.entry_point})\n"


# -- the run -----------------------------------------------------------------------------------


def in_dialect(cases: Sequence[FimCase], dialect: str) -> list[FimCase]:
    """The cases with ``\\r\\n`` breaks and/or tab indents (``case_dialect.py``): each
    case's whole text rewritten, the cuts where they land; a case cut inside an indent that
    becomes a tab is left out."""
    written = []
    for case in cases:
        middle_at = len(case.prompt)
        done = rewritten(case.prompt + case.canonical_solution + case.suffix,
                         [middle_at, middle_at + len(case.canonical_solution)], dialect)
        if done is not None:
            text, (start, end) = done
            written.append(replace(case, prompt=text[:start], canonical_solution=text[start:end], suffix=text[end:]))
    if len(written) < len(cases):
        log.info("%d of %d cases written in %s", len(written), len(cases), dialect)
    return written


def lines_of(middle: str) -> int:
    """How many lines a reference fills (a final line break ends the last, it starts none)."""
    return middle.rstrip("\n").count("\n") + 1


def first_line_right(completion: str | None, reference: str) -> bool:
    """Whether ``completion`` is the reference's first line (its line break or not)."""
    first = reference.split("\n", 1)[0]
    return completion is not None and bool(first.strip()) and completion.rstrip("\n").rstrip() == first.rstrip()


def held_out_cases(corpus: Path, limit: int, workspace: Path | None = None, dialect: str = "lf",
                   blocks: bool = False) -> list[FimCase]:
    """Spans cut from held-out code (a corpus ``dev.jsonl``) as ``redraft calibrate`` cuts
    them for its FIM scoring, as cases without tests: exact match only; ``blocks``: bodies
    of 2 to 8 lines cut out where a block is expected, the cursor where an editor leaves it
    (``block_site.missing_bodies``). With ``workspace``,
    every held-out file is written there whole, one folder per package, and each case is
    the document at its file's path: the server sees the rest of the package as an editor
    would, and the file's saved copy (which holds the answer) must not be used."""
    from model.data.corpus import read_corpus
    from model.fim.calibrate_blocks import block_holes
    from model.fim.held_out_cases import cut_from_files

    files = read_corpus(corpus)
    if blocks:
        cut = [(source, source.text[:start], source.text[start:end], source.text[end:])
               for source, start, end in block_holes(files, 4 * limit, seed=7)
               if lines_of(source.text[start:end]) >= 2][:limit]
    else:
        cut = cut_from_files(files, limit, seed=7)
    if workspace is not None:
        for source in files:
            destination = workspace / source.package / source.path
            destination.parent.mkdir(parents=True, exist_ok=True)
            text = rewritten_text(source.text, dialect)
            destination.write_bytes(text.encode("utf-8"))  # as written: no newline translation
    return in_dialect([FimCase(f"dev/{n}", "", prefix, suffix, middle, "",
                               f"{source.package}/{source.path}" if workspace is not None else "",
                               PurePosixPath(source.path).suffix or ".py")
                       for n, (source, prefix, middle, suffix) in enumerate(cut)],
                      dialect)


def case_uri(case: FimCase, n: int, workspace: Path | None) -> str:
    """Where the ``n``-th case's document lives: at its file's path in the workspace, else
    ``file:///bench/N`` with its file's extension (the server tells the language from it)."""
    if workspace is not None and case.path:
        return (workspace / case.path).as_uri()
    return f"file:///bench/{n}{case.extension}"


def load_cases(data_path: Path, limit: int | None = None) -> list[FimCase]:
    cases: list[FimCase] = []
    with gzip.open(data_path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if limit is not None and len(cases) >= limit:
                break
            if line.strip():
                raw = json.loads(line)
                cases.append(FimCase(**{name: str(raw[name]) for name in DATA_FIELDS}))
    return cases


@dataclass(frozen=True)
class _Answer:
    program: str | None
    completion: str | None
    latency_ms: float | None
    error: str | None
    source: str = ""


async def shown_source(client: LspClient, item: dict[str, Any]) -> str:
    """The source that wrote ``item``, by its accept command's suggestion id (the server's
    ``redraft/debugState``); "" when the server doesn't say."""
    arguments = (item.get("command") or {}).get("arguments") or []
    if not arguments:
        return ""
    state = await client.request("redraft/debugState", {})
    sources = state.get("suggestionSources") if isinstance(state, dict) else None
    return str(sources.get(arguments[0], "")) if isinstance(sources, dict) else ""


async def _ask_all(
    cases: Sequence[FimCase], options: Mapping[str, Any], server_command: Sequence[str], timeout: float,
    workspace: Path | None = None, trigger_kind: int = AUTOMATIC,
) -> tuple[str, list[_Answer]]:
    answers: list[_Answer] = []
    folders = sorted(path for path in workspace.iterdir() if path.is_dir()) if workspace is not None else []
    options = {**options, "debugRequests": True}  # to ask when the workspace is indexed, and each answer's source
    async with LspClient(server_command, timeout=timeout) as client:
        init = await client.initialize(options, ["utf-16"], folders)
        encoding = str((init.get("capabilities") or {}).get("positionEncoding") or "utf-16")
        await client.initialized()
        if folders:
            await workspace_indexed(client, timeout)
        # The first request waits for the model to load; keep that out of the latency figures.
        warm_up = "def add(a, b):\n    return "
        await client.did_open("file:///bench/warm-up.py", warm_up)
        line, character = offset_to_position(warm_up, len(warm_up), encoding)
        try:
            await client.inline_completion(
                "file:///bench/warm-up.py", line, character, AUTOMATIC, timeout=max(timeout, 300)
            )
        except (LspError, LspTimeout) as exc:
            log.warning("warm-up request failed: %s", exc)
        await client.did_close("file:///bench/warm-up.py")
        for n, case in enumerate(cases):
            uri = case_uri(case, n, workspace)
            document, cursor = case.prompt + case.suffix, len(case.prompt)
            line, character = offset_to_position(document, cursor, encoding)
            await client.did_open(uri, document)
            started = time.perf_counter()
            try:
                result = await client.inline_completion(uri, line, character, trigger_kind)
            except (LspError, LspTimeout) as exc:
                log.warning("%s: %s", case.task_id, exc)
                answers.append(_Answer(None, None, None, str(exc)))
            else:
                latency = (time.perf_counter() - started) * 1000
                item = first_item(result)
                if item is None or not item_text(item):
                    answers.append(_Answer(None, None, latency, None))
                else:
                    program = apply_item(document, cursor, item, encoding)
                    answers.append(_Answer(program, item_text(item), latency, None, await shown_source(client, item)))
            await client.did_close(uri)
            log.info("%s: %d/%d asked", case.task_id, n + 1, len(cases))
    return encoding, answers


async def workspace_indexed(client: LspClient, timeout: float) -> None:
    """Wait until the server has indexed the workspace's files (its first scan is done)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = await client.request("redraft/debugState", {})
        if isinstance(state, dict) and state.get("workspaceIndexed"):
            return
        await asyncio.sleep(0.1)
    log.warning("the server did not index the workspace within %.0f s; measuring anyway", timeout)


def run_fim_bench(
    data_path: Path,
    limit: int | None,
    threshold: float,
    server_command: list[str],
    *,
    request_timeout: float = 60.0,
    test_timeout: float = 10.0,
    workers: int = 2,
    server_options: Mapping[str, Any] | None = None,
    cases: list[FimCase] | None = None,
    workspace: Path | None = None,
    trigger_kind: int = AUTOMATIC,
    dialect: str = "lf",
) -> FimReport:
    """Ask the server for every case, then run the tests (never while latency is measured).

    ``server_options`` are extra initializationOptions (e.g. ``{"requestTimeoutMs": 10000}``);
    ``cases`` replaces reading ``data_path`` (``held_out_cases``); ``workspace``: the folder
    whose subfolders the server gets as workspace folders, and where the cases' paths live;
    ``trigger_kind``: ``AUTOMATIC`` (as you type) or ``INVOKED`` (item 0 of the answer is applied);
    ``dialect``: what the cases were rewritten in (``in_dialect``), for the report."""
    cases = load_cases(data_path, limit) if cases is None else cases
    options = {**(server_options or {}), "confidenceThreshold": threshold}
    encoding, answers = asyncio.run(_ask_all(cases, options, server_command, request_timeout, workspace, trigger_kind))

    def passes(case: FimCase, answer: _Answer) -> bool:
        if answer.program is None or not case.test:
            return False
        return run_program(program_with_tests(answer.program, case), test_timeout)

    def exact(case: FimCase, answer: _Answer) -> bool:
        expected = case.prompt + case.canonical_solution + case.suffix
        return answer.program is not None and is_exact(answer.program, expected)

    # Threads suffice: each test runs in its own interpreter process, so at most ``workers`` run at once.
    with ThreadPoolExecutor(max_workers=workers) as pool:
        passed = list(pool.map(passes, cases, answers))
    results = tuple(
        CaseResult(case.task_id, answer.completion, exact(case, answer), ok, answer.latency_ms, answer.error,
                   case.language, lines_of(case.canonical_solution),
                   first_line_right(answer.completion, case.canonical_solution), answer.source)
        for case, answer, ok in zip(cases, answers, passed, strict=True)
    )
    return FimReport(data_path, threshold, encoding, results, tested=any(case.test for case in cases),
                     dialect=dialect)


# -- the report --------------------------------------------------------------------------------


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part}/{whole})" if whole else "n/a"


def format_report(report: FimReport) -> str:
    latencies = report.latencies_ms
    p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
    rows = [
        ("data", report.data_path.name + ("" if report.dialect == "lf" else f" ({report.dialect})")),
        ("confidence threshold", f"{report.threshold:g}"),
        ("cases", str(report.cases)),
        ("shown", _share(report.shown, report.cases)),
        ("exact match", _share(report.exact, report.cases)),
        ("exact match | shown", _share(report.exact, report.shown)),
        ("pass@1", _share(report.passed, report.cases) if report.tested else "n/a (no tests)"),
        ("latency p50", "n/a" if math.isnan(p50) else f"{p50:.0f} ms"),
        ("latency p95", "n/a" if math.isnan(p95) else f"{p95:.0f} ms"),
        ("failed requests", str(report.errors)),
    ]
    blocks = [result for result in report.results if result.lines >= 2]
    if blocks:  # holes of several lines: whole or by their first line, the most one line can do
        blocks_shown = [result for result in blocks if result.completion is not None]
        block_latencies = [r.latency_ms for r in blocks if r.latency_ms is not None]
        rows += [("blocks (2+ lines)", str(len(blocks))),
                 ("blocks: shown", _share(len(blocks_shown), len(blocks))),
                 ("blocks: shown with 2+ lines", _share(sum("\n" in (r.completion or "").rstrip("\n")
                                                            for r in blocks_shown), len(blocks))),
                 ("blocks: exact (whole)", _share(sum(r.exact for r in blocks), len(blocks))),
                 ("blocks: exact | shown", _share(sum(r.exact for r in blocks_shown), len(blocks_shown))),
                 ("blocks: first line alone | shown",
                  _share(sum(r.first_line for r in blocks_shown), len(blocks_shown))),
                 ("blocks: latency p50", "n/a" if not block_latencies
                  else f"{percentile(block_latencies, 50):.0f} ms"),
                 ("blocks: latency p95", "n/a" if not block_latencies
                  else f"{percentile(block_latencies, 95):.0f} ms")]
    shown_results = [result for result in report.results if result.completion is not None]
    for source in sorted({result.source for result in shown_results if result.source}):
        # Each source's wins: the answers it wrote that were shown, and how many were right.
        won = [result for result in shown_results if result.source == source]
        rows.append((f"source {source}: shown | exact", f"{_share(len(won), len(shown_results))} | "
                     f"{_share(sum(result.exact for result in won), len(won))}"))
    languages = sorted({result.language for result in report.results})
    if len(languages) > 1:  # a mixed set: the same figures for each language's cases
        for language in languages:
            results = [result for result in report.results if result.language == language]
            shown = sum(result.completion is not None for result in results)
            exact = sum(result.exact for result in results)
            rows += [(f"{language}: shown", _share(shown, len(results))),
                     (f"{language}: exact match", _share(exact, len(results))),
                     (f"{language}: exact | shown", _share(exact, shown))]
    width = max(len(name) for name, _ in rows)
    lines = [f"{'metric':<{width}}  value", f"{'-' * width}  {'-' * 24}"]
    lines += [f"{name:<{width}}  {value}" for name, value in rows]
    return "\n".join(lines)
