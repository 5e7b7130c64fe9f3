"""The contexts a completer has left: going back to a place encodes only what changed there,
and answers as if the completer had never left; one context kept a place, the most recent
places only; a kept context laid out with its own prefix cut."""

from typing import Any

import numpy as np
import pytest

from model.fim.completion_request import CompletionRequest
from model.fim.inference import FimCompleter
from model.fim.recent_contexts import RecentContexts
from model.formats import ContextBudget, context_cut
from model.model_folder import SHIPPED_DIR
from model.runtime.canvas_room import Cache
from model.runtime.serving import load_served_model
from model.tokenizer import CodeTokenizer

TOKENIZER = CodeTokenizer.load(SHIPPED_DIR / "tokenizer.json")
BUDGET = ContextBudget()

AREA = "def area(width, height):\n    return width * height\n\n\ndef volume(width, height, depth):\n    return are"
AREA_AFTER = "\n\n\ndef main():\n    print(volume(1, 2, 3))\n"
GREET = "import sys\n\n\ndef greet(name):\n    message = 'Hello, ' + name\n    print(mes"
GREET_AFTER = "\n\n\nif __name__ == '__main__':\n    greet(sys.argv[1])\n"


def test_going_back_to_a_place_encodes_only_what_was_typed_there_and_answers_as_if_never_gone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REDRAFT_INT8", "0")  # float: the two completers' answers compare closely
    served = load_served_model(SHIPPED_DIR)
    pending: list[int] = []
    make_room = served.network.make_room

    def recorded(cache: Any, canvas_size: int, ids: np.ndarray, *args: Any) -> Any:
        pending.append(len(ids))
        return make_room(cache, canvas_size, ids, *args)

    monkeypatch.setattr(served.network, "make_room", recorded)
    moving, steady = FimCompleter(served), FimCompleter(served)
    typed = [CompletionRequest(AREA[:-1], AREA_AFTER, max_steps=1), CompletionRequest(AREA, AREA_AFTER, max_steps=1)]
    elsewhere = CompletionRequest(GREET, GREET_AFTER, max_steps=1)

    steady.complete(typed[0])
    expected = steady.complete(typed[1])
    steady_pending = pending[-1]
    moving.complete(typed[0])
    moving.complete(elsewhere)
    whole_context = pending[-1]
    again = moving.complete(typed[1])  # back where it was, one character typed since
    assert pending[-1] == steady_pending < 5 < whole_context
    assert [c.text for c in again] == [c.text for c in expected]
    for got, wanted in zip(again, expected, strict=True):
        assert got.confidence == pytest.approx(wanted.confidence, abs=1e-5)
    # And back at the other place: its context was kept when this one was resumed.
    moving.complete(elsewhere)
    assert pending[-1] < 5


def _cache(length: int, mark: float) -> Cache:
    return [(np.full((2, length, 4), mark, dtype=np.float32), np.full((2, length, 4), mark, dtype=np.float32))]


def _ids(place: int, prefix: list[int]) -> list[int]:
    return [TOKENIZER.suffix_id, 100 + place, 200 + place, TOKENIZER.prefix_id, *prefix]


def test_one_context_is_kept_a_place_the_most_recently_left_and_a_resumed_one_is_taken_out() -> None:
    recent = RecentContexts(TOKENIZER, BUDGET, capacity=3)
    for place in range(5):
        recent.leave(_ids(place, [1, 2]), _cache(6, place), None)
    recent.leave(_ids(3, [1, 2, 3]), _cache(7, 30), None)  # place 3 again, typed on: replaces its older one
    assert [kept.ids for kept in recent.kept] == [_ids(2, [1, 2]), _ids(4, [1, 2]), _ids(3, [1, 2, 3])]
    # Left contexts are copies: the rooms they lay in are written over next.
    cache = _cache(6, 7)
    recent.leave(_ids(7, []), cache, None)
    cache[0][0][:] = -1
    assert recent.kept[-1].cache[0][0].max() == 7

    assert recent.resume("", "", _ids(9, [1, 2]), None, 0) is None  # no place of its own kept
    resumed = recent.resume("", "", _ids(3, [1, 2, 5]), None, 3)
    assert resumed is not None and resumed.common == 6 and resumed.kept.cache[0][0].max() == 30
    assert [kept.ids for kept in recent.kept] == [_ids(4, [1, 2]), _ids(7, [])]
    # A kept context with no more in common than the request's own has is not taken.
    assert recent.resume("", "", _ids(4, [9]), None, 4) is None


def test_kept_contexts_lie_in_buffers_allocated_once_and_used_again() -> None:
    recent = RecentContexts(TOKENIZER, BUDGET, capacity=3)
    buffers: list[np.ndarray] = []  # held, so that no buffer's id is used again
    for step in range(40):  # places left, now and then one resumed and its buffer released
        recent.leave(_ids(step % 7, [1, 2, step]), _cache(7, step), None)
        if step % 3 == 0:
            resumed = recent.resume("", "", _ids((step + 5) % 7, [1, 2]), None, 0)
            if resumed is not None:
                recent.release(resumed)
        for memory in [kept.memory for kept in recent.kept] + recent.spare:
            if all(memory is not seen for seen in buffers):
                buffers.append(memory)
        for kept in recent.kept:  # each holds what was left, in a buffer of its own
            assert kept.cache[0][0].max() == kept.ids[-1] and kept.cache[0][1].min() == kept.ids[-1]
        assert len({id(kept.memory) for kept in recent.kept}) == len(recent.kept) <= 3
    assert len(buffers) <= 4  # the kept ones and one being resumed


def test_a_request_is_laid_out_with_the_kept_context_s_prefix_cut() -> None:
    lines = [f"    value_{i} = compute(value_{i - 1}, {i})\n" for i in range(1, 150)]
    prefix, suffix = "def long():\n" + "".join(lines) + "    ", "\n\n\ndef after():\n    pass\n"
    left_ids, left_cut = context_cut(TOKENIZER, prefix, suffix, BUDGET)
    assert left_cut is not None  # the prefix is longer than the context: it was cut
    recent = RecentContexts(TOKENIZER, BUDGET)
    recent.leave(left_ids, _cache(len(left_ids), 1), left_cut)
    # Typed on there: a fresh cut would move the context's start, the kept cut keeps it.
    typed = prefix + "total = value_1 + value_2 + value_3\n    "
    fresh_ids, fresh_cut = context_cut(TOKENIZER, typed, suffix, BUDGET)
    resumed = recent.resume(typed, suffix, fresh_ids, fresh_cut, 0)
    assert resumed is not None and resumed.cut == left_cut != fresh_cut
    assert resumed.ids == context_cut(TOKENIZER, typed, suffix, BUDGET, left_cut)[0]
    assert resumed.common == len(left_ids) - 1 > sum(a == b for a, b in zip(fresh_ids, left_ids, strict=False)) + 100
