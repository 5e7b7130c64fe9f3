"""Inline completion: which of the model's answers to show, and how."""

from __future__ import annotations

from dataclasses import dataclass

from lsp_server.engine import FimQuery, ModelCandidate
from lsp_server.options import ServerOptions


@dataclass(frozen=True)
class Suggestion:
    text: str
    confidence: float


def build_query(text: str, offset: int, options: ServerOptions, invoked: bool) -> FimQuery:
    return FimQuery(
        prefix=text[:offset],
        suffix=text[offset:],
        candidates=options.max_candidates if invoked else 1,
        canvas_size=options.canvas_tokens,
        sampler_threshold=options.sampler_threshold,
        max_steps=options.max_steps,
    )


def trim_suffix_overlap(text: str, suffix: str) -> str:
    """Drop the end of ``text`` that the rest of the cursor's line already holds, e.g. a
    closing bracket the editor auto-inserted: "f(x)" before ")" becomes "f(x"."""
    line_rest = suffix.split("\n", 1)[0].rstrip("\r")
    for size in range(min(len(text), len(line_rest)), 0, -1):
        overlap = line_rest[:size]
        if overlap.strip() and text.endswith(overlap):
            return text[:-size]
    return text


def select_suggestions(
    candidates: list[ModelCandidate], suffix: str, threshold: float, limit: int
) -> list[Suggestion]:
    """Threshold, clean and deduplicate candidates, best first."""
    shown: list[Suggestion] = []
    seen: set[str] = set()
    for candidate in sorted(candidates, key=lambda c: c.confidence, reverse=True):
        if candidate.confidence < threshold:
            continue
        text = trim_suffix_overlap(candidate.text, suffix)
        if not text.strip() or text in seen:
            continue
        seen.add(text)
        shown.append(Suggestion(text, candidate.confidence))
    return shown[:limit]
