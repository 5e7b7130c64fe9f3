"""What the FIM code asks a language about one cursor: whether the code around it parses
with a candidate in place. Each language answers through its own parser
(``python_statement.py`` on Python's own, ``tree_sitter_statement.py`` on tree-sitter);
the calibrators read the answer as their ``parses`` feature (``fim/calibration.py``)."""

from __future__ import annotations

from typing import Protocol

UNKNOWN_PARSE = 0.5  # the parse feature when it tells nothing


class StatementCheck(Protocol):
    """The code around one cursor, found once and asked about every candidate."""

    def still_parses(self, middle: str) -> float:
        """1.0 or 0.0: whether the code parses with ``middle`` in place; UNKNOWN_PARSE
        unless it parsed without it."""
        ...

    def parses_with(self, middle: str) -> float:
        """1.0 or 0.0: whether the code parses with ``middle`` in place, whether or not it
        parsed without it (the cursor often stands in an unfinished line that a right
        middle finishes); UNKNOWN_PARSE when the parser can't tell."""
        ...

    def rules_out(self, middle: str) -> bool:
        """Whether the language's syntax surely rules ``middle`` out here: never shown."""
        ...
