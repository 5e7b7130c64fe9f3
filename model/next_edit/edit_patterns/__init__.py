"""Edits that repeat the newest change elsewhere, found without the network.

Most next edits a person makes right after a change are the same change again: a renamed
name still used below, the same argument added at the next call, the twin of a deleted or
rewritten line. These patterns are read off the edit log exactly (token diffs of the
newest change), so they are proposed at once and never invented; the network handles what
no pattern explains. Each proposal carries its ``kind``; its confidence is the precision
that kind reached on held-out real edits (``next_edit/calibrate.py``), at its distance from
the change, and apart when the change repeats the one before it (``repeats_previous``).

Kinds:
- ``rename``: one identifier replaced by another (every changed token in the edit is that
  same replacement); other uses of the old name get the new one, on the edited line too,
  outside strings and comments (an f-string's fields are code). A parameter renamed in a
  ``def``/``function`` header is carried only through that function's body; a name the
  function around the change binds, through that function (header included; every use
  there is "near"), and a name a nested function uses from the function around it (its
  closure, or declared ``nonlocal``), through that one; a name no function around binds
  is a global, carried through the file. A ``def`` nested in the scope that binds the
  name itself has a variable of its own, left alone. An
  attribute the class around the change sets (``self.name = …``), renamed through
  ``self.`` or ``cls.``, is carried through that class; a method it defines, renamed in
  its ``def`` or at a call through ``self.`` (to a name the class does not define), is
  carried to its ``def`` and its calls through any object in the file. Their uses through
  ``self.``, ``cls.`` or ``super().`` in the class are all "near" (another receiver's
  ``x.name`` may be another class's: as near as it is). A name
  keeps its role: a renamed variable leaves ``f(path=path)``'s keyword alone, a renamed
  keyword leaves variables, a parameter named like its function leaves the function. A
  use switched to another variable of the function (both names bound apart from the
  edited lines, and no earlier step of the same rename there) is not a rename.
  In JavaScript and TypeScript the tree says where a name reaches instead
  (``rename_trees``; ``model/languages/js_scopes.py``): every reference of the binding
  the renamed name resolves to, both names read as one so that a rename half made is
  carried on, all "near"; a member of the class around the change, renamed through
  ``this.`` or where the class defines it (a method, a field), is carried to its places in
  that class; another object's property renames nothing.
- ``call_site``: the arguments of a call ``name(…)`` changed by appending, prepending,
  replacing or removing one argument; other calls of ``name`` with the old argument get
  the same change. Not for a rename: a variable renamed in a call is the rename's.
- ``same_line``: a whole line was rewritten or deleted; lines equal to its old text get
  the same rewrite (with their own indentation) or are deleted; a line wrapped over
  several (the same words) has its twins wrapped alike. Not for a rename, whose twin line
  in another function is another variable. When the newest change implies nothing at
  all, the twin lines of the change before it (``twins_of_previous_change``).
- ``repeated_line``: one line's change read as a token-level transformation (names,
  numbers and strings as slots, a name the edited line held standing for the other line's
  own) and made on the unbroken run of lines of the same shape and indentation around it,
  above and below (``"a": row[0],`` → ``"a": str(row[0]),`` then ``"b": str(row[1]),``).
  After the specific kinds, before the general ones; not for a rename, and only for a
  change typed in the editor (a diff's hunk that changed one line of a run left the rest
  as they are on purpose).
- ``builtin_generic``: typing modernised. The change writes typing's aliases of builtins
  as the builtins (PEP 585: ``List[int]`` → ``list[int]``, ``t.Dict[`` → ``dict[``) or
  ``Optional[X]`` / ``Union[A, B]`` as ``X | None`` / ``A | B`` (PEP 604), or drops them
  from a ``from typing import`` line; every other line using a name the change touched, or
  one the file no longer imports, is written the same way, and with PEP 604 the builtin
  aliases too (one sweep, by hand or a tool's fixes replayed hunk by hunk, does both).
- ``python3_idiom``: Python 2's leftovers written the Python 3 way (``super(Name, self)``
  → ``super()`` in a method of ``Name``, ``class Name(object):`` → ``class Name:``, a
  string's ``u`` prefix dropped); a change that is those rewrites alone has them made on
  every other line.
- ``annotation``: a one-line ``def`` given its return annotation (and maybe its
  parameters theirs); the unannotated one-line ``def``s on each side, nearest first, are
  annotated too, up to the first whose types its code does not tell (``-> None`` for a
  body that returns nothing, the types the file's other ``def``s give its parameter names).
- ``substitution``, only when none of the above applies: one line's change is one
  contiguous run of tokens replaced by another (``"%s" % x`` → ``str(x)``, ``.get(`` →
  ``.pop(``, ``, 0)`` → ``, None)``); other lines holding that run between the same
  neighbouring tokens get the same replacement. After a function's variable was renamed
  (and the rename found nothing left), this kind and the ones below stay in that
  function: elsewhere the name is another variable.
- ``insertion``, likewise: one line's change is one run of tokens inserted (``def f():`` →
  ``def f() -> None:``); other lines with the same first word and the same
  ``INSERTION_CONTEXT`` words or symbols on each side of that place get the same run.
- ``spacing``, likewise: the change kept every word and spaced one pair of them anew (a
  stub's ``...`` joined to its header, ``[ ]`` → ``[]``); wherever those two words meet the
  old way, they get the new blank. Not a line broken in two, which is typing.
- ``quotes``, likewise: the change requoted every one-line string literal it could from
  one quote to the other (``'x'`` → ``"x"``); the other lines' literals that can be
  requoted so are.

The kinds live in their own modules: ``rename`` (and ``rename_trees``), ``call_sites``, ``same_lines``,
``repeated_lines``,
``builtin_generics``, ``python3_idioms``, ``annotations``, ``one_line_rewrites``
(``substitution`` and ``insertion``), ``spacing`` and ``quotes``. They share ``changes``
(the change, the proposal, the kinds' names) and ``text`` (lines, tokens, indentation);
this module runs them and places what they propose.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import cache

from model.code_text import PythonLiterals
from model.languages.js_scopes import scoped_by_tree
from model.next_edit.edit_patterns.annotations import annotation_edits
from model.next_edit.edit_patterns.builtin_generics import builtin_generic_edits
from model.next_edit.edit_patterns.call_sites import call_site_edits
from model.next_edit.edit_patterns.changes import (
    ANNOTATION,
    BUILTIN_GENERIC,
    CALIBRATION_KEYS,
    CALL_SITE,
    INSERTION,
    KINDS,
    MAX_CHAIN,
    NEAR_LINES,
    PYTHON3_IDIOM,
    QUOTES,
    RENAME,
    REPEATED_LINE,
    SAME_LINE,
    SPACING,
    SUBSTITUTION,
    Change,
    PatternEdit,
)
from model.next_edit.edit_patterns.one_line_rewrites import (
    INSERTION_CONTEXT,
    LONGEST_LINE,
    SUBSTITUTION_CONTEXT,
    as_insertion,
    as_substitution,
    one_line_rewrite_edits,
)
from model.next_edit.edit_patterns.python3_idioms import python3_idiom_edits
from model.next_edit.edit_patterns.quotes import quote_edits
from model.next_edit.edit_patterns.rename import rename_edits, renamed_identifier, renamed_variable_scope
from model.next_edit.edit_patterns.rename_trees import tree_rename_edits
from model.next_edit.edit_patterns.repeated_lines import repeated_line_edits
from model.next_edit.edit_patterns.same_lines import same_line_edits
from model.next_edit.edit_patterns.spacing import spacing_edits
from model.next_edit.edit_patterns.text import split_lines, tokens_of

__all__ = [
    "ANNOTATION",
    "BUILTIN_GENERIC",
    "CALIBRATION_KEYS",
    "CALL_SITE",
    "INSERTION",
    "INSERTION_CONTEXT",
    "KINDS",
    "LONGEST_LINE",
    "NEAR_LINES",
    "PYTHON3_IDIOM",
    "QUOTES",
    "RENAME",
    "REPEATED_LINE",
    "SAME_LINE",
    "SPACING",
    "SUBSTITUTION",
    "SUBSTITUTION_CONTEXT",
    "WINDOW_LINES",
    "Change",
    "PatternEdit",
    "edited_insertion",
    "moved_lines",
    "net_change",
    "pattern_edits",
    "previous_change",
    "repeats_previous",
    "travel",
    "twins_of_previous_change",
]

# Lines looked at on each side of the change: bounds the work in a huge file.
WINDOW_LINES = 3_000


def net_change(changes: list[Change]) -> Change | None:
    """The newest change, merged with the earlier ones that typed on the same line.

    The edit log merges keystrokes only within a second; a slow rename arrives as several
    events (``value`` → ``v`` → ``a`` → ``am`` …) whose sum is the rename."""
    return _merged(changes)[0] if changes else None


def _merged(changes: list[Change]) -> tuple[Change, int]:
    """The newest change with its keystrokes merged, and how many events that took."""
    merged = changes[-1]
    count = 1
    for earlier in reversed(changes[-MAX_CHAIN:-1]):
        single = _line_count(earlier.old_text) == _line_count(earlier.new_text) == 1
        if not (single and earlier.start_line == merged.start_line and earlier.new_text == merged.old_text):
            break
        merged = Change(merged.start_line, earlier.old_text, merged.new_text)
        count += 1
    return merged, count


def edited_insertion(changes: list[Change]) -> range | None:
    """The lines of an insertion that the newest changes have been editing one by one, as
    they stand now; None when the newest change is not such an edit.

    A line copied (``yyp``, VS Code's Copy Line Down) or a block pasted, then changed, is
    being adapted: what its changes imply holds within it (a parameter renamed in a pasted
    function, at its uses there), not for the lines it was copied from. Read as a rewrite
    of them, the patterns proposed rewriting the original into the copy."""
    edits: list[Change] = []
    for earlier in reversed(changes[-MAX_CHAIN:]):
        if not earlier.old_text:
            if not edits:
                return None
            lines = split_lines(earlier.new_text)
            for edit in reversed(edits):
                row = edit.start_line - earlier.start_line
                if not 0 <= row < len(lines) or lines[row] != edit.old_text:
                    return None
                lines[row] = edit.new_text
            return range(earlier.start_line, earlier.start_line + len(lines))
        if not _line_count(earlier.old_text) == _line_count(earlier.new_text) == 1:
            return None
        edits.append(earlier)
    return None


def previous_change(changes: list[Change]) -> Change | None:
    """The change before the newest (each with its keystrokes merged), its start moved to
    where its lines are now; None when there is none, or when a newer change rewrote its
    lines."""
    if not changes:
        return None
    _, count = _merged(changes)
    older, newer = changes[: len(changes) - count], changes[len(changes) - count :]
    if not older:
        return None
    previous, _ = _merged(older)
    start, size = previous.start_line, _line_count(previous.new_text)
    for change in newer:
        replaced = _line_count(change.old_text)
        if change.start_line + replaced <= start:
            start += _line_count(change.new_text) - replaced
        elif change.start_line < start + size:
            return None
    return replace(previous, start_line=start)


def repeats_previous(changes: list[Change]) -> bool:
    """The newest change made the same token replacements as the change before it: the
    person is repeating a change, and the same pattern's next place is likely the next edit
    (replayed, near proposals were right 70-79% of the time when so,
    40-63% when not)."""
    previous, newest = previous_change(changes), net_change(changes)
    if previous is None or newest is None:
        return False
    replaced = _replacements(newest)
    return bool(replaced) and replaced == _replacements(previous)


def _replacements(change: Change) -> frozenset[tuple[str, str]]:
    """The runs of tokens the change replaced and what replaced them, blanks at their ends dropped."""
    old, new = tokens_of(change.old_text), tokens_of(change.new_text)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    runs = {("".join(old[i1:i2]).strip(), "".join(new[j1:j2]).strip())
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"}
    return frozenset(run for run in runs if run != ("", ""))


def moved_lines(changes: list[Change]) -> bool:
    """The newest change and the one before it moved lines: one deleted exactly the lines
    the other inserted elsewhere (``ddp``, cut and paste, or a copy pasted and the original
    deleted). Nothing was deleted for good, so the deleted lines' twins are not to go; the
    patterns proposed deleting them."""
    newest, previous = net_change(changes), previous_change(changes)
    if newest is None or previous is None:
        return False
    deleted = [c.old_text for c in (newest, previous) if c.old_text and not c.new_text]
    inserted = [c.new_text for c in (newest, previous) if c.new_text and not c.old_text]
    return len(deleted) == len(inserted) == 1 and deleted[0] == inserted[0]


def twins_of_previous_change(lines: list[str], changes: list[Change]) -> list[PatternEdit]:
    """The twin lines of the change before the newest, away from the lines just edited.

    For when the newest change implies nothing: the same line rewritten in several places
    with another fix in between. Only twin lines: replayed on release diffs,
    the other kinds' near proposals from the change before were right 93 times in 230,
    twin lines near it 71 in 103."""
    previous, newest = previous_change(changes), net_change(changes)
    if previous is None or newest is None:
        return []
    just_edited = range(newest.start_line, newest.start_line + _line_count(newest.new_text))
    edited, window = _span(lines, previous)
    twins = [edit for edit in same_line_edits(lines, previous, edited, window) if edit.start_line not in just_edited]
    return _placed(twins, previous, edited)


def travel(changes: list[Change]) -> int:
    """Which way the person is moving through the file: 1 down, -1 up, 0 not known.

    The newest change against the one before it, each with its keystrokes merged. Two
    steps of one rename are one edit, not a way: its uses on both sides are still to do."""
    if not changes:
        return 0
    newest, count = _merged(changes)
    if count == len(changes):
        return 0
    previous, _ = _merged(changes[: len(changes) - count])
    if previous.start_line == newest.start_line:
        return 0
    rename = renamed_identifier(newest.old_text, newest.new_text)
    if rename is not None and rename == renamed_identifier(previous.old_text, previous.new_text):
        return 0
    return 1 if newest.start_line > previous.start_line else -1


def pattern_edits(lines: list[str], change: Change, path: str = "",
                  earlier: Sequence[Change] = (), joined_within: int = 0) -> list[PatternEdit]:
    """Every line of ``lines`` (with their endings) that the change's pattern would rewrite.

    ``change`` has already been applied to ``lines``; ``earlier``: the document's changes
    before it, oldest first (a rename made in several steps is told by them). Proposals
    come nearest to the change first, lines below it before lines above at the same
    distance. Given hunks (``joined_within`` ≥ 0), edits of one kind at most
    ``joined_within`` unchanged lines apart are one edit, with the lines between them as
    they are (``_merge_near``); typed (< 0), each line is one."""
    found: dict[int, PatternEdit] = {}
    edited, window = _span(lines, change)
    literals = cache(lambda: PythonLiterals(lines))  # read once, and only by a pattern that needs it
    renames = tree_rename_edits(lines, change, edited, window, path, earlier) if scoped_by_tree(path) \
        else rename_edits(lines, change, edited, window, path, earlier, literals)
    for edit in (*renames,
                 *call_site_edits(lines, change, edited, window, path), *same_line_edits(lines, change, edited, window),
                 *builtin_generic_edits(lines, change, window, path, literals),
                 *python3_idiom_edits(lines, change, edited, window, literals),
                 *annotation_edits(lines, change, edited, window, path, literals)):
        found.setdefault(edit.start_line, edit)
    general = not found  # the most general patterns, only when no specific one explains the change
    # The run of lines shaped like the edited one, after the specific kinds and before the
    # general ones: on those lines it reads the change as they do, and further. Only for a
    # typed change: a diff's hunk that left the lines beside it as they were meant them so.
    if joined_within < 0:
        for edit in repeated_line_edits(lines, change, edited, window):
            found.setdefault(edit.start_line, edit)
    if general:
        # A function's variable renamed: its name elsewhere is another function's variable.
        scope = renamed_variable_scope(lines, change) or range(len(lines))
        general_edits = {edit.start_line: edit for edit in (  # a later kind's wins a line
            *one_line_rewrite_edits(lines, change, edited, window, as_substitution, SUBSTITUTION),
            *one_line_rewrite_edits(lines, change, edited, window, as_insertion, INSERTION),
            *spacing_edits(lines, change, edited, window),
            *quote_edits(lines, change, edited, window)) if edit.start_line in scope}
        found = general_edits | found
    return _placed(found.values(), change, edited, lines, joined_within)


def _span(lines: list[str], change: Change) -> tuple[range, range]:
    """The lines the change wrote, and the window looked at around them."""
    edited = range(change.start_line, change.start_line + _line_count(change.new_text))
    return edited, range(max(0, change.start_line - WINDOW_LINES), min(len(lines), edited.stop + WINDOW_LINES))


def _placed(edits: Iterable[PatternEdit], change: Change, edited: range, lines: Sequence[str] = (),
            joined_within: int = 0) -> list[PatternEdit]:
    """Edits merged (``_merge_near``), each told how far it is from the change, nearest first."""
    def away(edit: PatternEdit) -> int:
        if edit.start_line >= edited.stop:
            return edit.start_line - edited.stop + 1
        return edit.start_line - change.start_line  # negative: above the change

    merged = _merge_near(sorted(edits, key=_start), lines, joined_within, edited)
    placed = [replace(e, lines_away=away(e)) for e in merged]
    return sorted(placed, key=lambda e: 2 * e.lines_away if e.lines_away >= 0 else -2 * e.lines_away + 1)


def _start(edit: PatternEdit) -> int:
    return edit.start_line


def _merge_near(edits: list[PatternEdit], lines: Sequence[str], joined_within: int, edited: range) -> list[PatternEdit]:
    """When changes arrive as a diff's hunks (``joined_within`` ≥ 0), edits of one kind on
    consecutive lines become one, and so do edits up to ``joined_within`` unchanged lines
    apart (``git diff``'s context, ``EditRecord.context_lines``; the lines between kept as
    they are), never across the lines just edited: git joins changes that close into one
    hunk, and the next hunk holds them all. Replayed as git hunks, commits of nine packages
    in no corpus: 10 more next hunks exact, none lost. Typed (``joined_within`` < 0), each
    line is an edit of its own: a person renaming use after use, or repeating a change line
    after line, takes the next line, and one edit over two uses is none of their steps."""
    if joined_within < 0:
        return edits
    merged: list[PatternEdit] = []
    for edit in edits:
        last = merged[-1] if merged else None
        gap = edit.start_line - last.end_line if last is not None else -1
        across = last is not None and last.end_line <= edited.start and edit.start_line >= edited.stop
        if last is not None and last.kind == edit.kind and (gap == 0 or (0 < gap <= joined_within and not across)):
            between = "".join(lines[last.end_line : edit.start_line])
            merged[-1] = replace(last, end_line=edit.end_line, new_text=last.new_text + between + edit.new_text)
        else:
            merged.append(edit)
    return merged


def _line_count(text: str) -> int:
    return len(split_lines(text))
