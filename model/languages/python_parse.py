"""Whether a text with a candidate in place parses as Python, without a word in the log.

Candidates are often odd (`1if`), and Python's parser warns about them (SyntaxWarning,
"invalid decimal literal") on stderr, which is the editor's log. The parse names its source,
so that those warnings, and only those, can be dropped. Standard library only: the
``redraft`` command imports this at start, whatever it runs.
"""

from __future__ import annotations

import ast
import re
import warnings

CANDIDATE_SOURCE = "<redraft-candidate>"


def ignore_candidate_warnings() -> None:
    """Drop the parser's warnings about candidates, and only those (matched by source name).

    Process-wide, so the ``redraft`` command calls it once at start, beside logging's setup."""
    warnings.filterwarnings("ignore", category=SyntaxWarning, module=re.escape(CANDIDATE_SOURCE))


def parses(text: str) -> bool:
    try:
        ast.parse(text, filename=CANDIDATE_SOURCE)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
