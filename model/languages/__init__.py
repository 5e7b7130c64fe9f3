"""The languages Redraft serves, behind one small interface: what FIM and next-edit code
asks of a language goes through a ``Language``, never to a parser directly.

Python answers on its own parser (``python_statement.py``: ``ast`` reads Python exactly,
and its figures were measured on it); JavaScript and TypeScript on tree-sitter
(``tree_sitter_statement.py``). Adding a language is adding its grammar, its file
suffixes and editor language ids here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from model.languages.python_statement import CursorStatement
from model.languages.statement import UNKNOWN_PARSE, StatementCheck
from model.languages.tree_sitter_statement import Grammar, TreeSitterStatement

__all__ = ["JAVASCRIPT", "LANGUAGES", "PYTHON", "TSX", "TYPESCRIPT", "UNKNOWN_PARSE", "Language",
           "StatementCheck", "language_for", "language_named", "served_names"]


@dataclass(frozen=True)
class Language:
    name: str
    suffixes: tuple[str, ...]  # file names ending so are this language
    language_ids: tuple[str, ...]  # the editors' LSP language ids
    comment: str  # the line-comment marker
    family: str  # languages whose code reads alike share calibrated confidences (JavaScript and TypeScript)
    statement: Callable[[str, str], StatementCheck]  # the check of one cursor (prefix, suffix)
    grammar: Grammar | None = None  # its tree-sitter grammar, when it is read on tree-sitter

    @property
    def is_python(self) -> bool:
        return self.name == "python"


def _javascript_grammar() -> object:
    import tree_sitter_javascript

    return tree_sitter_javascript.language()


def _typescript_grammar() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_typescript()


def _tsx_grammar() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_tsx()


def _on_tree_sitter(name: str, suffixes: tuple[str, ...], language_ids: tuple[str, ...],
                    load: Callable[[], object]) -> Language:
    """A language of the JavaScript family, read on tree-sitter with the grammar ``load`` gives."""
    grammar = Grammar(load)
    return Language(name, suffixes, language_ids, "//", "javascript",
                    lambda prefix, suffix: TreeSitterStatement(grammar, prefix, suffix), grammar)


PYTHON = Language("python", (".py", ".pyi"), ("python",), "#", "python", CursorStatement)
# JavaScript's grammar reads JSX too.
JAVASCRIPT = _on_tree_sitter("javascript", (".js", ".mjs", ".cjs", ".jsx"), ("javascript", "javascriptreact"),
                             _javascript_grammar)
TYPESCRIPT = _on_tree_sitter("typescript", (".ts", ".mts", ".cts"), ("typescript",), _typescript_grammar)
TSX = _on_tree_sitter("tsx", (".tsx",), ("typescriptreact",), _tsx_grammar)
LANGUAGES = (PYTHON, JAVASCRIPT, TYPESCRIPT, TSX)


def language_for(path: str, language_id: str = "") -> Language | None:
    """The language of a document: the editor's language id decides when it gave one (a
    ``.py`` file the user set to plain text is not Python to them), else the file's name;
    None for a language Redraft does not serve."""
    if language_id:
        return next((language for language in LANGUAGES if language_id in language.language_ids), None)
    name = path.split("?", 1)[0].split("#", 1)[0].lower()
    return next((language for language in LANGUAGES if name.endswith(language.suffixes)), None)


def language_named(name: str) -> Language | None:
    """A language by its name here or an editor's language id, in any case (``TypeScript``,
    ``typescriptreact``); None for one Redraft does not serve."""
    wanted = name.lower()
    return next((language for language in LANGUAGES if wanted == language.name or wanted in language.language_ids),
                None)


def served_names() -> str:
    return ", ".join(language.name for language in LANGUAGES)
