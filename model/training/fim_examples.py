"""Cutting training examples out of source files: where the cursor is and what is missing.

The span mix follows what an editor asks for:
- REST_OF_LINE: the cursor sits inside a line; the middle is the rest of that line.
- WHOLE_LINES: one to a few whole lines (with indentation and newline) are missing,
  as in HumanEval single-/multi-line infilling and after pressing Enter.
- RANDOM_SPAN: any character span, so odd cursor places are not out of distribution.
"""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass, field

from model.formats import ContextBudget, canvas_targets, context_ids, healed_text
from model.tokenizer import CodeTokenizer


class SpanKind(enum.Enum):
    REST_OF_LINE = "rest_of_line"
    WHOLE_LINES = "whole_lines"
    RANDOM_SPAN = "random_span"


SPAN_MIX: dict[SpanKind, float] = {
    SpanKind.REST_OF_LINE: 0.4,
    SpanKind.WHOLE_LINES: 0.4,
    SpanKind.RANDOM_SPAN: 0.2,
}


def parse_span_mix(raw: dict[str, float]) -> dict[SpanKind, float]:
    """``{"rest_of_line": 0.5, …}`` → the mix; unknown kinds or no positive weight raise."""
    mix = {SpanKind(name): float(weight) for name, weight in raw.items()}
    if not any(weight > 0 for weight in mix.values()):
        raise ValueError(f"span mix {raw} has no positive weight")
    return mix


@dataclass(frozen=True)
class FimExample:
    context: list[int]  # <|suffix|> suffix <|prefix|> prefix, unpadded
    targets: list[int]  # canvas: middle <|eom|> <|pad|>…
    # What the next-token head writes at the cursor (left_to_right.py), healed as it is
    # served: the prefix's last token's text again, the middle and the suffix's first line,
    # tokenized as one text; empty when not trained (next edit) or nothing to heal.
    written: list[int] = field(default_factory=list)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(i + 1 for i, ch in enumerate(text) if ch == "\n" and i + 1 < len(text))
    return starts


def choose_span(text: str, kind: SpanKind, rng: random.Random) -> tuple[int, int]:
    """(start, end) character offsets of the missing middle."""
    starts = _line_starts(text)
    line_no = rng.randrange(len(starts))
    start = starts[line_no]
    line_end = text.find("\n", start)
    line_end = len(text) if line_end < 0 else line_end
    if kind is SpanKind.REST_OF_LINE:
        line = text[start:line_end]
        indent = len(line) - len(line.lstrip())
        cursor = start + rng.randint(indent, max(indent, len(line) - 1))
        return cursor, line_end
    if kind is SpanKind.WHOLE_LINES:
        count = rng.choice((1, 1, 1, 2, 2, 3, 4, 6))
        last = min(len(starts) - 1, line_no + count - 1)
        end = text.find("\n", starts[last])
        end = len(text) if end < 0 else end + 1
        # Half the time the cursor is already after the indentation (auto-indent).
        if rng.random() < 0.5:
            line = text[start:line_end]
            start += len(line) - len(line.lstrip(" \t"))
        return start, end
    span_start = rng.randrange(len(text))
    return span_start, min(len(text), span_start + rng.randint(1, 120))


def make_example(
    tokenizer: CodeTokenizer,
    text: str,
    rng: random.Random,
    budget: ContextBudget,
    canvas_size: int,
    span_mix: dict[SpanKind, float] | None = None,
    written_tokens: int = 0,
) -> FimExample | None:
    """One FIM example from ``text`` (spans drawn from ``span_mix``, default ``SPAN_MIX``);
    None when the chosen span is empty or blank. ``written_tokens``: at most this many
    tokens of what the head writes at the cursor (``FimExample.written``), 0 for none."""
    mix = span_mix or SPAN_MIX
    kind = rng.choices(list(mix), weights=list(mix.values()))[0]
    start, end = choose_span(text, kind, rng)
    # A blank middle (a whole empty line is 7% of whole-line spans) is never shown, since the
    # server drops whitespace-only answers; learning it only teaches ending at a line start.
    if not text[start:end].strip():
        return None
    middle_ids, offsets = tokenizer.encode_with_offsets(text[start:end])
    # A middle longer than the canvas is cut at a token boundary; the rest joins the suffix.
    if len(middle_ids) > canvas_size - 1:
        middle_ids = middle_ids[: canvas_size - 1]
        end = start + offsets[len(middle_ids) - 1][1]
    context = context_ids(tokenizer, text[:start], text[end:], budget)
    written: list[int] = []
    healed = healed_text(tokenizer, context) if written_tokens > 0 else ""
    # The serving head drops the prefix's cut last token and writes its text again, then
    # the middle, then must meet the suffix: through its first line, so that it learns
    # where a middle ends as well as what it says. An empty prefix, or a last token that
    # is part of a character, has nothing to heal: such rare examples train without it.
    if healed and "\ufffd" not in healed and text[:start].endswith(healed):
        line_end = text.find("\n", end)
        cut = start - len(healed)
        written = tokenizer.encode(text[cut: len(text) if line_end < 0 else line_end + 1])[:written_tokens]
    return FimExample(context, canvas_targets(tokenizer, middle_ids, canvas_size), written)
