"""``redraft bench rename``: one use of a name renamed by hand, then the next edit asked for.

The everyday next edit, "rename here → same rename there", as a person makes it: for a
name that a Python function binds (a parameter, or a name it assigns; found with ``ast``;
``self``, ``cls`` and builtins left out) and uses at least twice in its body (or, with
``--members``, an attribute a class sets, ``self.name = …``, or a method it defines, used
at least twice through ``self.`` or ``cls.`` in that class or defined and used once,
nested classes left out), open the
file, select the name's first use (``--at any``: a use drawn at random, so that uses
above it are left to rename too) and type the new name one character per ``didChange``
(the first keystroke replaces the selection), then call ``redraft/nextEdit`` with the
cursor after it and apply ``items[0].edit``, exactly as the contract says. Keyword names
in calls (``f(path=…)``) are not uses of the variable, and ``ast`` does not list them.

Right: the document then has the next use of the name renamed, or the next several in
order (typed at another use: one or more other uses renamed, and nothing else). Shown: an
answer at or above the threshold (the served default, 0.5, unless told). Then, as an
editor's accept-and-jump does, each first item is applied (``didChange``) and
``redraft/nextEdit`` asked again where it applied, until nothing is proposed: the chain
ends with every use renamed, stopped early, or at an edit that is not part of the rename.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.lsp_client import ContentChange, LspClient, LspPosition, LspRange
from benchmarks.lsp_text import position_to_offset
from benchmarks.scoring import percentile

_NOT_RENAMED = frozenset(dir(builtins)) | {"self", "cls"}


@dataclass(frozen=True)
class RenameCase:
    path: Path
    text: str
    name: str
    uses: tuple[tuple[int, int], ...]  # (line, character) of each use, in order; characters are str offsets
    new_name: str
    typed: int = 0  # the use renamed by hand


CHAIN_DONE, CHAIN_STOPPED, CHAIN_WRONG = "every use renamed", "stopped early", "a wrong edit"


@dataclass
class RenameOutcome:
    shown: bool
    right: bool
    latency_ms: float
    chain: str  # how accepting one proposal after another ended


@dataclass
class RenameReport:
    files: int = 0
    outcomes: list[RenameOutcome] = field(default_factory=list)
    anywhere: bool = False  # typed at a use drawn at random, not the first
    members: bool = False  # attributes a class sets and methods it defines, not functions' names


def rename_cases(paths: list[Path], limit: int, seed: int, anywhere: bool = False,
                 members: bool = False) -> tuple[list[RenameCase], int]:
    """Up to ``limit`` cases drawn at random from the functions of ``paths`` (``members``:
    from their classes' attributes and methods), and how many files could be parsed;
    ``anywhere``: each typed at a use drawn at random, not the first."""
    rng = random.Random(seed)
    found: list[RenameCase] = []
    parsed = 0
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        parsed += 1
        lines = text.splitlines(keepends=True)
        for scope in ast.walk(tree):
            if isinstance(scope, ast.ClassDef if members else ast.FunctionDef | ast.AsyncFunctionDef):
                named = _member_uses_in(scope, lines) if isinstance(scope, ast.ClassDef) else _uses_in(scope, lines)
                for name, uses in named.items():
                    if len(uses) >= 2:
                        new_name = f"renamed_{name}" if rng.random() < 0.5 else f"{name}_renamed"
                        typed = rng.randrange(len(uses)) if anywhere else 0
                        found.append(RenameCase(path, text, name, tuple(uses), new_name, typed))
    rng.shuffle(found)
    return found[:limit], parsed


def _uses_in(function: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> dict[str, list[tuple[int, int]]]:
    """Each parameter's and local name's uses in ``function`` (in nested functions too,
    where they don't bind the name themselves), as (line, str offset); a name with any
    position that doesn't check out is dropped."""
    uses: dict[str, set[tuple[int, int]]] = {}
    dropped: set[str] = set()
    parameters = [(a.arg, a.lineno, a.col_offset) for a in _parameters(function)]
    nodes = list(parameters)
    # The body only: decorators, annotations and defaults belong to the enclosing scope.
    body = [node for statement in function.body for node in ast.walk(statement)]
    shadowed = _shadowed_names(body)
    names = [node for node in body if isinstance(node, ast.Name) and id(node) not in shadowed]
    nodes += [(node.id, node.lineno, node.col_offset) for node in names]
    # `except E as name` binds the name in the function, as an assignment does.
    handlers = [node for node in body if isinstance(node, ast.ExceptHandler) and node.name and id(node) not in shadowed]
    for handler in handlers:
        encoded = lines[handler.lineno - 1].encode("utf-8")
        found = re.search(rf"\bas\s+({handler.name})\b".encode(), encoded[handler.col_offset :])
        if found is not None:
            nodes.append((str(handler.name), handler.lineno, handler.col_offset + found.start(1)))
    for declaration in (node for node in body if isinstance(node, ast.Nonlocal | ast.Global)):
        encoded = lines[declaration.lineno - 1].encode("utf-8")
        for name in declaration.names:  # `nonlocal a, b` gives no position per name
            found = re.search(rf"\b{name}\b".encode(), encoded[declaration.col_offset :])
            if found is not None:
                nodes.append((name, declaration.lineno, declaration.col_offset + found.start()))
    # Names the function binds (its parameters, what it assigns): renaming an imported or
    # global name at one use is not a rename a person makes.
    bound = {name for name, _, _ in parameters} | {node.id for node in names if isinstance(node.ctx, ast.Store)} | \
        {str(handler.name) for handler in handlers}
    for name, lineno, byte_offset in nodes:
        if name in _NOT_RENAMED or len(name) < 2 or name not in bound:
            continue
        at = _name_at(lines, lineno, byte_offset, name)
        if at is None:
            dropped.add(name)
            continue
        uses.setdefault(name, set()).add(at)
    return {name: sorted(at) for name, at in uses.items() if name not in dropped}


def _shadowed_names(body: list[ast.AST]) -> set[int]:
    """The ``id``s of the Name nodes and ``except … as`` handlers, among a function's
    body's, that are a nested function's or lambda's own variables: its parameters and
    what it assigns without declaring them ``nonlocal`` or ``global``. There the name is
    another variable (its own case), which renaming the outer one leaves alone."""
    shadowed: set[int] = set()
    for nested in body:
        if not isinstance(nested, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        inside = [node for node in ast.walk(nested) if node is not nested]
        declared = {name for node in inside if isinstance(node, ast.Nonlocal | ast.Global) for name in node.names}
        own = {a.arg for a in _parameters(nested)} | {
            node.id for node in inside if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)} | {
            node.name for node in inside if isinstance(node, ast.ExceptHandler) and node.name}
        for node in inside:
            name = node.id if isinstance(node, ast.Name) else node.name if isinstance(node, ast.ExceptHandler) else None
            if name is not None and name in own - declared:
                shadowed.add(id(node))
    return shadowed


def _name_at(lines: list[str], lineno: int, byte_offset: int, name: str) -> tuple[int, int] | None:
    """(line, str offset) of ``name`` at ast's 1-based ``lineno`` and UTF-8 ``byte_offset``
    (ast counts bytes, the document characters); None when the text there is not ``name``."""
    line = lines[lineno - 1] if 0 < lineno <= len(lines) else ""
    character = len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))
    return (lineno - 1, character) if line[character : character + len(name)] == name else None


def _member_uses_in(klass: ast.ClassDef, lines: list[str]) -> dict[str, list[tuple[int, int]]]:
    """Each attribute ``klass`` sets through ``self.`` or ``cls.`` and each method it defines
    (dunders left out), with its uses through them in the class (nested classes left out)
    and a method's name in its ``def``, as (line, str offset) of the name."""
    nested = [node for statement in klass.body for node in ast.walk(statement) if isinstance(node, ast.ClassDef)]
    inside_nested = {id(node) for inner in nested for node in ast.walk(inner)}
    attributes = [node for statement in klass.body for node in ast.walk(statement)
                  if isinstance(node, ast.Attribute) and id(node) not in inside_nested
                  and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")]
    methods = {node.name: node for node in klass.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
               and not (node.name.startswith("__") and node.name.endswith("__")) and node.name not in _NOT_RENAMED}
    members = {node.attr for node in attributes if isinstance(node.ctx, ast.Store)} | set(methods)
    uses: dict[str, set[tuple[int, int]]] = {}
    dropped: set[str] = set()
    for name, method in methods.items():
        line = lines[method.lineno - 1] if method.lineno - 1 < len(lines) else ""
        found = re.search(rf"\bdef\s+({re.escape(name)})\b", line)
        if found is None:
            dropped.add(name)
            continue
        uses.setdefault(name, set()).add((method.lineno - 1, found.start(1)))
    for node in attributes:
        name = node.attr
        if name not in members or name in _NOT_RENAMED or len(name) < 2 or node.end_col_offset is None:
            continue
        # The attribute's name ends the node: `self.name` on one line.
        at = _name_at(lines, node.lineno, node.end_col_offset - len(name.encode("utf-8")), name) \
            if node.lineno == node.end_lineno else None
        if at is None:
            dropped.add(name)
            continue
        uses.setdefault(name, set()).add(at)
    return {name: sorted(at) for name, at in uses.items() if name not in dropped and len(at) >= 2}


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.arg]:
    arguments = function.args
    extra = [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, *extra]


def _utf16(line: str, character: int) -> int:
    return len(line[:character].encode("utf-16-le")) // 2


def _renamed(lines: list[str], uses: tuple[tuple[int, int], ...], old: str, new: str) -> str:
    """The text with the given uses renamed (uses on one line from the right, so offsets hold)."""
    renamed = list(lines)
    for line, character in sorted(uses, reverse=True):
        text = renamed[line]
        renamed[line] = text[:character] + new + text[character + len(old) :]
    return "".join(renamed)


async def _case(client: LspClient, uri: str, case: RenameCase) -> RenameOutcome:
    lines = case.text.splitlines(keepends=True)
    line, character = case.uses[case.typed]
    start = _utf16(lines[line], character)
    await client.did_open(uri, case.text)
    # Select the old name, type the new one: the first keystroke replaces the selection.
    end = start + _utf16(case.name, len(case.name))
    version = 1
    for typed in case.new_name:
        version += 1
        selection = LspRange(start=LspPosition(line=line, character=start), end=LspPosition(line=line, character=end))
        await client.did_change(uri, version, [ContentChange(range=selection, text=typed)])
        start = end = start + _utf16(typed, 1)
    typed_only = document = _renamed(lines, case.uses[case.typed : case.typed + 1], case.name, case.new_name)
    everywhere = _renamed(lines, case.uses, case.name, case.new_name)
    cursor = LspPosition(line=line, character=start)
    outcome = RenameOutcome(False, False, 0.0, CHAIN_STOPPED)
    # Accept each first item and ask again from where it applied, as an editor's
    # accept-and-jump does, until nothing is proposed or every use is renamed.
    for asked in range(len(case.uses) + 1):
        started = time.perf_counter()
        result = await client.request("redraft/nextEdit", {"textDocument": {"uri": uri}, "position": cursor})
        if asked == 0:
            outcome.latency_ms = (time.perf_counter() - started) * 1000
        if not result or not result.get("items"):
            break
        edit = result["items"][0]["edit"]
        first, last = edit["range"]["start"], edit["range"]["end"]
        a = position_to_offset(document, first["line"], first["character"])
        b = position_to_offset(document, last["line"], last["character"])
        document = document[:a] + edit["newText"] + document[b:]
        if asked == 0:
            outcome.shown = True
            if case.typed == 0:
                outcome.right = any(document == _renamed(lines, case.uses[: k + 1], case.name, case.new_name)
                                    for k in range(1, len(case.uses)))
            else:
                outcome.right = document != typed_only and is_part_of_the_rename(document, case)
        if not is_part_of_the_rename(document, case):
            outcome.chain = CHAIN_WRONG
            break
        if document == everywhere:
            outcome.chain = CHAIN_DONE
            break
        version += 1
        await client.did_change(uri, version, [ContentChange(range=LspRange(start=first, end=last),
                                                             text=edit["newText"])])
        cursor = first
    await client.did_close(uri)
    return outcome


def is_part_of_the_rename(document: str, case: RenameCase) -> bool:
    """Every line of ``document`` is as it was with some of the name's uses on it renamed
    (a keyword ``name=`` or a word in a string renamed too is a wrong edit)."""
    lines, before = document.splitlines(keepends=True), case.text.splitlines(keepends=True)
    if len(lines) != len(before):
        return False
    for row, (line, old) in enumerate(zip(lines, before, strict=True)):
        if line == old:
            continue
        on_row = [use for use in case.uses if use[0] == row][:8]
        renamings = (_renamed([old], tuple((0, c) for i, (_, c) in enumerate(on_row) if chosen >> i & 1),
                              case.name, case.new_name) for chosen in range(1, 2 ** len(on_row)))
        if line not in renamings:
            return False
    return True


async def _run(cases: list[RenameCase], command: list[str], threshold: float) -> list[RenameOutcome]:
    outcomes = []
    async with LspClient(command, timeout=120) as client:
        await client.initialize({"nextEditConfidenceThreshold": threshold, "requestTimeoutMs": 30_000})
        await client.initialized()
        for n, case in enumerate(cases):
            outcomes.append(await _case(client, f"file:///bench/rename/{n}/{case.path.name}", case))
    return outcomes


def run_rename_bench(folder: Path, limit: int, command: list[str], threshold: float = 0.5,
                     seed: int = 0, anywhere: bool = False, members: bool = False) -> RenameReport:
    paths = sorted(p for p in folder.rglob("*.py") if p.is_file())
    cases, parsed = rename_cases(paths, limit, seed, anywhere, members)
    return RenameReport(parsed, asyncio.run(_run(cases, command, threshold)), anywhere, members)


def format_rename(report: RenameReport, threshold: float) -> str:
    outcomes = report.outcomes
    n = len(outcomes)
    shown = [o for o in outcomes if o.shown]
    right = sum(o.right for o in shown)
    latencies = [o.latency_ms for o in outcomes]
    return (f"{n} {'member ' if report.members else ''}renames in {report.files} files, "
            f"threshold {threshold:g}"
            f"{', typed at a use drawn at random' if report.anywhere else ''}\n"
            f"shown {share(len(shown), n)}   right among shown {share(right, len(shown))}   "
            f"right overall {share(right, n)}\n"
            f"accepting proposal after proposal: "
            + "   ".join(f"{ending} {share(sum(o.chain == ending for o in outcomes), n)}"
                         for ending in (CHAIN_DONE, CHAIN_STOPPED, CHAIN_WRONG)) + "\n"
            f"latency p50 {percentile(latencies, 50):.0f} ms  p95 {percentile(latencies, 95):.0f} ms")


def share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "–"
