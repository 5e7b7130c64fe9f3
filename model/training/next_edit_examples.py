"""Training examples for the next-edit objective.

Two sources:
- real edits: a file in two consecutive releases of a package; its line hunks are replayed
  in order — hunks 1..k-1 are the history, hunk k is the edit to predict;
- synthetic edits made with ``tokenize`` on any corpus file: rename propagation (an
  identifier renamed on earlier lines → the same rename on a later line), a call site
  changed → the next call of the same function, a line deleted → its twin.

A good share of examples asks about a region that should stay as it is (``<|nochange|>``),
so the model learns to stay quiet.
"""

from __future__ import annotations

import difflib
import enum
import io
import keyword
import random
import re
import tokenize
from dataclasses import dataclass, replace

from model.formats import (
    NextEditBudget,
    history_ids,
    next_edit_region_ids,
    next_edit_targets,
    render_hunk,
)
from model.tokenizer import CodeTokenizer
from model.training.fim_examples import FimExample

NO_CHANGE_SHARE = 0.35
MAX_REGION_LINES = 3


@dataclass(frozen=True)
class EditPair:
    """One file before and after a real change."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Hunk:
    start: int  # line where the hunk starts once the earlier hunks are applied
    old_lines: list[str]  # with line endings
    new_lines: list[str]


class SyntheticKind(enum.Enum):
    RENAME = "rename"
    CALL_SITE = "call_site"
    DELETE_TWIN = "delete_twin"


def line_hunks(old: str, new: str, context: int = 0) -> list[Hunk]:
    """The hunks that turn ``old`` into ``new``. With ``context`` 0, each run of changed
    lines is a hunk. Otherwise hunks are cut as ``git diff -U<context>`` cuts them: changes
    at most 2 × ``context`` unchanged lines apart are one hunk, which also holds up to
    ``context`` unchanged lines on either side."""
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    if context == 0:
        return [
            Hunk(j1, old_lines[i1:i2], new_lines[j1:j2])
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()
            if tag != "equal"
        ]
    hunks = []
    for group in matcher.get_grouped_opcodes(context):
        if all(tag == "equal" for tag, *_ in group):  # nothing changed
            continue
        (_, i1, _, j1, _), (_, _, i2, _, j2) = group[0], group[-1]
        hunks.append(Hunk(j1, old_lines[i1:i2], new_lines[j1:j2]))
    return hunks


def replay_targets(hunks: list[Hunk], bottom_up: bool) -> range:
    """The hunks that can be a replay's target: those with at least one hunk of history."""
    return range(len(hunks) - 1) if bottom_up else range(1, len(hunks))


def replay(hunks: list[Hunk], k: int, bottom_up: bool) -> tuple[list[Hunk], Hunk]:
    """The history of a replay whose target is hunk ``k``, in the order applied, and the
    target, each with the start where it then applies. Top-down: the hunks above it (a
    hunk's start already counts the lines after those above). Bottom-up: the hunks below
    it, from the last one up, each start counted in the old file (nothing above a hunk has
    changed yet)."""
    if not bottom_up:
        return hunks[:k], hunks[k]
    moved, shift = [], 0
    for hunk in hunks:
        moved.append(replace(hunk, start=hunk.start - shift))
        shift += len(hunk.new_lines) - len(hunk.old_lines)
    return moved[:k:-1], moved[k]


def build_example(
    tokenizer: CodeTokenizer, path: str, lines: list[str], history: list[str], region_start: int,
    region_end: int, rewritten: str | None, budget: NextEditBudget, canvas_size: int,
) -> FimExample | None:
    """Context and canvas for "rewrite lines[region_start:region_end], given history"."""
    head = history_ids(tokenizer, history, budget)
    tail = next_edit_region_ids(
        tokenizer, "".join(lines[:region_start]), "".join(lines[region_start:region_end]),
        "".join(lines[region_end:]), budget.total - len(head), budget,
    )
    targets = next_edit_targets(tokenizer, rewritten, canvas_size)
    if tail is None or targets is None:
        return None
    return FimExample(head + tail, targets)


def _quiet_region(lines: list[str], avoid: range, rng: random.Random) -> int | None:
    """A non-blank line outside ``avoid``, for a no-change example."""
    choices = [i for i, line in enumerate(lines) if line.strip() and i not in avoid]
    return rng.choice(choices) if choices else None


def replay_example(
    tokenizer: CodeTokenizer, pair: EditPair, rng: random.Random, budget: NextEditBudget, canvas_size: int
) -> FimExample | None:
    hunks = line_hunks(pair.old, pair.new)
    if not hunks or len(hunks) > 60:
        return None
    k = rng.randrange(len(hunks))
    target = hunks[k]
    # The file with hunks 0..k-1 applied: new text up to hunk k, old text from there on.
    old_lines, new_lines = pair.old.splitlines(keepends=True), pair.new.splitlines(keepends=True)
    consumed_old = target.start - sum(len(h.new_lines) - len(h.old_lines) for h in hunks[:k])
    lines = new_lines[: target.start] + old_lines[consumed_old:]
    history = [render_hunk(pair.path, h.start, "".join(h.old_lines), "".join(h.new_lines)) for h in hunks[:k]]
    if target.old_lines:
        start, end = target.start, target.start + len(target.old_lines)
        rewritten = "".join(target.new_lines)
    else:  # a pure insertion rewrites the line before it into itself plus the new lines
        if target.start == 0:
            return None
        start, end = target.start - 1, target.start
        rewritten = lines[start] + "".join(target.new_lines)
    if end - start > MAX_REGION_LINES:
        return None
    if rng.random() < NO_CHANGE_SHARE:
        quiet = _quiet_region(lines, range(start - 1, end + 1), rng)
        if quiet is None:
            return None
        return build_example(tokenizer, pair.path, lines, history, quiet, quiet + 1, None, budget, canvas_size)
    return build_example(tokenizer, pair.path, lines, history, start, end, rewritten, budget, canvas_size)


# ---------------------------------------------------------------- synthetic edits

NEW_NAME_AFFIXES = ("_new", "s", "_list", "_id", "_value", "_count", "2", "_map", "_obj")
NEW_NAME_PREFIXES = ("new_", "old_", "_", "the_", "raw_", "all_")
EXTRA_ARGUMENTS = ("timeout=timeout", "verbose=True", "None", "context", "strict=False", "key=key",
                   "*args", "**kwargs", "default=None", "self")


def _identifier_lines(text: str) -> dict[str, list[int]]:
    """Identifier → line numbers (0-based) where it occurs, from Python's tokenizer."""
    found: dict[str, list[int]] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME and not keyword.iskeyword(token.string) and len(token.string) > 1:
                rows = found.setdefault(token.string, [])
                if not rows or rows[-1] != token.start[0] - 1:
                    rows.append(token.start[0] - 1)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # A window cut from the middle of a file may not tokenize: fall back to words
        # outside comments.
        found = {}
        for row, line in enumerate(text.splitlines()):
            for word in dict.fromkeys(_WORD.findall(line.split("#", 1)[0])):
                if not keyword.iskeyword(word) and len(word) > 1:
                    found.setdefault(word, []).append(row)
    return found


_WORD = re.compile(r"\b[A-Za-z_]\w*\b")


def _rename(lines: list[str], rng: random.Random) -> tuple[list[int], dict[int, str]] | None:
    names = {name: rows for name, rows in _identifier_lines("".join(lines)).items() if 2 <= len(rows) <= 40}
    if not names:
        return None
    name = rng.choice(sorted(names))
    rows = names[name][:8]
    new_name = rng.choice([name + rng.choice(NEW_NAME_AFFIXES), rng.choice(NEW_NAME_PREFIXES) + name])
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    return rows, {row: pattern.sub(new_name, lines[row]) for row in rows}


def _call_site(lines: list[str], rng: random.Random) -> tuple[list[int], dict[int, str]] | None:
    calls: dict[str, list[int]] = {}
    for row, line in enumerate(lines):
        for match in re.finditer(r"\b([A-Za-z_][\w.]*)\(([^()]*)\)", line):
            if not line.lstrip().startswith(("def ", "class ")):
                calls.setdefault(match.group(1), []).append(row)
    usable = {name: sorted(set(rows)) for name, rows in calls.items() if len(set(rows)) >= 2}
    if not usable:
        return None
    name = rng.choice(sorted(usable))
    extra = rng.choice(EXTRA_ARGUMENTS)

    def add_argument(line: str) -> str:
        def patch(match: re.Match[str]) -> str:
            inside = match.group(2).strip()
            return f"{match.group(1)}({inside + ', ' if inside else ''}{extra})"

        return re.sub(rf"\b({re.escape(name)})\(([^()]*)\)", patch, line, count=1)

    rows = usable[name][:6]
    return rows, {row: add_argument(lines[row]) for row in rows}


def _delete_twin(lines: list[str], rng: random.Random) -> tuple[list[int], dict[int, str]] | None:
    by_head: dict[str, list[int]] = {}
    for row, line in enumerate(lines):
        stripped = line.strip()
        if len(stripped) > 8 and not stripped.startswith(("#", "def ", "class ", "return", "else", "try")):
            by_head.setdefault(re.split(r"[(\s=.]", stripped, maxsplit=1)[0], []).append(row)
    groups = [rows for rows in by_head.values() if 2 <= len(rows) <= 12]
    if not groups:
        return None
    rows = rng.choice(groups)[:4]
    return rows, dict.fromkeys(rows, "")


SYNTHESIZERS = {SyntheticKind.RENAME: _rename, SyntheticKind.CALL_SITE: _call_site,
                SyntheticKind.DELETE_TWIN: _delete_twin}


def synthetic_example(
    tokenizer: CodeTokenizer, path: str, text: str, rng: random.Random, budget: NextEditBudget, canvas_size: int
) -> FimExample | None:
    """Edits applied to the first occurrences are the history; the next is the target."""
    lines = text.splitlines(keepends=True)
    if len(lines) < 4:
        return None
    # A window of the file keeps tokenizing cheap and the occurrences close together.
    top = rng.randrange(max(1, len(lines) - 80))
    lines = lines[top : top + 120]
    made = SYNTHESIZERS[rng.choice(list(SyntheticKind))](lines, rng)
    if made is None:
        return None
    rows, rewritten = made
    rows = [row for row in rows if rewritten[row] != lines[row]]
    if len(rows) < 2:
        return None
    done = rng.randint(1, len(rows) - 1)
    history, state = [], list(lines)
    shift = 0
    for row in rows[:done]:
        history.append(render_hunk(path, row + shift, state[row + shift], rewritten[row]))
        if rewritten[row]:
            state[row + shift] = rewritten[row]
        else:
            del state[row + shift]
            shift -= 1
    target = rows[done] + shift
    if rng.random() < NO_CHANGE_SHARE:
        pending = {row + shift for row in rows[done:]}  # lines the same edit would still change
        quiet = _quiet_region(state, range(0), rng)
        if quiet is None or quiet in pending:
            return None
        return build_example(tokenizer, path, state, history, quiet, quiet + 1, None, budget, canvas_size)
    return build_example(tokenizer, path, state, history, target, target + 1, rewritten[rows[done]], budget,
                         canvas_size)
