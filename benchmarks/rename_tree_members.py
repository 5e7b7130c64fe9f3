"""The rename bench's JavaScript and TypeScript member cases (``--members``), drawn with
tree-sitter as ``benchmarks/rename.py`` draws Python's with ``ast``.

A case is a name that one class body names as a member of its own: ``this.name`` where
``this`` is the instance (in the class's methods and fields' initializers, through arrow
functions; not in a ``function`` or an object literal's method, nor a nested class), or
the name of a method, field or overload signature defined directly in the body. Its places
are all of those, in document order: at least two, one of them a ``this.name``. Left out:
``#private`` names and ``constructor``; a name that two classes of the file name so (one
may inherit or override the other's, and then renaming it in one class is no whole
rename). A TypeScript parameter property (``constructor(private name)``) is a member too:
its places add the parameter and its uses in the constructor (a name the constructor also
declares again is left out, its scopes being more than this draws). Another object's
property (``other.name``) is no place of the member.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks.rename_trees import clean_tree

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

MEMBER = "member"  # the kind Python's members are reported under
# Definitions in a class body, and the field that holds the name each defines.
_DEFINITIONS = {"method_definition": "name", "method_signature": "name", "abstract_method_signature": "name",
                "public_field_definition": "name", "field_definition": "property"}
# Functions with a `this` of their own (an arrow has none).
_NOT_ARROWS = frozenset({"function_expression", "function", "function_declaration", "generator_function",
                         "generator_function_declaration"})
# What makes a constructor's parameter a property of the class too.
_PARAMETER_PROPERTY_MARKS = frozenset({"accessibility_modifier", "override_modifier", "readonly"})


def member_cases(path: Path, text: str, parsers: dict[str, Parser]) -> list[tuple[str, str, list[int]]] | None:
    """(name, ``member``, start bytes of its places) of each class member of the file drawn
    as a case; None when the file is not JavaScript or TypeScript or does not parse cleanly."""
    root = clean_tree(path, text, parsers)
    if root is None:
        return None
    classes = [(_places(body), _parameter_properties(body)) for body in _class_bodies(root)]
    named_by = Counter(name for places, parameters in classes for name in {*places, *parameters})
    cases = []
    for places, parameter_properties in classes:
        for name, (nodes, through_this) in places.items():
            if name in parameter_properties:
                uses = parameter_properties[name]
                if uses is None:
                    continue
                nodes = [*nodes, *uses]
            if named_by[name] > 1 or len(nodes) < 2 or not through_this:
                continue
            cases.append((name.decode("utf-8"), MEMBER, sorted(node.start_byte for node in nodes)))
    return cases


def _class_bodies(root: Node) -> Iterator[Node]:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "class_body":
            yield node
        stack.extend(node.children)


def _places(body: Node) -> dict[bytes, tuple[list[Node], bool]]:
    """Each member name ``body`` names: its places there, and whether one is ``this.name``."""
    places: dict[bytes, tuple[list[Node], bool]] = {}
    stack = list(body.children)
    while stack:
        node = stack.pop()
        if node.type == "class_body":
            continue  # a nested class: its `this` is another object
        stack.extend(node.children)
        if node.type != "property_identifier" or node.text in (None, b"constructor"):
            continue
        through_this = _is_this_member(node) and _this_is_the_instance(body, node)
        if through_this or _is_defined_in(body, node):
            nodes, seen_through_this = places.setdefault(node.text, ([], False))
            nodes.append(node)
            places[node.text] = (nodes, seen_through_this or through_this)
    return places


def _is_this_member(name: Node) -> bool:
    """``name`` is the property of ``this.name`` (``this?.name`` too)."""
    parent = name.parent
    if parent is None or parent.type != "member_expression":
        return False
    subject, held = parent.child_by_field_name("object"), parent.child_by_field_name("property")
    return subject is not None and subject.type == "this" and held is not None and held.id == name.id


def _this_is_the_instance(body: Node, name: Node) -> bool:
    """The ``this`` of ``this.name`` is an instance of the class of ``body``: the nearest
    function around it that is not an arrow is one of the class's own methods, or there is
    none before the class body (a field's initializer). A ``function``'s or an object
    literal's method's ``this`` is another object."""
    around = name.parent
    while around is not None and around.id != body.id:
        if around.type == "method_definition":
            return around.parent is not None and around.parent.id == body.id
        if around.type in _NOT_ARROWS:
            return False
        around = around.parent
    return around is not None


def _is_defined_in(body: Node, name: Node) -> bool:
    """``name`` is what a method, field or signature standing directly in ``body`` defines
    (not an object literal's method, not a member of a type written in the class)."""
    parent = name.parent
    if parent is None or parent.type not in _DEFINITIONS or parent.parent is None or parent.parent.id != body.id:
        return False
    held = parent.child_by_field_name(_DEFINITIONS[parent.type])
    return held is not None and held.id == name.id


def _parameter_properties(body: Node) -> dict[bytes, list[Node] | None]:
    """The names a TypeScript constructor in ``body`` declares as parameter properties, each
    with the parameter and the names standing for it in the constructor; None for one the
    constructor declares again."""
    found: dict[bytes, list[Node] | None] = {}
    for method in body.named_children:
        name = method.child_by_field_name("name") if method.type == "method_definition" else None
        parameters = method.child_by_field_name("parameters")
        if name is None or name.text != b"constructor" or parameters is None:
            continue
        for parameter in parameters.named_children:
            pattern = parameter.child_by_field_name("pattern")
            if pattern is not None and pattern.text and pattern.type == "identifier" and any(
                    child.type in _PARAMETER_PROPERTY_MARKS for child in parameter.children):
                found[pattern.text] = _uses_in_constructor(method, pattern)
    return found


def _uses_in_constructor(constructor: Node, parameter: Node) -> list[Node] | None:
    """``parameter`` and each bare name of its text in ``constructor``; None when the
    constructor declares that name again (a nested function's parameter, a `let`)."""
    nodes = []
    stack = [constructor]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type in ("identifier", "shorthand_property_identifier") and node.text == parameter.text:
            held_by = node.parent
            if node.id != parameter.id and held_by is not None and held_by.type in _REDECLARING:
                return None
            nodes.append(node)
    return nodes


# What declares a name again inside a constructor.
_REDECLARING = frozenset({"variable_declarator", "required_parameter", "optional_parameter", "formal_parameters",
                          "arrow_function", "function_declaration", "catch_clause", "class_declaration"})
