"""The references of the binding an identifier resolves to, in JavaScript and TypeScript,
read off a tree-sitter tree: what a rename at one use reaches.

A binding is what a declaration makes: a ``let``/``const``/``var`` declarator (a
destructuring pattern's names too), a function's, arrow's or method's parameter, a
function or class declaration's name, a ``catch`` parameter, a ``for … of``/``in``
binding, an import specifier, a TypeScript interface, type alias, enum or type parameter.
It lives in a scope: the block around a ``let``, ``const`` or class, the function around a
``var`` or a parameter, the file for an import. A name refers to the binding of the
innermost scope around it that declares it (an inner declaration shadows an outer one);
one no scope declares is a global. Property names (``obj.name``, ``{ name: value }``'s
key, a method's name), strings, comments and a template literal's text are no names here
(what stands in its ``${…}`` is); a shorthand ``{ name }`` is the variable.

Values and types share one namespace here (a TypeScript class is both), which is all a
rename needs. Declarations are not ordered: ``let`` in a block is the block's from its
first line, as the language has it (its temporal dead zone aside).

A file is parsed whole, so that a name is judged by every scope around it; a half-typed
file still has its sound parts read (tree-sitter recovers around what it cannot read).
Beyond ``MAX_BYTES`` nothing is read.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from model.languages import language_for
from model.languages.tree_sitter_statement import Grammar

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["BLOCK_SCOPES", "FUNCTION_SCOPES", "MAX_BYTES", "NAME_NODES", "Binding", "Scopes", "read_scopes",
           "scoped_by_tree"]

# Parsing takes ~0.1 s a MB; a request may spend a few hundredths of one.
MAX_BYTES = 400_000

# What can stand as a name: a use, or a declaration's own name.
NAME_NODES = frozenset({"identifier", "type_identifier", "shorthand_property_identifier",
                    "shorthand_property_identifier_pattern"})
# Scopes that a `var` and a parameter belong to.
FUNCTION_SCOPES = frozenset({"program", "function_declaration", "generator_function_declaration", "function_expression",
                        "function", "generator_function", "arrow_function", "method_definition",
                        "class_static_block"})
# Scopes that a `let`, a `const` and a class belong to.
BLOCK_SCOPES = FUNCTION_SCOPES | {"statement_block", "for_statement", "for_in_statement", "catch_clause", "switch_body",
                        "class_body"}
# A class member's name where it is defined or used through `this`.
_MEMBER_NAMES = frozenset({"property_identifier", "private_property_identifier"})
_MEMBER_DEFINITIONS = frozenset({"method_definition", "field_definition", "public_field_definition",
                                 "method_signature", "abstract_method_signature"})
# What makes a constructor's parameter a member too (TypeScript's parameter properties).
_PROPERTY_MODIFIERS = frozenset({"accessibility_modifier", "readonly", "override_modifier"})
# What gives `this` its meaning: a method (the class's, or an object literal's), a
# `function`, or a class body (a field's initializer); an arrow keeps the one around it.
_THIS_SCOPES = frozenset({"method_definition", "function_expression", "function_declaration", "function",
                          "generator_function", "generator_function_declaration", "class_body"})
# Declarations whose `name` belongs to the block around them.
_DECLARED_AROUND = frozenset({"function_declaration", "generator_function_declaration", "class_declaration",
                              "abstract_class_declaration", "interface_declaration", "type_alias_declaration",
                              "enum_declaration", "internal_module", "module"})
# Expressions whose `name` is theirs alone (`function G() { G() }`).
_NAMED_WITHIN = frozenset({"function_expression", "function", "generator_function", "class"})
# Where a pattern holds a name it binds: (pattern, the field it stands in, or "" for any child).
_PATTERN_FIELDS = {"object_pattern": "", "array_pattern": "", "rest_pattern": "", "pair_pattern": "value",
                   "assignment_pattern": "left", "object_assignment_pattern": "left",
                   "required_parameter": "pattern", "optional_parameter": "pattern"}


@dataclass(frozen=True)
class Binding:
    """The binding one name resolves to, and every name in the file that resolves to it."""

    references: tuple[tuple[int, int], ...]  # (row, str column) of each, in the file's order
    declared_at: tuple[int, int] | None  # its first declaration; None for a global
    scope_rows: range | None  # the rows of the scope it lives in; None for a global


def scoped_by_tree(path: str) -> bool:
    """The file's language has its scopes read here."""
    language = language_for(path)
    return language is not None and language.grammar is not None and language.family == "javascript"


def read_scopes(lines: Sequence[str], path: str) -> Scopes | None:
    """The document ``lines`` (with their endings) read for its scopes; None when its
    language is not read through a tree here or it is longer than ``MAX_BYTES``."""
    language = language_for(path)
    grammar = None if language is None or language.family != "javascript" else language.grammar
    if grammar is None or sum(len(line) for line in lines) > MAX_BYTES:
        return None
    scopes = Scopes(grammar, lines)
    return None if len(scopes.source) > MAX_BYTES else scopes


class Scopes:
    """One document parsed, asked what names at given places refer to."""

    def __init__(self, grammar: Grammar, lines: Sequence[str]) -> None:
        self.lines = list(lines)
        encoded = [line.encode("utf-8") for line in self.lines]
        self.starts = [0]
        for line in encoded:
            self.starts.append(self.starts[-1] + len(line))
        self.source = b"".join(encoded)
        self.root = grammar.parser().parse(self.source).root_node

    def binding(self, row: int, column: int, names: Collection[str]) -> Binding | None:
        """The binding the name at (``row``, str ``column``) refers to, ``names`` read as one
        name (a rename half made: some places have the old name, some the new); None when no
        name of ``names`` stands there as a name (a property's, a string's word)."""
        at = self._offset(row, column)
        found = [node for name in frozenset(names) for node in self._occurrences(name)]
        target = next((node for node in found if node.start_byte == at), None)
        if target is None:
            return None
        declared = _declarations(found)
        home = _resolved(target, declared)
        references = tuple(self._place(node.start_byte) for node in sorted(
            (node for node in found if _same(_resolved(node, declared), home)), key=lambda node: node.start_byte))
        if home is None:
            return Binding(references, None, None)
        return Binding(references, self._place(declared[home.id][1]), range(home.start_point[0], home.end_point[0] + 1))

    def member(self, row: int, column: int, names: Collection[str]) -> Binding | None:
        """The member of a class that the name at (``row``, str ``column``) is, when it is one
        the class itself names: ``this.name`` inside the class, or its method's or field's
        own name; its places in the class (``members``), ``names`` read as one. None for any
        other property (``other.name``: whose it is no tree tells)."""
        at = self._offset(row, column)
        target = self.root.descendant_for_byte_range(at, at + 1)
        if target is None or target.type not in _MEMBER_NAMES or target.start_byte != at \
                or not _names_a_member(target):
            return None
        body = _around(target, frozenset({"class_body"}))
        if body is None or not _of_the_class(target, body):
            return None
        return self.members(body, names)

    def members(self, body: Node, names: Collection[str]) -> Binding:
        """Every place the class of ``body`` names its member ``names`` as one: ``this.name``
        outside a nested class, the method's or field's definition, and a constructor's
        parameter property (TypeScript's ``constructor(private name)``) with its uses there."""
        wanted = {name.encode("utf-8") for name in names}
        found, parameters = [], []
        stack = [body]
        while stack:
            node = stack.pop()
            if node.type in _MEMBER_NAMES and node.text in wanted and _names_a_member(node) \
                    and _of_the_class(node, body):
                found.append(node)
            elif node.type == "identifier" and node.text in wanted and _parameter_property(node) == body:
                parameters.append(node)
            stack.extend(node.children)
        defined = [node for node in found if node.parent is not None and node.parent.type in _MEMBER_DEFINITIONS]
        places = {self._place(node.start_byte) for node in found}
        for parameter in parameters:  # the parameter's own uses in the constructor are the member too
            uses = self.binding(*self._place(parameter.start_byte), names)
            places.update(uses.references if uses is not None else [self._place(parameter.start_byte)])
        references = tuple(sorted(places))
        # A member lives in its class, however it came to be (a field, a method, a parameter
        # property, or only `this.name = …` in a method): its first place stands for its
        # declaration.
        declarations = sorted([*defined, *parameters], key=lambda node: node.start_byte)
        declared_at = self._place(declarations[0].start_byte) if declarations else references[0]
        return Binding(references, declared_at, range(body.start_point[0], body.end_point[0] + 1))

    def parameter_property_class(self, binding: Binding) -> Node | None:
        """The class body whose constructor declares ``binding`` as a parameter property."""
        if binding.declared_at is None:
            return None
        at = self._offset(*binding.declared_at)
        declaration = self.root.descendant_for_byte_range(at, at + 1)
        return None if declaration is None else _parameter_property(declaration)

    def declaration_of(self, row: int, column: int, name: str) -> tuple[int, int] | None:
        """Where ``name`` would be declared, written in place of the name at (``row``, str
        ``column``): the first declaration of the scope it would refer to; None for a
        global, or when no name stands there."""
        at = self._offset(row, column)
        target = self.root.descendant_for_byte_range(at, at + 1)
        if target is None or target.type not in NAME_NODES or target.start_byte != at:
            return None
        declared = _declarations(self._occurrences(name))
        home = _resolved(target, declared)
        return None if home is None or home.id not in declared else self._place(declared[home.id][1])

    def _offset(self, row: int, column: int) -> int:
        if not 0 <= row < len(self.lines):
            return -1
        return self.starts[row] + len(self.lines[row][:column].encode("utf-8"))

    def _occurrences(self, name: str) -> list[Node]:
        """The nodes where ``name`` stands as a name."""
        found = []
        for match in re.finditer(rb"(?<![\w$])" + re.escape(name.encode("utf-8")) + rb"(?![\w$])", self.source):
            node = self.root.descendant_for_byte_range(match.start(), match.end())
            if node is not None and node.type in NAME_NODES and node.start_byte == match.start() \
                    and node.end_byte == match.end() and _is_a_name(node):
                found.append(node)
        return found

    def _place(self, offset: int) -> tuple[int, int]:
        row = bisect.bisect_right(self.starts, offset) - 1
        column = len(self.source[self.starts[row]:offset].decode("utf-8", errors="ignore"))
        return row, column


def _names_a_member(node: Node) -> bool:
    """``node`` (a property's name) is ``this.name`` or the name a method or field definition
    gives."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "member_expression":
        subject = parent.child_by_field_name("object")
        return _field(parent, "property", node) and subject is not None and subject.type == "this"
    return parent.type in _MEMBER_DEFINITIONS and _field(parent, "name" if parent.type != "field_definition"
                                                         else "property", node)


def _parameter_property(node: Node) -> Node | None:
    """The class body whose constructor declares ``node`` as a parameter property (one with
    ``private``, ``public``, ``protected``, ``readonly`` or ``override``): TypeScript makes
    it a member of the instance too. None for any other node."""
    parameter = node.parent
    if parameter is None or parameter.type not in ("required_parameter", "optional_parameter") \
            or not _field(parameter, "pattern", node) or node.type != "identifier" \
            or not any(child.type in _PROPERTY_MODIFIERS for child in parameter.children):
        return None
    constructor = parameter.parent.parent if parameter.parent is not None else None
    if constructor is None or constructor.type != "method_definition":
        return None
    name = constructor.child_by_field_name("name")
    body = constructor.parent
    if name is None or name.text != b"constructor" or body is None or body.type != "class_body":
        return None
    return body


def _of_the_class(node: Node, body: Node) -> bool:
    """A member name (``_names_a_member``) that is the class's of ``body``: a definition
    standing in the body itself (not an object literal's method or a type's inside it), or
    ``this.name`` whose ``this`` is the instance: in the class's own method or a field's
    initializer, through arrows, not in a ``function`` or an object literal's method, whose
    ``this`` is another object, nor in a nested class."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type != "member_expression":
        return parent.parent is not None and parent.parent == body
    scope = parent.parent
    while scope is not None and scope.type not in _THIS_SCOPES:
        scope = scope.parent
    if scope is None:
        return False
    if scope.type == "class_body":
        return scope == body
    return scope.type == "method_definition" and scope.parent is not None and scope.parent == body


def _declarations(names: list[Node]) -> dict[int, tuple[Node, int]]:
    """Each scope that one of ``names`` declares a binding of: scope id → (scope, start of
    its first declaration)."""
    declared: dict[int, tuple[Node, int]] = {}
    for node in names:
        scope = _declared_in(node)
        if scope is not None and (scope.id not in declared or node.start_byte < declared[scope.id][1]):
            declared[scope.id] = (scope, node.start_byte)
    return declared


def _same(a: Node | None, b: Node | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and a.id == b.id)


def _field(parent: Node, name: str, child: Node) -> bool:
    """``child`` stands in ``parent``'s field ``name``."""
    held = parent.child_by_field_name(name)
    return held is not None and held.id == child.id


def _is_a_name(node: Node) -> bool:
    """Not a name that only looks like one: an import's exported name that an alias
    renames, an export's alias, a namespace's member type, a JSX intrinsic tag (``div``)."""
    parent = node.parent
    if parent is None:
        return True
    if parent.type == "import_specifier" and parent.child_by_field_name("alias") is not None:
        return _field(parent, "alias", node)
    if parent.type == "export_specifier":
        statement = parent.parent.parent if parent.parent is not None else None
        if statement is not None and statement.child_by_field_name("source") is not None:
            return False  # `export { a } from "m"` re-exports another module's name
        return _field(parent, "name", node)
    if parent.type == "nested_type_identifier":
        return not _field(parent, "name", node)
    if parent.type.startswith("jsx_") and parent.type.endswith("element") and node.text is not None:
        return not node.text[:1].islower()
    return True


def _around(node: Node, kinds: frozenset[str]) -> Node | None:
    """The nearest node above ``node`` of one of ``kinds``."""
    above = node.parent
    while above is not None and above.type not in kinds:
        above = above.parent
    return above


def _declared_in(node: Node) -> Node | None:
    """The scope whose binding the name ``node`` declares; None when it declares none
    (a use)."""
    child, parent = node, node.parent
    while parent is not None and parent.type in _PATTERN_FIELDS:
        wanted = _PATTERN_FIELDS[parent.type]
        if wanted and not _field(parent, wanted, child):
            return None  # a default value, a pattern's key: a use
        child, parent = parent, parent.parent
    if parent is None:
        return None
    kind = parent.type
    if kind == "variable_declarator":
        declaration = parent.parent
        if not _field(parent, "name", child) or declaration is None:
            return None
        return _around(declaration, FUNCTION_SCOPES if declaration.type == "variable_declaration" else BLOCK_SCOPES)
    if kind == "formal_parameters":
        return parent.parent
    if kind in ("arrow_function", "catch_clause") and _field(parent, "parameter", child):
        return parent
    if kind == "for_in_statement" and _field(parent, "left", child):
        declared = parent.child_by_field_name("kind")
        if declared is None:
            return None  # `for (x of xs)` assigns an existing name
        return _around(parent, FUNCTION_SCOPES) if declared.type == "var" else parent
    if child is node and _field(parent, "name", node):
        if kind in _DECLARED_AROUND:
            return _around(parent, BLOCK_SCOPES)
        if kind in _NAMED_WITHIN:
            return parent
        if kind == "type_parameter":
            owner = parent.parent
            return owner.parent if owner is not None else None
    if kind in ("import_specifier", "import_clause", "namespace_import"):
        return _around(parent, frozenset({"program"}))
    return None


def _resolved(node: Node, declared: dict[int, tuple[Node, int]]) -> Node | None:
    """The scope whose binding ``node`` refers to: the innermost around it that declares
    the name; None for a global."""
    own = _declared_in(node)
    if own is not None:
        return own
    above = node.parent
    while above is not None:
        if above.id in declared:
            return above
        above = above.parent
    return None
