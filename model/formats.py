"""The FIM input layout, shared by training and serving.

    context (causal, encoded once):  <|suffix|> suffix…  <|prefix|> …prefix
    canvas  (bidirectional):         middle… <|eom|> <|pad|> …   (all <|mask|> at the start)

Suffix first, then prefix: typing at the cursor changes only the tail of the context, so
the cached keys/values of everything before it stay exact. The canvas attends to the whole
context and to itself; the context never sees the canvas.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from model.tokenizer import CodeTokenizer

# Character windows cut before tokenizing, so a huge file never reaches the tokenizer.
PREFIX_CHAR_WINDOW = 4_000
SUFFIX_CHAR_WINDOW = 2_000
# Tokenizing costs ~0.7 µs a character, on every keystroke: first try windows that fill
# the budget at up to ~6 characters a token, and only widen them when they do not.
NARROW_PREFIX_WINDOW = 1_600
NARROW_SUFFIX_WINDOW = 800


@dataclass(frozen=True)
class ContextBudget:
    """How many context tokens the model sees, and the most the suffix may take."""

    total: int = 256
    max_suffix: int = 96

    @classmethod
    def of(cls, metadata: Mapping[str, Any]) -> ContextBudget:
        """The budget a model folder's config.json says its network was trained with."""
        return cls(int(metadata.get("context_tokens", cls.total)),
                   int(metadata.get("max_suffix_tokens", cls.max_suffix)))


def clip_prefix(prefix: str, window: int = PREFIX_CHAR_WINDOW) -> str:
    """The tail of the prefix, cut at a line start so the cut is stable while typing."""
    if len(prefix) <= window:
        return prefix
    tail = prefix[-window:]
    newline = tail.find("\n")
    return tail[newline + 1 :] if 0 <= newline < len(tail) - 1 else tail


def clip_suffix(suffix: str, window: int = SUFFIX_CHAR_WINDOW) -> str:
    return suffix[:window]


@dataclass(frozen=True)
class PrefixCut:
    """Where a context's prefix tokens began: the prefix was tokenized from ``origin`` (a
    line start: the tokens after it do not depend on the text before it) and its first
    ``dropped`` tokens were cut. ``anchor``, the text at ``origin``, must still be there for
    the next request to keep this cut."""

    origin: int
    dropped: int
    anchor: str


ANCHOR_CHARS = 200


def context_ids(
    tokenizer: CodeTokenizer, prefix: str, suffix: str, budget: ContextBudget
) -> list[int]:
    """``<|suffix|> suffix <|prefix|> prefix`` within the budget (suffix keeps its start,
    prefix keeps its end: the text nearest the cursor survives truncation).

    Cuts drop whole steps of ``CUT_QUANTUM`` tokens, not one token per keystroke, and
    ``context_cut`` keeps a cut while the user types on: the suffix and the start of the
    prefix stay the same tokens, so the cached keys/values of everything but the prefix
    tail stay valid.
    """
    return context_cut(tokenizer, prefix, suffix, budget)[0]


def context_cut(
    tokenizer: CodeTokenizer, prefix: str, suffix: str, budget: ContextBudget, keep: PrefixCut | None = None
) -> tuple[list[int], PrefixCut | None]:
    """``context_ids``, and where its prefix was cut (None: not cut). ``keep``: the last
    request's cut, kept while the prefix still fits it, so that typing on never moves the
    start of the context until ``CUT_QUANTUM`` more tokens have been typed (a fresh cut's
    character window moves with every character typed, and its first line drops out each
    time the window passes a line break: each time, the whole prefix was encoded again)."""
    room = budget.total - 2
    if keep is not None and _keeps(keep, prefix):
        all_suffix, prefix_tokens = tokenizer.encode_each([clip_suffix(suffix, NARROW_SUFFIX_WINDOW),
                                                           prefix[keep.origin:]])
        suffix_tokens = _suffix_tokens(tokenizer, suffix, all_suffix, room, budget)
        kept = prefix_tokens[keep.dropped:]
        if room - len(suffix_tokens) - 2 * CUT_QUANTUM < len(kept) <= room - len(suffix_tokens):
            return [tokenizer.suffix_id, *suffix_tokens, tokenizer.prefix_id, *kept], keep
    window = clip_prefix(prefix, NARROW_PREFIX_WINDOW)
    all_suffix, prefix_tokens = tokenizer.encode_each([clip_suffix(suffix, NARROW_SUFFIX_WINDOW), window])
    prefix_short = len(prefix) > NARROW_PREFIX_WINDOW and len(prefix_tokens) < room
    suffix_short = len(suffix) > NARROW_SUFFIX_WINDOW and len(all_suffix) < room - len(prefix_tokens)
    if prefix_short or suffix_short:
        window = clip_prefix(prefix)
        all_suffix, prefix_tokens = tokenizer.encode_each([clip_suffix(suffix), window])
    suffix_tokens = all_suffix[: min(budget.max_suffix, room)]
    prefix_room = room - len(suffix_tokens)
    excess = len(prefix_tokens) - prefix_room
    cut = None
    if excess > 0:
        origin = len(prefix) - len(window)
        cut = PrefixCut(origin, _round_up(excess), prefix[origin : origin + ANCHOR_CHARS])
        prefix_tokens = prefix_tokens[cut.dropped :]
    elif len(all_suffix) > len(suffix_tokens):
        # A short prefix leaves room that a long suffix may use.
        spare = (-excess) // CUT_QUANTUM * CUT_QUANTUM
        suffix_tokens = all_suffix[: len(suffix_tokens) + spare]
    return [tokenizer.suffix_id, *suffix_tokens, tokenizer.prefix_id, *prefix_tokens], cut


def _keeps(cut: PrefixCut, prefix: str) -> bool:
    """Whether ``prefix`` still starts its kept text where ``cut`` says, within the window."""
    return (0 < len(prefix) - cut.origin <= PREFIX_CHAR_WINDOW and prefix.startswith(cut.anchor, cut.origin)
            and (cut.origin == 0 or prefix[cut.origin - 1] in "\n\r"))


def _suffix_tokens(
    tokenizer: CodeTokenizer, suffix: str, narrow: list[int], room: int, budget: ContextBudget
) -> list[int]:
    """The suffix's tokens a context whose prefix was cut keeps (it has no room to spare)."""
    if len(suffix) > NARROW_SUFFIX_WINDOW and len(narrow) < budget.max_suffix:
        narrow = tokenizer.encode_each([clip_suffix(suffix)])[0]
    return narrow[: min(budget.max_suffix, room)]


def healed_bytes(tokenizer: CodeTokenizer, ids: list[int]) -> bytes:
    """The bytes of the context's last token when it is the prefix's (the cursor may have
    cut it: the head drops it and writes them again, in serving and in training alike), else
    none (an empty prefix: nothing to heal)."""
    return tokenizer.token_bytes[ids[-1]] if len(ids) >= 2 and ids[-1] != tokenizer.prefix_id else b""


def healed_text(tokenizer: CodeTokenizer, ids: list[int]) -> str:
    """``healed_bytes`` as text (training's): U+FFFD where the token is part of a character."""
    return healed_bytes(tokenizer, ids).decode("utf-8", errors="replace")


CUT_QUANTUM = 32


def _round_up(count: int) -> int:
    return -(-count // CUT_QUANTUM) * CUT_QUANTUM


def canvas_targets(tokenizer: CodeTokenizer, middle_ids: list[int], canvas_size: int) -> list[int]:
    """What the canvas should denoise to: the middle, end-of-middle, then padding."""
    if len(middle_ids) >= canvas_size:
        raise ValueError(f"middle of {len(middle_ids)} tokens does not fit a canvas of {canvas_size}")
    body = [*middle_ids, tokenizer.end_of_middle_id]
    return body + [tokenizer.pad_id] * (canvas_size - len(body))


def middle_from_canvas(tokenizer: CodeTokenizer, canvas: list[int]) -> str:
    """Decode the committed canvas up to end-of-middle (or a pad)."""
    kept: list[int] = []
    for token in canvas:
        if token in (tokenizer.end_of_middle_id, tokenizer.pad_id):
            break
        if token != tokenizer.mask_id:
            kept.append(token)
    return tokenizer.decode(kept)


# ---------------------------------------------------------------- next edit
#
#   context (causal):  <|edits|> hunk… hunk  <|suffix|> after… <|prefix|> …before
#                      <|region|> the lines that may change <|/region|>
#   canvas:            rewritten region <|eom|> <|pad|>…   or   <|nochange|> <|eom|> <|pad|>…
#
# The edit history comes first so its cached keys/values serve every candidate region.


@dataclass(frozen=True)
class NextEditBudget:
    total: int = 320
    history: int = 112
    suffix: int = 40
    region: int = 48


def split_lsp_lines(text: str) -> list[str]:
    """Lines without their endings; LSP breaks lines only at \\n, \\r\\n and \\r."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def render_hunk(path: str, start_line: int, old_text: str, new_text: str) -> str:
    """One edit as the model reads it: a location line, then removed and added lines."""
    lines = [f"@@ {path}:{start_line + 1}"]
    for sign, text in (("-", old_text), ("+", new_text)):
        if text:
            lines.extend(sign + line for line in split_lsp_lines(text.removesuffix("\n")))
    return "\n".join(lines) + "\n"


def history_ids(tokenizer: CodeTokenizer, hunks: list[str], budget: NextEditBudget) -> list[int]:
    """``<|edits|>`` and the newest hunks that fit the history budget, oldest first."""
    kept: list[int] = []
    for encoded in reversed(tokenizer.encode_each(hunks) if hunks else []):
        if len(kept) + len(encoded) > budget.history - 1:
            break
        kept = encoded + kept
    return [tokenizer.id_of("<|edits|>"), *kept]


def next_edit_region_ids(
    tokenizer: CodeTokenizer, prefix: str, region: str, suffix: str, room: int, budget: NextEditBudget
) -> list[int] | None:
    """The part after the history; None when the region is too long to rewrite."""
    suffix_tokens, prefix_tokens, region_tokens = tokenizer.encode_each(
        [clip_suffix(suffix), clip_prefix(prefix), region]
    )
    if len(region_tokens) > budget.region:
        return None
    suffix_tokens = suffix_tokens[: budget.suffix]
    prefix_room = room - len(suffix_tokens) - len(region_tokens) - 4
    prefix_tokens = prefix_tokens[-prefix_room:] if prefix_room > 0 else []
    return [
        tokenizer.suffix_id, *suffix_tokens, tokenizer.prefix_id, *prefix_tokens,
        tokenizer.id_of("<|region|>"), *region_tokens, tokenizer.id_of("<|/region|>"),
    ]


def next_edit_targets(tokenizer: CodeTokenizer, rewritten: str | None, canvas_size: int) -> list[int] | None:
    """Canvas for a rewrite (None = no change); None when it does not fit."""
    body = [tokenizer.id_of("<|nochange|>")] if rewritten is None else tokenizer.encode(rewritten)
    if len(body) >= canvas_size:
        return None
    return canvas_targets(tokenizer, body, canvas_size)
