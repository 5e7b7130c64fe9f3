"""Cutting training examples out of source files: where the cursor is and what is missing.

The span mix follows what an editor asks for:
- REST_OF_LINE: the cursor sits inside a line; the middle is the rest of that line.
- WHOLE_LINES: one to a few whole lines (with indentation and newline) are missing,
  as in HumanEval single-/multi-line infilling and after pressing Enter.
- RANDOM_SPAN: any character span, so odd cursor places are not out of distribution.
- BLOCK: the body a line opens (after ``:``, ``{``, ``(`` or ``[`` at its end, in any of the
  languages served), 2 to 8 lines, up to where the indentation closes: where the cursor stands
  after pressing Enter at a header, and the hole a block completion fills.

Training draws from ``TRAINING_SPAN_MIX``; held-out cases (calibration, ``bench fim --dev``)
keep ``SPAN_MIX``, so every figure measured on them stays comparable.
"""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass, field

from model.code_text import indent_of, line_offsets
from model.formats import ContextBudget, canvas_targets, context_ids, healed_text
from model.tokenizer import CodeTokenizer


class SpanKind(enum.Enum):
    REST_OF_LINE = "rest_of_line"
    WHOLE_LINES = "whole_lines"
    RANDOM_SPAN = "random_span"
    BLOCK = "block"


SPAN_MIX: dict[SpanKind, float] = {
    SpanKind.REST_OF_LINE: 0.4,
    SpanKind.WHOLE_LINES: 0.4,
    SpanKind.RANDOM_SPAN: 0.2,
}
TRAINING_SPAN_MIX: dict[SpanKind, float] = {
    SpanKind.REST_OF_LINE: 0.35,
    SpanKind.WHOLE_LINES: 0.3,
    SpanKind.BLOCK: 0.15,
    SpanKind.RANDOM_SPAN: 0.2,
}
BLOCK_LINES = (2, 8)  # the fewest and most lines of a block span
OPENERS = (":", "{", "(", "[")  # a line ending so opens an indented body


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


def block_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every block span of ``text``: the lines after a line that ends with an
    opener, each indented deeper than it (blank lines inside count), ``BLOCK_LINES`` of them
    at most (a longer body is cut there), the cursor after the first one's indentation."""
    lines = text.split("\n")
    starts = line_offsets(lines)
    spans = []
    for row, header in enumerate(lines[:-1]):
        code = header.rstrip()
        if not code.endswith(OPENERS) or code.lstrip().startswith(("#", "//", "*")):
            continue
        body = []
        for line in lines[row + 1: row + 1 + BLOCK_LINES[1]]:
            if line.strip() and indent_of(line) <= indent_of(header):
                break
            body.append(line)
        while body and not body[-1].strip():
            body.pop()
        if len(body) < BLOCK_LINES[0] or not body[0].strip():
            continue
        start = starts[row + 1] + indent_of(body[0])
        spans.append((start, starts[row + len(body)] + len(body[-1]) + 1))
    return [(start, min(end, len(text))) for start, end in spans]


def choose_span(text: str, kind: SpanKind, rng: random.Random) -> tuple[int, int]:
    """(start, end) character offsets of the missing middle. A text with no block span
    gives a span of whole lines for BLOCK."""
    if kind is SpanKind.BLOCK:
        blocks = block_spans(text)
        if blocks:
            return rng.choice(blocks)
        kind = SpanKind.WHOLE_LINES
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
    """One FIM example from ``text`` (spans drawn from ``span_mix``, default ``TRAINING_SPAN_MIX``);
    None when the chosen span is empty or blank. ``written_tokens``: at most this many
    tokens of what the head writes at the cursor (``FimExample.written``), 0 for none."""
    mix = span_mix or TRAINING_SPAN_MIX
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
