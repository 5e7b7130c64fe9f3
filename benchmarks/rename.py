"""``redraft bench rename``: one use of a name renamed by hand, then the next edit asked for.

The everyday next edit, "rename here → same rename there", as a person makes it: for a
name that a Python function binds (a parameter, or a name it assigns; found with ``ast``;
``self``, ``cls`` and builtins left out) and uses at least twice in its body (or, with
``--members``, an attribute a class sets, ``self.name = …``, or a method it defines, used
at least twice through ``self.`` or ``cls.`` in that class or defined and used once,
nested classes left out; in JavaScript and TypeScript a class's member named through
``this.`` or where the class defines it, ``benchmarks/rename_tree_members.py``), open the
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
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.accept_and_jump import ask_and_apply, send_accepted
from benchmarks.lsp_client import ContentChange, LspClient, LspPosition, LspRange
from benchmarks.rename_tree_members import member_cases
from benchmarks.rename_trees import SUFFIXES, draw, tree_cases
from benchmarks.scoring import percentile

_NOT_RENAMED = frozenset(dir(builtins)) | {"self", "cls"}
# One-letter names are renamed as often as any (`for k in …` → `for key in …`).
MIN_NAME = 1


@dataclass(frozen=True)
class RenameCase:
    path: Path
    text: str
    name: str
    uses: tuple[tuple[int, int], ...]  # (line, character) of each use, in order; characters are str offsets
    new_name: str
    typed: int = 0  # the use renamed by hand
    kind: str = "assigned"  # what binds the name (BINDING_KINDS)
    language: str = "python"


# How a person renames a use by hand: select the name and type over it, type a suffix at its
# end, or delete it character by character and type the new one.
TYPING_STYLES = ("select", "append", "retype")
PARAMETER, NESTED_PARAMETER, ASSIGNED, LOOP, UNPACKED, WITH_OR_EXCEPT, COMPREHENSION, MEMBER = (
    "parameter", "nested function's parameter", "assigned", "for target", "tuple target", "with/except target",
    "comprehension variable", "member")


CHAIN_DONE, CHAIN_STOPPED, CHAIN_WRONG = "every use renamed", "stopped early", "a wrong edit"


@dataclass
class RenameOutcome:
    shown: bool
    right: bool
    latency_ms: float
    chain: str  # how accepting one proposal after another ended
    kind: str = ASSIGNED
    next_line: bool = False  # the first proposal renamed the next use's line, and only it
    language: str = "python"


@dataclass
class RenameReport:
    files: int = 0
    outcomes: list[RenameOutcome] = field(default_factory=list)
    anywhere: bool = False  # typed at a use drawn at random, not the first
    members: bool = False  # attributes a class sets and methods it defines, not functions' names
    typing: str = "select"


def rename_cases(paths: list[Path], limit: int, seed: int, anywhere: bool = False,
                 members: bool = False, appended: bool = False) -> tuple[list[RenameCase], int]:
    """Up to ``limit`` cases drawn at random from the functions of ``paths`` (``members``:
    from their classes' attributes and methods), and how many files could be parsed;
    ``anywhere``: each typed at a use drawn at random, not the first; ``appended``: each
    new name the old one with a suffix, as typing at a name's end makes it."""
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
        functions = {id(inner) for outer in ast.walk(tree) if isinstance(outer, _FUNCTIONS)
                     for inner in ast.walk(outer) if inner is not outer and isinstance(inner, _FUNCTIONS)}
        for scope in ast.walk(tree):
            named: dict[str, tuple[str, list[tuple[int, int]]]] = {}
            if members and isinstance(scope, ast.ClassDef):
                named = {name: (MEMBER, uses) for name, uses in _member_uses_in(scope, lines).items()}
            elif not members and isinstance(scope, _FUNCTIONS):
                named = _uses_in(scope, lines, nested=id(scope) in functions)
            elif not members and isinstance(scope, _COMPREHENSIONS):
                named = _comprehension_uses(scope, lines)
            for name, (kind, uses) in named.items():
                if len(uses) >= 2:
                    new_name = f"renamed_{name}" if rng.random() < 0.5 and not appended else f"{name}_renamed"
                    typed = rng.randrange(len(uses)) if anywhere else 0
                    found.append(RenameCase(path, text, name, tuple(uses), new_name, typed, kind))
    rng.shuffle(found)
    return found[:limit], parsed


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _uses_in(function: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str],
             nested: bool = False) -> dict[str, tuple[str, list[tuple[int, int]]]]:
    """Each parameter's and local name's binding kind and uses in ``function`` (in nested
    functions too, where they don't bind the name themselves), as (line, str offset); a
    name with any position that doesn't check out is dropped. ``nested``: the function is
    defined inside another one."""
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
    kinds = {name: NESTED_PARAMETER if nested else PARAMETER for name, _, _ in reversed(parameters)}
    for name, kind in _store_kinds(function.body, shadowed):
        kinds.setdefault(name, kind)
    for name, lineno, byte_offset in nodes:
        if name in _NOT_RENAMED or len(name) < MIN_NAME or name not in kinds:
            continue
        at = _name_at(lines, lineno, byte_offset, name)
        if at is None:
            dropped.add(name)
            continue
        uses.setdefault(name, set()).add(at)
    return {name: (kinds[name], sorted(at)) for name, at in uses.items() if name not in dropped}


def _store_kinds(statements: list[ast.stmt], shadowed: set[int]) -> list[tuple[str, str]]:
    """(name, binding kind) of every name the statements bind, in the order they stand."""
    found: list[tuple[int, int, str, str]] = []

    def targets(target: ast.AST, kind: str) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and id(node) not in shadowed:
                unpacked = kind if isinstance(target, ast.Name) else UNPACKED
                found.append((node.lineno, node.col_offset, node.id, unpacked))

    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.For | ast.AsyncFor):
                targets(node.target, LOOP)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                targets(node.optional_vars, WITH_OR_EXCEPT)
            elif isinstance(node, ast.ExceptHandler) and node.name and id(node) not in shadowed:
                found.append((node.lineno, node.col_offset, node.name, WITH_OR_EXCEPT))
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    targets(target, ASSIGNED)
    found.sort()
    return [(name, kind) for _, _, name, kind in found]


def _comprehension_uses(comprehension: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp,
                        lines: list[str]) -> dict[str, tuple[str, list[tuple[int, int]]]]:
    """Each variable a comprehension binds with its uses there (its own scope: the first
    ``in`` is evaluated outside it, and comprehensions nested in it that bind the name again
    have their own)."""
    bound = {node.id for generator in comprehension.generators for node in ast.walk(generator.target)
             if isinstance(node, ast.Name)}
    inner = [node for node in ast.walk(comprehension)
             if node is not comprehension and isinstance(node, _COMPREHENSIONS)]
    rebinding = {name: {id(n) for c in inner for n in ast.walk(c)} for name in bound
                 if any(isinstance(t, ast.Name) and t.id == name for c in inner for g in c.generators
                        for t in ast.walk(g.target))}
    outside = {id(node) for node in ast.walk(comprehension.generators[0].iter)}
    lambdas = {id(node) for lam in ast.walk(comprehension) if isinstance(lam, ast.Lambda | ast.FunctionDef)
               for node in ast.walk(lam)}
    uses: dict[str, set[tuple[int, int]]] = {}
    dropped: set[str] = set()
    for node in ast.walk(comprehension):
        if not isinstance(node, ast.Name) or node.id not in bound or id(node) in outside or id(node) in lambdas:
            continue
        if id(node) in rebinding.get(node.id, set()) or node.id in _NOT_RENAMED or len(node.id) < MIN_NAME:
            continue
        at = _name_at(lines, node.lineno, node.col_offset, node.id)
        if at is None:
            dropped.add(node.id)
            continue
        uses.setdefault(node.id, set()).add(at)
    return {name: (COMPREHENSION, sorted(at)) for name, at in uses.items() if name not in dropped}


def _shadowed_names(body: list[ast.AST]) -> set[int]:
    """The ``id``s of the Name nodes and ``except … as`` handlers, among a function's
    body's, that are a nested function's, lambda's or comprehension's own variables: its
    parameters and what it assigns without declaring them ``nonlocal`` or ``global``. There the name is
    another variable (its own case), which renaming the outer one leaves alone."""
    shadowed: set[int] = set()
    for nested in body:
        if isinstance(nested, _COMPREHENSIONS):  # its variables are its own (its first `in` is not in it)
            own_names = {n.id for g in nested.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
            outside = {id(n) for n in ast.walk(nested.generators[0].iter)}
            shadowed.update(id(n) for n in ast.walk(nested)
                            if isinstance(n, ast.Name) and n.id in own_names and id(n) not in outside)
            continue
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


async def _case(client: LspClient, uri: str, case: RenameCase, typing: str = "select") -> RenameOutcome:
    lines = case.text.splitlines(keepends=True)
    line, character = case.uses[case.typed]
    start = _utf16(lines[line], character)
    await client.did_open(uri, case.text)
    end = start + _utf16(case.name, len(case.name))
    version = 1
    for change in _keystrokes(case, line, start, end, typing):
        version += 1
        await client.did_change(uri, version, [change])
    start += _utf16(case.new_name, len(case.new_name))
    typed_only = document = _renamed(lines, case.uses[case.typed : case.typed + 1], case.name, case.new_name)
    everywhere = _renamed(lines, case.uses, case.name, case.new_name)
    cursor = LspPosition(line=line, character=start)
    outcome = RenameOutcome(False, False, 0.0, CHAIN_STOPPED, case.kind, language=case.language)
    # Accept each first item and ask again from where it applied, as an editor's
    # accept-and-jump does, until nothing is proposed or every use is renamed.
    for asked in range(len(case.uses) + 1):
        latency_ms, proposal = await ask_and_apply(client, uri, document, cursor)
        if asked == 0:
            outcome.latency_ms = latency_ms
        if proposal is None:
            break
        document = proposal.document
        if asked == 0:
            outcome.shown = True
            if case.typed == 0:
                outcome.right = any(document == _renamed(lines, case.uses[: k + 1], case.name, case.new_name)
                                    for k in range(1, len(case.uses)))
            else:
                outcome.right = document != typed_only and is_part_of_the_rename(document, case)
            outcome.next_line = document == _renamed(lines, (case.uses[case.typed], *next_uses(case)), case.name,
                                                     case.new_name)
        if not is_part_of_the_rename(document, case):
            outcome.chain = CHAIN_WRONG
            break
        if document == everywhere:
            outcome.chain = CHAIN_DONE
            break
        version += 1
        await send_accepted(client, uri, version, proposal)
        cursor = proposal.start
    await client.did_close(uri)
    return outcome


def next_uses(case: RenameCase) -> tuple[tuple[int, int], ...]:
    """The uses on the line a person renames next: the first line below the typed use that
    has one (or, from the last use, the nearest above), every use on it."""
    typed_line = case.uses[case.typed][0]
    below = [use for use in case.uses if use[0] > typed_line]
    same_line = [use for use in case.uses if use[0] == typed_line and use != case.uses[case.typed]]
    if same_line:
        return tuple(same_line)
    above = [use for use in case.uses if use[0] < typed_line]
    if not below and not above:
        return ()
    line = below[0][0] if below else above[-1][0]
    return tuple(use for use in case.uses if use[0] == line)


def _keystrokes(case: RenameCase, line: int, start: int, end: int, typing: str) -> list[ContentChange]:
    """The ``didChange`` of each keystroke that turns the name at (``line``, ``start``–``end``,
    UTF-16) into the new name, as ``typing`` says (TYPING_STYLES)."""
    def at(a: int, b: int, text: str) -> ContentChange:
        return ContentChange(range=LspRange(start=LspPosition(line=line, character=a),
                                            end=LspPosition(line=line, character=b)), text=text)

    changes: list[ContentChange] = []
    typed = case.new_name
    if typing == "append" and case.new_name.startswith(case.name):
        typed, start = case.new_name[len(case.name):], end  # the cursor at the name's end
    elif typing == "retype":
        for back in range(end, start, -1):  # backspace over the old name, then type
            changes.append(at(back - 1, back, ""))
        end = start
    elif typing != "select" and typing != "append":
        raise ValueError(f"unknown typing style {typing!r}; one of {', '.join(TYPING_STYLES)}")
    for character in typed:
        changes.append(at(start, end, character))  # the first keystroke replaces a selection
        start = end = start + _utf16(character, 1)
    return changes


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


async def _run(cases: list[RenameCase], command: list[str], threshold: float,
               typing: str = "select") -> list[RenameOutcome]:
    outcomes = []
    async with LspClient(command, timeout=120) as client:
        await client.initialize({"nextEditConfidenceThreshold": threshold, "requestTimeoutMs": 30_000})
        await client.initialized()
        for n, case in enumerate(cases):
            outcomes.append(await _case(client, f"file:///bench/rename/{n}/{case.path.name}", case, typing))
    return outcomes


def run_rename_bench(folder: Path, limit: int, command: list[str], threshold: float = 0.5,
                     seed: int = 0, anywhere: bool = False, members: bool = False,
                     typing: str = "select") -> RenameReport:
    paths = sorted(p for p in folder.rglob("*.py") if p.is_file())
    cases, parsed = rename_cases(paths, limit, seed, anywhere, members, appended=typing == "append")
    # JavaScript and TypeScript: their own draw, so that Python's stays as it was.
    scripts = sorted(p for p in folder.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file()
                     and "node_modules" not in p.parts)
    drawn, read = draw(scripts, random.Random(seed), typing == "append", anywhere,
                       member_cases if members else tree_cases)
    if drawn:
        rng = random.Random(seed)
        rng.shuffle(drawn)
        cases = [*cases, *(RenameCase(d.path, d.text, d.name, d.uses, d.new_name, d.typed, d.kind, d.language)
                           for d in drawn[:limit])]
        rng.shuffle(cases)
        cases, parsed = cases[:limit], parsed + read
    return RenameReport(parsed, asyncio.run(_run(cases, command, threshold, typing)), anywhere, members, typing)


def format_rename(report: RenameReport, threshold: float) -> str:
    outcomes = report.outcomes
    n = len(outcomes)
    shown = [o for o in outcomes if o.shown]
    right = sum(o.right for o in shown)
    latencies = [o.latency_ms for o in outcomes]
    typing = "" if report.typing == "select" else f", typed as {report.typing}"
    rows = [f"{n} {'member ' if report.members else ''}renames in {report.files} files, "
            f"threshold {threshold:g}"
            f"{', typed at a use drawn at random' if report.anywhere else ''}{typing}",
            f"shown {share(len(shown), n)}   right among shown {share(right, len(shown))}   "
            f"right overall {share(right, n)}   "
            f"next use's line exactly {share(sum(o.next_line for o in outcomes), n)}",
            "accepting proposal after proposal: "
            + "   ".join(f"{ending} {share(sum(o.chain == ending for o in outcomes), n)}"
                         for ending in (CHAIN_DONE, CHAIN_STOPPED, CHAIN_WRONG)),
            f"latency p50 {percentile(latencies, 50):.0f} ms  p95 {percentile(latencies, 95):.0f} ms"]
    languages = sorted({o.language for o in outcomes})
    if len(languages) > 1:
        rows.append(f"{'language':<30}{_COLUMNS}")
        rows += [_row(language, [o for o in outcomes if o.language == language]) for language in languages]
    kinds = sorted({(o.language, o.kind) for o in outcomes})
    if len(kinds) > 1:
        rows.append(f"{'bound by':<30}{_COLUMNS}")
        rows += [_row(kind if len(languages) == 1 else f"{language}: {kind}",
                      [o for o in outcomes if (o.language, o.kind) == (language, kind)]) for language, kind in kinds]
    return "\n".join(rows)


_COLUMNS = f"{'cases':>6}{'shown':>8}{'right':>8}{'next line':>11}{'every use':>11}{'p50 ms':>8}"


def _row(label: str, of_kind: list[RenameOutcome]) -> str:
    n = len(of_kind)
    return (f"{label:<30}{n:>6}{share(sum(o.shown for o in of_kind), n):>8}"
            f"{share(sum(o.right for o in of_kind), n):>8}{share(sum(o.next_line for o in of_kind), n):>11}"
            f"{share(sum(o.chain == CHAIN_DONE for o in of_kind), n):>11}"
            f"{percentile([o.latency_ms for o in of_kind], 50):>8.0f}")


def share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "–"
