"""The lines of a TypeScript file that hold a type, read with tree-sitter: an interface's
members, a type alias, a union's members, an annotation. ``bench repeated`` leaves them
out: ``id?: string`` is no value to wrap, and ``| number`` no line to append to."""

from __future__ import annotations

from benchmarks.code_tokens import Source

# The tree's parser for a language is the rename bench's (`rename_trees`), read once per language.
from benchmarks.rename_trees import SUFFIXES, _parser

TYPE_NODES = frozenset({"interface_body", "object_type", "type_annotation", "type_alias_declaration", "union_type",
                        "intersection_type", "enum_body", "type_arguments", "type_parameters"})
_TYPED_LANGUAGES = ("typescript", "tsx")


def type_rows(source: Source) -> set[int]:
    """Rows a type node reaches (tree-sitter counts rows by ``\\n`` as LSP does, but for a
    lone ``\\r``); none in a file without types."""
    language = SUFFIXES.get(source.path.suffix.lower())
    if language is None or language not in _TYPED_LANGUAGES:
        return set()
    rows: set[int] = set()
    stack = [_parser(language).parse(source.text.encode("utf-8")).root_node]
    while stack:
        node = stack.pop()
        if node.type in TYPE_NODES:
            rows.update(range(node.start_point.row, node.end_point.row + 1))
        else:
            stack.extend(node.named_children)
    return rows
