"""Held-out FIM cases and how an answer is judged: spans cut from files the model never
trained on, with training's span mix, and the exact-match test every FIM figure uses.

Calibration, the decode bench and the ablations all cut and judge cases the same way, so
they share this module rather than reaching into one another.
"""

from __future__ import annotations

import random

from model.data.corpus import SourceFile
from model.training.fim_examples import SPAN_MIX, SpanKind, choose_span


def same_code(a: str, b: str) -> bool:
    """Equal up to trailing whitespace on each line and at the end."""
    return [line.rstrip() for line in a.rstrip().split("\n")] == [line.rstrip() for line in b.rstrip().split("\n")]


def dev_cases(
    files: list[SourceFile], count: int, seed: int, max_middle_chars: int = 80,
    span_mix: dict[SpanKind, float] | None = None,
) -> list[tuple[str, str, str]]:
    """(prefix, middle, suffix) cut from ``files`` with ``span_mix`` (default: training's)."""
    return [(prefix, middle, suffix)
            for _, prefix, middle, suffix in cut_from_files(files, count, seed, max_middle_chars, span_mix)]


def cut_from_files(
    files: list[SourceFile], count: int, seed: int, max_middle_chars: int = 80,
    span_mix: dict[SpanKind, float] | None = None,
) -> list[tuple[SourceFile, str, str, str]]:
    """``dev_cases`` with the file each case was cut from."""
    rng = random.Random(seed)
    mix = span_mix or SPAN_MIX
    files = [source for source in files if source.text.strip()]  # an empty file has no span to cut
    cases: list[tuple[SourceFile, str, str, str]] = []
    while files and len(cases) < count:
        source = rng.choice(files)
        text = source.text
        kind = rng.choices(list(mix), weights=list(mix.values()))[0]
        start, end = choose_span(text, kind, rng)
        if 0 < end - start <= max_middle_chars and text[start:end].strip():
            cases.append((source, text[:start], text[start:end], text[end:]))
    return cases
