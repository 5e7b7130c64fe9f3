"""Typing modernisation: aliases dropped from a ``typing`` import written as builtins below."""

from model.next_edit.edit_patterns import Change, pattern_edits
from tests.test_edit_patterns import lines_of

TYPED = '''from typing import Dict, List, Optional


def load(path: str) -> Dict[str, List[int]]:
    """Returns Dict[str, List[int]]."""
    cache: Optional[Dict[str, int]] = None  # a List[int] per key
    return read(path)


def save(data: Dict[str, List[int]], where: Optional["Path"]) -> None:
    pass
'''


def test_typing_aliases_dropped_from_the_import_are_written_as_builtins_below() -> None:
    from model.next_edit.edit_patterns import BUILTIN_GENERIC

    lines = lines_of(TYPED.replace("from typing import Dict, List, Optional", "from typing import Optional"))
    change = Change(0, "from typing import Dict, List, Optional\n", "from typing import Optional\n")
    edits = pattern_edits(lines, change, "m.py")
    # Strings and comments keep their words; `Optional` is still imported, so it stays.
    assert [(e.new_text.strip(), e.kind) for e in edits] == [
        ("def load(path: str) -> dict[str, list[int]]:", BUILTIN_GENERIC),
        ("cache: Optional[dict[str, int]] = None  # a List[int] per key", BUILTIN_GENERIC),
        ('def save(data: dict[str, list[int]], where: Optional["Path"]) -> None:', BUILTIN_GENERIC)]
    assert pattern_edits(lines, change, "m.js") == []  # Python's typing only


def test_optional_written_as_a_union_with_none_brings_the_builtins_too() -> None:
    lines = lines_of(TYPED.replace("cache: Optional[Dict[str, int]]", "cache: dict[str, int] | None"))
    change = Change(5, "    cache: Optional[Dict[str, int]] = None  # a List[int] per key\n",
                    "    cache: dict[str, int] | None = None  # a List[int] per key\n")
    edits = pattern_edits(lines, change, "m.py")
    # A string forward reference stays in `Optional[...]`: `"Path" | None` fails at runtime.
    assert [e.new_text.strip() for e in edits] == [
        "def load(path: str) -> dict[str, list[int]]:",
        'def save(data: dict[str, list[int]], where: Optional["Path"]) -> None:']


def test_unions_nest_and_a_plain_edit_is_no_modernisation() -> None:
    from model.next_edit.edit_patterns.builtin_generics import _modernised

    names = {"Optional", "Union", "List", "Tuple"}
    assert _modernised("x: Optional[Union[int, List[Tuple[int, str]]]] = None", names) == \
        "x: int | list[tuple[int, str]] | None = None"
    assert _modernised("y: t.Optional[Callable[..., int]]", names) == "y: Callable[..., int] | None"
    text = "from typing import List\nx: List[int] = []\ny: List[int] = [1]\n"
    assert pattern_edits(lines_of(text), Change(1, "x: List[int] = [0]\n", "x: List[int] = []\n"), "m.py") == []
