"""``redraft bench decode``: the same network, the same FIM cases, different commit rules.

Compares confidence-threshold parallel decoding (τ = 0.5, 0.7, 0.9; with and without deciding
the length on every pass, and with the frozen tail the server uses) with one token per step
(most confident first) and plain left-to-right one token per step: tokens per forward pass,
tokens per second, exact match. Runs the model in-process (no LSP), so the numbers are the
decoder's alone. A last row writes the line with the network's next-token head instead
(``left_to_right.py``), which the server offers beside the canvas's answer.

Tokens per pass can't exceed the answers' tokens (end-of-middle included) per answer: a
decoder that commits a whole answer in its first pass reaches exactly that. So the table
prints the tokens per answer too, and a row that does commit everything at once (τ = 0),
the ceiling of parallel decoding for these cases and what it costs in exact matches.

Fast-dLLM's throughput counts every position of a fixed-length generation, the end-of-text
filler included; the nearest measure here is **canvas/pass**: the canvas's positions
(32) over the passes it took, the padding after the end counted as decoded. It is printed
beside tokens per pass so the two accountings can be told apart; tokens per pass, the
answer's own tokens, is the one that says how parallel the decoding of code is.

A row decides the canvas in one pass over candidate lengths (``length_candidates.py``):
a short canvas per length 1–16 (fewer in a canvas of less than 17) in the same
forward pass, the answer chosen by a parse check and its probabilities.
"""

from __future__ import annotations

import gzip
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from model.fim.completion_request import AS_YOU_TYPE_MAX_STEPS, CompletionRequest
from model.fim.held_out_cases import same_code
from model.fim.inference import FimCompleter
from model.fim.left_to_right import BEAMS
from model.fim.length_candidates import candidate_lengths
from model.runtime.served_model import ServedModel
from model.sampler import CommitRule


@dataclass(frozen=True)
class FimCase:
    prefix: str
    suffix: str
    middle: str


@dataclass(frozen=True)
class DecodeRow:
    name: str
    cases: int
    exact: float
    tokens_per_pass: float
    tokens_per_second: float
    ms_per_case: float
    tokens_per_answer: float
    canvas_per_pass: float


def read_cases(path: Path, limit: int | None) -> list[FimCase]:
    """HumanEval-infilling style records: prompt, suffix, canonical_solution."""
    cases: list[FimCase] = []
    with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as handle:
        for line in handle:
            record = json.loads(line)
            cases.append(FimCase(record["prompt"], record["suffix"], record["canonical_solution"]))
            if limit is not None and len(cases) >= limit:
                break
    return cases


def dev_cases(corpus: Path, limit: int, seed: int = 7) -> list[FimCase]:
    """Held-out spans cut from a corpus .jsonl with the training span mix, as calibration cuts them."""
    from model.data.corpus import read_corpus
    from model.fim.held_out_cases import dev_cases as cut_cases

    return [FimCase(prefix, suffix, middle) for prefix, middle, suffix in cut_cases(read_corpus(corpus), limit, seed)]


class Decoder(NamedTuple):
    name: str
    rule: CommitRule
    threshold: float
    length_first: bool = False
    freeze_tail: bool = False
    max_steps: int | None = None  # None: the canvas size (no cap before every position is decoded)


_PASSES = "pass" if AS_YOU_TYPE_MAX_STEPS == 1 else "passes"
AS_YOU_TYPE = f"the same, capped at {AS_YOU_TYPE_MAX_STEPS} {_PASSES} (as you type)"


DECODERS: tuple[Decoder, ...] = (
    Decoder("threshold τ=0.5", CommitRule.THRESHOLD, 0.5),
    Decoder("threshold τ=0.7", CommitRule.THRESHOLD, 0.7),
    Decoder("threshold τ=0.9", CommitRule.THRESHOLD, 0.9),
    Decoder("τ=0.5, length first", CommitRule.THRESHOLD, 0.5, length_first=True),
    Decoder("τ=0.9, length first", CommitRule.THRESHOLD, 0.9, length_first=True),
    Decoder("τ=0.9, length first, frozen tail (served)", CommitRule.THRESHOLD, 0.9, length_first=True,
            freeze_tail=True),
    Decoder(AS_YOU_TYPE, CommitRule.THRESHOLD, 0.9, length_first=True, freeze_tail=True,
            max_steps=AS_YOU_TYPE_MAX_STEPS),
    Decoder("τ=0, length first (all in one pass)", CommitRule.THRESHOLD, 0.0, length_first=True, freeze_tail=True),
    Decoder("one per step (most confident)", CommitRule.MOST_CONFIDENT, 1.0),
    Decoder("left to right, one per step", CommitRule.LEFT_TO_RIGHT, 1.0),
)


def run_decode_bench(loaded: ServedModel, cases: list[FimCase], canvas_size: int = 32) -> list[DecodeRow]:
    completer = FimCompleter(loaded)
    rows: list[DecodeRow] = []
    for decoder in DECODERS:
        exact = tokens = passes = 0
        elapsed = 0.0
        for case in cases:
            request = CompletionRequest(case.prefix, case.suffix, canvas_size=canvas_size,
                                        threshold=decoder.threshold, max_steps=decoder.max_steps or canvas_size,
                                        rule=decoder.rule,
                                        length_first=decoder.length_first, freeze_tail=decoder.freeze_tail,
                                        copy_lines=False, left_to_right=False,  # the denoisers alone
                                        drop_repeats=False)
            started = time.perf_counter()
            best = completer.complete(request)[0]
            elapsed += time.perf_counter() - started
            exact += same_code(best.text, case.middle)
            # The end-of-middle token is decoded too, when the answer ends within the canvas.
            tokens += best.tokens + (best.tokens < canvas_size)
            passes += best.steps
        n = max(1, len(cases))
        rows.append(DecodeRow(decoder.name, len(cases), exact / n, tokens / max(1, passes), tokens / max(elapsed, 1e-9),
                              1000 * elapsed / n, tokens / n, canvas_size * len(cases) / max(1, passes)))
    rows.append(_over_lengths_row(completer, cases, canvas_size))
    rows.append(_left_to_right_row(completer, cases))
    return rows


def over_lengths_name(canvas_size: int) -> str:
    """The row's name, with the lengths a canvas of that size lets it try."""
    return f"one pass over lengths 1–{candidate_lengths(canvas_size)[-1]}, parse check"


def _over_lengths_row(completer: FimCompleter, cases: list[FimCase], canvas_size: int) -> DecodeRow:
    """The canvas decided in one pass holding a short canvas per candidate length
    (``length_candidates.py``): its tokens per pass are the answer's (end-of-middle
    included); its canvas/pass is the canvas's size, every position decided in that pass.
    The pass holds ~150 rows: ms/case says what that costs."""
    exact = tokens = 0
    elapsed = 0.0
    for case in cases:
        started = time.perf_counter()
        answer = completer.over_lengths(case.prefix, case.suffix, canvas_size)
        elapsed += time.perf_counter() - started
        exact += same_code(answer.text, case.middle)
        tokens += answer.tokens + 1
    n = max(1, len(cases))
    return DecodeRow(over_lengths_name(canvas_size), len(cases), exact / n, tokens / n, tokens / max(elapsed, 1e-9),
                     1000 * elapsed / n, tokens / n, canvas_size)


NEXT_TOKEN_HEAD = f"next-token head, beam of {BEAMS} (no canvas)"


def _left_to_right_row(completer: FimCompleter, cases: list[FimCase]) -> DecodeRow:
    """The next-token head writing the line (``left_to_right.py``): a beam search, each
    pass a token for every beam, no canvas (its canvas/pass is its tokens per pass); no
    line fits → an empty answer."""
    exact = tokens = passes = 0
    elapsed = 0.0
    for case in cases:
        started = time.perf_counter()
        lines = completer.written_lines(case.prefix, case.suffix)
        elapsed += time.perf_counter() - started
        written = lines[0] if lines else None  # the most likely: the network alone, no calibrator
        exact += same_code("" if written is None else written.text, case.middle)
        tokens += 0 if written is None else len(written.tokens)
        passes += 0 if written is None else written.passes
    n, per_pass = max(1, len(cases)), tokens / max(1, passes)
    return DecodeRow(NEXT_TOKEN_HEAD, len(cases), exact / n, per_pass,
                     tokens / max(elapsed, 1e-9), 1000 * elapsed / n, tokens / n, per_pass)


def format_rows(rows: list[DecodeRow]) -> str:
    header = (f"{'decoder':42} {'cases':>5} {'exact':>7} {'tok/pass':>9} {'tok/s':>8} {'ms/case':>8} "
              f"{'tok/answer':>10} {'canvas/pass':>11}")
    lines = [header, "-" * len(header)]
    for row in rows:
        lines.append(f"{row.name:42} {row.cases:5d} {row.exact:7.1%} {row.tokens_per_pass:9.2f} "
                     f"{row.tokens_per_second:8.0f} {row.ms_per_case:8.1f} {row.tokens_per_answer:10.2f} "
                     f"{row.canvas_per_pass:11.2f}")
    return "\n".join(lines)
