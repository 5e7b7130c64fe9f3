"""The rename bench's cases in JavaScript and TypeScript, drawn with tree-sitter as
``benchmarks/rename.py`` draws Python's with ``ast``.

A case is a binding (``let``/``const``, ``var``, a parameter, a function declaration's
name, a destructured name, a ``for … of``/``in`` binding, a ``catch`` parameter, an
import) and every name in its scope that is spelled like it. Only bindings whose scope
declares the name nowhere else, nested scopes included, are drawn: then every such name
in the scope is surely theirs, without resolving a single one (the rule the engine
follows is not used to judge it). Property names (``obj.name``, ``{ name: 1 }``), strings
and comments are no names to tree-sitter; a shorthand ``{ name }`` is a use. Files that
do not parse cleanly are left out.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

# The grammar's node kinds are facts both read; how a name is resolved is the bench's own.
from model.languages.js_scopes import BLOCK_SCOPES, FUNCTION_SCOPES, NAME_NODES

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

SUFFIXES = {".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
            ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx"}
LET_CONST, VAR, PARAMETER, FUNCTION_NAME, DESTRUCTURED, FOR_OF, CATCH, IMPORT = (
    "let/const", "var", "parameter", "function name", "destructured", "for-of/in binding", "catch parameter",
    "import")
MAX_FILE_BYTES = 400_000  # the engine reads no longer file
# Pattern nodes and the children of theirs that bind (None: any child).
_BINDING_CHILDREN = {"object_pattern": None, "array_pattern": None, "rest_pattern": None, "pair_pattern": "value",
                     "assignment_pattern": "left", "object_assignment_pattern": "left",
                     "required_parameter": "pattern", "optional_parameter": "pattern"}


@dataclass(frozen=True)
class TreeBinding:
    name: str
    kind: str
    scope: Node
    at: int  # start byte of the declaring name


def _parser(language: str) -> Parser:
    from tree_sitter import Language, Parser

    if language == "javascript":
        import tree_sitter_javascript

        return Parser(Language(tree_sitter_javascript.language()))
    import tree_sitter_typescript

    grammar = tree_sitter_typescript.language_tsx() if language == "tsx" else \
        tree_sitter_typescript.language_typescript()
    return Parser(Language(grammar))


def _enclosing(node: Node, kinds: frozenset[str]) -> Node | None:
    above = node.parent
    while above is not None and above.type not in kinds:
        above = above.parent
    return above


def _pattern_names(node: Node) -> Iterator[Node]:
    """The names a binding pattern binds (not its defaults, not its keys)."""
    if node.type in ("identifier", "shorthand_property_identifier_pattern"):
        yield node
        return
    if node.type not in _BINDING_CHILDREN:
        return
    field = _BINDING_CHILDREN[node.type]
    children = node.named_children if field is None else [c for c in [node.child_by_field_name(field)] if c]
    for child in children:
        yield from _pattern_names(child)


def _bindings(root: Node) -> Iterator[tuple[Node, str, Node]]:
    """(declaring name, kind, scope) of every binding in the tree."""
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        kind = node.type
        if kind == "variable_declarator" and (pattern := node.child_by_field_name("name")) is not None:
            declaration = node.parent
            if declaration is None:
                continue
            is_var = declaration.type == "variable_declaration"
            scope = _enclosing(declaration, FUNCTION_SCOPES if is_var else BLOCK_SCOPES)
            simple = pattern.type == "identifier"
            for name in _pattern_names(pattern):
                if scope is not None:
                    yield name, (VAR if is_var else LET_CONST) if simple else DESTRUCTURED, scope
        elif kind == "formal_parameters" and node.parent is not None \
                and node.parent.child_by_field_name("body") is not None:
            for parameter in node.named_children:
                for name in _pattern_names(parameter):
                    yield name, PARAMETER, node.parent
        elif kind == "arrow_function" and (single := node.child_by_field_name("parameter")) is not None:
            yield single, PARAMETER, node
        elif kind in ("function_declaration", "generator_function_declaration") \
                and (declared_name := node.child_by_field_name("name")) is not None:
            if (around := _enclosing(node, BLOCK_SCOPES)) is not None:
                yield declared_name, FUNCTION_NAME, around
        elif kind == "catch_clause" and (caught := node.child_by_field_name("parameter")) is not None:
            for name in _pattern_names(caught):
                yield name, CATCH, node
        elif kind == "for_in_statement" and (declared := node.child_by_field_name("kind")) is not None \
                and (left := node.child_by_field_name("left")) is not None:
            scope = _enclosing(node, FUNCTION_SCOPES) if declared.type == "var" else node
            for name in _pattern_names(left):
                if scope is not None:
                    yield name, FOR_OF, scope
        elif kind in ("import_specifier", "import_clause", "namespace_import"):
            alias = node.child_by_field_name("alias") if kind == "import_specifier" else None
            named = [alias] if alias is not None else [c for c in node.named_children if c.type == "identifier"]
            for name in named:
                yield name, IMPORT, root


def _is_use(node: Node) -> bool:
    """A name node that names a variable: not an import's exported name under an alias, an
    export's alias, a namespace's member type or a JSX intrinsic tag."""
    parent = node.parent
    if parent is None:
        return True
    alias = parent.child_by_field_name("alias") if parent.type in ("import_specifier", "export_specifier") else None
    if alias is not None and parent.type == "import_specifier":
        return alias.id == node.id
    if parent.type == "export_specifier":
        return alias is None or alias.id != node.id
    if parent.type == "nested_type_identifier":
        held = parent.child_by_field_name("name")
        return held is None or held.id != node.id
    return not (parent.type.startswith("jsx_") and (node.text or b"")[:1].islower())


def _names_in(scope: Node, name: bytes) -> list[Node]:
    found, stack = [], [scope]
    while stack:
        node = stack.pop()
        if node.type in NAME_NODES and node.text == name and _is_use(node):
            found.append(node)
        stack.extend(node.children)
    return sorted(found, key=lambda n: n.start_byte)


def clean_tree(path: Path, text: str, parsers: dict[str, Parser]) -> Node | None:
    """The file's tree; None when the file is not JavaScript or TypeScript, is longer than
    the engine reads, or does not parse cleanly."""
    language = SUFFIXES.get(path.suffix.lower())
    if language is None:
        return None
    source = text.encode("utf-8")
    if len(source) > MAX_FILE_BYTES:
        return None
    parser = parsers.setdefault(language, _parser(language))
    root = parser.parse(source).root_node
    return None if root.has_error else root


def tree_cases(path: Path, text: str, parsers: dict[str, Parser]) -> list[tuple[str, str, list[int]]] | None:
    """(name, kind, start bytes of its uses) of each binding of the file drawn as a case;
    None when the file is not JavaScript or TypeScript or does not parse cleanly."""
    root = clean_tree(path, text, parsers)
    if root is None:
        return None
    bindings = list(_bindings(root))
    declared: dict[bytes, list[tuple[Node, Node]]] = {}
    for name, _, scope in bindings:
        declared.setdefault(name.text or b"", []).append((name, scope))
    cases = []
    for name, kind, scope in bindings:
        spelled = name.text or b""
        inside = [other for other, _ in declared[spelled]
                  if other.id != name.id and scope.start_byte <= other.start_byte < scope.end_byte]
        if inside or len(spelled) < 1:
            continue
        uses = _names_in(scope, spelled)
        if len(uses) >= 2 and any(use.id == name.id for use in uses):
            cases.append((spelled.decode("utf-8"), kind, [use.start_byte for use in uses]))
    return cases


# (name, kind, start bytes of its places) of each case in a file; None: the file is not read.
CaseFinder = Callable[[Path, str, "dict[str, Parser]"], "list[tuple[str, str, list[int]]] | None"]


class DrawnCase(NamedTuple):
    path: Path
    language: str
    text: str
    name: str
    uses: tuple[tuple[int, int], ...]  # (line, str offset)
    new_name: str
    typed: int
    kind: str


def draw(paths: list[Path], rng: random.Random, appended: bool, anywhere: bool,
         cases_of: CaseFinder = tree_cases) -> tuple[list[DrawnCase], int]:
    """Every case ``cases_of`` finds in ``paths`` (bindings unless told), and how many files
    were read."""
    parsers: dict[str, Parser] = {}
    found: list[DrawnCase] = []
    read = 0
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        cases = cases_of(path, text, parsers)
        if cases is None:
            continue
        read += 1
        lines = text.splitlines(keepends=True)
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line.encode("utf-8")))
        for name, kind, offsets in cases:
            uses = tuple(_place(lines, starts, offset) for offset in offsets)
            if any(lines[row][column:column + len(name)] != name for row, column in uses):
                continue  # a line break the editor counts and str.splitlines does not
            new_name = f"renamed_{name}" if rng.random() < 0.5 and not appended else f"{name}_renamed"
            typed = rng.randrange(len(uses)) if anywhere else 0
            found.append(DrawnCase(path, SUFFIXES[path.suffix.lower()], text, name, uses, new_name, typed, kind))
    return found, read


def _place(lines: list[str], starts: list[int], offset: int) -> tuple[int, int]:
    row = bisect.bisect_right(starts, offset) - 1
    return row, len(lines[row].encode("utf-8")[: offset - starts[row]].decode("utf-8", errors="ignore"))
