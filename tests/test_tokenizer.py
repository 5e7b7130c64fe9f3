import random
from pathlib import Path

import model.formats
from model.model_folder import SHIPPED_DIR
from model.tokenizer import CodeTokenizer, _lines_cut

TOKENIZER = CodeTokenizer.load(SHIPPED_DIR / "tokenizer.json")
# Odd line ends, trailing blanks, non-ASCII before a break, tabs and a literal special token.
AWKWARD = "x = 1  \n\n\ty = 'é'\r\n  z = \"<|pad|>\"\r\r\n# ü\n\u2003\nend\n    "


def test_tokens_reused_across_cuts_are_the_tokens_of_the_whole_text() -> None:
    text = Path(model.formats.__file__).read_text() + AWKWARD
    rng = random.Random(0)
    for end in [*rng.sample(range(len(text)), 300), *range(len(text) - len(AWKWARD), len(text) + 1)]:
        # Twice: the second time the lines before the cut come from the reused tokens.
        for _ in range(2):
            assert TOKENIZER.encode_each([text[:end]]) == [TOKENIZER.encode(text[:end])], repr(text[end - 40:end])


def test_typing_a_line_reuses_the_lines_above_it() -> None:
    text = Path(model.formats.__file__).read_text()
    line_start = text.index("\n", len(text) // 2) + 1
    calls: list[str] = []
    encode = TOKENIZER.encode
    TOKENIZER.encode = lambda piece: calls.append(piece) or encode(piece)  # type: ignore[method-assign]
    try:
        for end in range(line_start + 5, line_start + 25):
            assert TOKENIZER.encode_each([text[:end]]) == [encode(text[:end])]
    finally:
        del TOKENIZER.encode
    # The lines above were tokenized once; every keystroke after that, only the typed line.
    assert sum(len(piece) > 1000 for piece in calls) == 1
    assert all(len(piece) <= 25 for piece in calls[2:])


def test_the_cut_is_a_line_break_after_a_visible_ascii_character() -> None:
    assert _lines_cut("a\nb") == 1
    assert _lines_cut("a\n  \n  b") == 1
    assert _lines_cut("é\nb") == -1
    assert _lines_cut("no break") == -1
    assert _lines_cut("\nb") == -1
