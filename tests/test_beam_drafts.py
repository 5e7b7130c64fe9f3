"""Drafted tokens checked in the beam search's passes (``left_to_right.DRAFTED``): where the
likeliest beam goes on as another source put it, the passes are already done; the lines,
and their log-probabilities, are those written without drafts."""

import pytest

from model.fim.left_to_right import DRAFTED, Written, write_lines
from model.runtime.served_model import ServingNetwork
from tests.test_beam_search_room import _room_after_its_first_pass
from tests.test_left_to_right import TOKENIZER

PREFIX = ("class Point:\n    def __init__(self, x, y):\n        self.x = x\n        self.y = y\n\n"
          "    def __repr__(self):\n        return f")
SUFFIX = "\n"


def _assert_same_lines(lines: list[Written], expected: list[Written]) -> None:
    assert [w.text for w in lines] == [w.text for w in expected]
    for a, b in zip(lines, expected, strict=True):
        assert a.tokens == b.tokens
        assert a.log_probs == pytest.approx(b.log_probs, abs=1e-4)


@pytest.mark.parametrize("canvas", [32, 2])  # in the request's room, and in the copy a search outgrowing it moves to
def test_a_right_draft_saves_passes_and_a_wrong_one_changes_nothing(float_network: ServingNetwork, canvas: int) -> None:
    network = float_network
    ids = [TOKENIZER.suffix_id, *TOKENIZER.encode(SUFFIX), TOKENIZER.prefix_id, *TOKENIZER.encode(PREFIX)]

    def written(drafts: list[str], beams: int) -> list[Written]:
        room = _room_after_its_first_pass(network, ids, canvas)
        return write_lines(network, TOKENIZER, ids, room, PREFIX, SUFFIX, first=room.head, drafts=drafts, beams=beams)

    for beams in (1, 8):
        plain = written([], beams)
        assert plain and len(plain[0].tokens) > DRAFTED + 1  # the shipped model writes an f-string of 9 tokens
        right = written([plain[0].text], beams)
        _assert_same_lines(right, plain)
        wrong = written(["'x'", "repr(self.x)"], beams)  # lines the model does not write, nor starts as
        _assert_same_lines(wrong, plain)
        assert wrong[0].passes == plain[0].passes
        assert right[0].passes <= plain[0].passes
        if beams == 1 and canvas == 32:  # the beam goes on as drafted: each pass checks the next DRAFTED tokens too
            assert plain[0].passes == len(plain[0].tokens) - 1  # the first token's distribution was given
            assert right[0].passes == -(-plain[0].passes // (DRAFTED + 1))
