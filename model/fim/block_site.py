"""Where the cursor stands at a block's start, and a written block cut to where it ends.

A block site is a line with nothing but indentation before the cursor right after a line
that opens a body: a header (``def …:``, ``if (…) {``) or an open bracket (``x = {``,
``call(``). There the hole is usually several lines, the body, and one line is the most a
line's candidates can offer. The block ends where its indentation closes (a line no deeper
than the opener's), where the suffix takes over (a line the suffix starts with), or after
``MAX_LINES``.

Two cursors stand at such a site: on an empty line the editor opened (nothing after the
cursor on its line: the block goes in before the line break), and at the start of a line
that already holds the code after the hole (as in HumanEval's multi-line infilling: the
block goes in as whole lines, its last line break included).
"""

from __future__ import annotations

from dataclasses import dataclass

from model.code_text import indent_of, line_offsets

MAX_LINES = 8  # the longest block offered, as trained (fim_examples.BLOCK_LINES)
MIN_LINES = 2  # fewer is a line, which the line's candidates offer
# What a line ends with when a body follows it, per language family (Language.family).
OPENERS = {"python": (":", "(", "[", "{"), "javascript": ("{", "(", "[", "=>")}
COMMENTS = {"python": ("#",), "javascript": ("//", "/*", "*")}


@dataclass(frozen=True)
class BlockSite:
    opener_indent: int  # the opening line's indentation: a line no deeper closes the block
    before_code: bool  # the cursor's line holds code after it: the block ends with a line break
    suffix_first: str  # the suffix's first non-blank line, stripped: where the suffix takes over


def block_site(prefix: str, suffix: str, family: str) -> BlockSite | None:
    """The block site at the cursor between ``prefix`` and ``suffix``, or None."""
    openers = OPENERS.get(family)
    if openers is None:
        return None
    start = prefix.rfind("\n")
    if start < 0 or prefix[start + 1:].strip():
        return None  # no line before, or code before the cursor on its line
    rest_of_line = suffix.split("\n", 1)[0]
    opener = next((line for line in reversed(prefix[:start].split("\n")) if line.strip()), "")
    code = opener.rstrip()
    if not code.endswith(openers) or code.lstrip().startswith(COMMENTS[family]):
        return None
    cursor_indent = len(prefix) - start - 1
    before_code = bool(rest_of_line.strip())
    if not before_code and cursor_indent and cursor_indent <= indent_of(opener):
        return None  # an editor indents a body deeper: at the opener's depth the user closed it
    # The body must be missing: the code after the cursor is no deeper than the opener
    # (else the hole is a line inserted in a body, which the line's candidates serve).
    following = suffix if before_code else suffix.split("\n", 1)[1] if "\n" in suffix else ""
    after = next((line for line in following.split("\n") if line.strip()), "")
    depth = indent_of(after) + (cursor_indent if before_code else 0)
    if after and depth > indent_of(opener):
        return None
    suffix_first = after.strip()
    return BlockSite(indent_of(opener), before_code, suffix_first)


def cut_block(site: BlockSite, prefix: str, written: str) -> str | None:
    """``written`` (the canvas's text at the cursor) cut to the block at ``site``: its lines
    up to where the indentation closes or the suffix takes over, ``MAX_LINES`` at most;
    None when fewer than ``MIN_LINES`` remain or the first is blank."""
    cursor_indent = len(prefix) - prefix.rfind("\n") - 1
    lines: list[str] = []
    for n, line in enumerate(written.split("\n")):
        depth = indent_of(line) + (cursor_indent if n == 0 else 0)
        if line.strip() and (depth <= site.opener_indent or line.strip() == site.suffix_first):
            break
        lines.append(line.rstrip())
        if len(lines) == MAX_LINES:
            break
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) < MIN_LINES or not lines[0].strip():
        return None
    block = "\n".join(lines)
    return block + "\n" if site.before_code else block


def missing_bodies(text: str, family: str) -> list[tuple[int, int]]:
    """(start, end) of every body in ``text`` of at most ``MAX_LINES`` lines that, cut out,
    leaves a block site with the cursor where an editor puts it: on the body's first line,
    indented, the line break after the body left in the suffix. One-line bodies count: at a
    block site the right answer is sometimes one line, and a block's precision must say so."""
    lines = text.split("\n")
    starts = line_offsets(lines)
    holes = []
    for row, opener in enumerate(lines[:-1]):
        body_start = row + 1
        if not lines[body_start].strip():
            continue
        body_end = body_start
        while body_end < len(lines) and (not lines[body_end].strip()
                                         or indent_of(lines[body_end]) > indent_of(opener)):
            body_end += 1
        while body_end > body_start and not lines[body_end - 1].strip():
            body_end -= 1
        if body_end == body_start or body_end - body_start > MAX_LINES:
            continue
        start = starts[body_start] + indent_of(lines[body_start])
        end = starts[body_end - 1] + len(lines[body_end - 1])
        if block_site(text[:start], text[end:], family) is not None:
            holes.append((start, end))
    return holes
