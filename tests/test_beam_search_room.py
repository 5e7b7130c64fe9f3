"""Where the next-token head's beam search writes: after a context pass that already gave
its first distribution, in the request's own room (the canvas's slots), and in a copy only
once it outgrows them; the rooms ``FimCompleter`` takes turns in, each finding the last context
in place while its size stays."""

import numpy as np
import pytest

from model.fim import inference
from model.fim.completion_request import CompletionRequest
from model.fim.inference import FimCompleter
from model.fim.left_to_right import write_lines
from model.fim.token_healing import first_position
from model.model_folder import SHIPPED_DIR
from model.runtime.canvas_room import ROOM_SLOTS_STEP, Room, RoomMemory, new_room
from model.runtime.served_model import ServingNetwork
from model.runtime.serving import load_served_model
from tests.test_left_to_right import PREFIX, SUFFIX, TOKENIZER, _ids


def _room_after_its_first_pass(network: ServingNetwork, ids: list[int], canvas: int) -> Room:
    """A request's room as ``FimCompleter`` leaves it for the beam search: the context's
    last tokens encoded by the first canvas pass, which also gave the head's distribution."""
    start = first_position(TOKENIZER, ids)
    room = network.make_room(network.encode_context(np.array(ids[:start - 3])), canvas,
                             pending=np.array(ids[start - 3:]))
    room.head_at = start
    network.probabilities(np.full(canvas, TOKENIZER.mask_id), room)
    assert room.head is not None
    return room


def test_a_line_started_from_the_context_pass_s_distribution_is_the_same_line_one_pass_sooner(
    float_network: ServingNetwork,
) -> None:
    network, ids = float_network, _ids()
    assert first_position(TOKENIZER, ids) == len(ids) - 2  # "val" is cut: its token is written again
    room = _room_after_its_first_pass(network, ids, 8)
    plain = write_lines(network, TOKENIZER, ids, room.context_cache(), PREFIX, SUFFIX)
    sooner = write_lines(network, TOKENIZER, ids, room.context_cache(), PREFIX, SUFFIX, first=room.head)
    assert plain and [w.text for w in sooner] == [w.text for w in plain]
    for a, b in zip(sooner, plain, strict=True):
        assert a.log_probs == pytest.approx(b.log_probs, abs=1e-4)
        assert a.passes == b.passes - 1


@pytest.mark.parametrize("canvas", [32, 2])  # the served canvas's slots, and too few: the search moves to a copy
def test_lines_written_in_the_request_s_room_are_those_written_in_a_copy_and_its_context_is_left_as_it_was(
    float_network: ServingNetwork, canvas: int,
) -> None:
    network, ids = float_network, _ids()
    room = _room_after_its_first_pass(network, ids, canvas)
    context = [(k.copy(), v.copy()) for k, v in room.context_cache()]
    copied = write_lines(network, TOKENIZER, ids, room.context_cache(), PREFIX, SUFFIX, first=room.head)
    in_room = write_lines(network, TOKENIZER, ids, room, PREFIX, SUFFIX, first=room.head)
    assert copied and [w.text for w in in_room] == [w.text for w in copied]
    for a, b in zip(in_room, copied, strict=True):
        assert a.log_probs == pytest.approx(b.log_probs, abs=1e-4)
        assert a.passes == b.passes
    # The next request reuses the context's keys/values, the healed token's among them.
    for (k, v), (k0, v0) in zip(room.context_cache(), context, strict=True):
        np.testing.assert_array_equal(k, k0)
        np.testing.assert_array_equal(v, v0)


def test_rooms_in_kept_memory_find_the_context_in_place_and_compute_what_rooms_in_new_buffers_do(
    float_network: ServingNetwork,  # int8 would round the attention's last-bit differences apart
) -> None:
    network = float_network
    rng, canvas = np.random.default_rng(0), np.full(4, TOKENIZER.mask_id)
    memory, shared_cache, fresh_cache = RoomMemory(), None, None
    buffers = []
    for step in range(12):  # each room starts from the last one's context, 3 tokens longer, as typing on does
        pending = rng.integers(0, 100, 3)
        shared = new_room(network.config, shared_cache, 4, pending, memory)
        fresh = new_room(network.config, fresh_cache, 4, pending)
        assert shared.end == fresh.end == fresh.layers[0][0].shape[1] == 3 * step + 7
        assert shared.layers[0][0].shape[1] == ROOM_SLOTS_STEP * (1 + (3 * step + 6) // ROOM_SLOTS_STEP)
        # Its unused slots hold older rooms' keys/values, or zeros: hidden either way.
        np.testing.assert_allclose(network.probabilities(canvas, shared), network.probabilities(canvas, fresh),
                                   atol=1e-6, rtol=1e-4)
        shared_cache, fresh_cache = shared.context_cache(), fresh.context_cache()
        for (k, v), (k2, v2) in zip(shared_cache, fresh_cache, strict=True):
            np.testing.assert_allclose(k, k2, atol=1e-5, rtol=1e-4)
            np.testing.assert_allclose(v, v2, atol=1e-5, rtol=1e-4)
        buffers.append(next(turn for turn, flat in enumerate(memory._buffers)
                            if np.may_share_memory(flat, shared.layers[0][0])))
    # In the first buffer while the rooms have 32 slots (the context in place: nothing copied), then the other.
    assert buffers == [0] * 9 + [1] * 3


class _NewBuffers(RoomMemory):
    """Memory that is new every time: what a completer computed before rooms took turns."""

    def take(self, floats: int, keeping: object, slots: int) -> np.ndarray:
        return np.zeros(floats, dtype=np.float32)


def test_a_completer_whose_rooms_take_turns_answers_as_one_whose_rooms_are_new() -> None:
    served = load_served_model(SHIPPED_DIR)
    turns, new = FimCompleter(served), FimCompleter(served)
    new._room_memory = _NewBuffers()
    text = "def area(width, height):\n    return width * height\n\n\ndef volume(width, height, depth):\n    return are"
    for end in range(len(text) - 30, len(text) + 1):  # each keystroke reuses the last room's context
        request = CompletionRequest(text[:end], "\n", canvas_size=32, max_steps=1)
        assert turns.complete(request) == new.complete(request), end


def test_a_request_that_fails_after_its_first_pass_leaves_no_stale_context_for_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REDRAFT_INT8", "0")  # float: the two paths below compare closely
    served = load_served_model(SHIPPED_DIR)
    text = "def area(width, height):\n    return width * height\n\n\ndef volume(width, height, depth):\n    return are"
    # Rooms of the same size, the second built where the first context lies, and writing over most of it.
    first = CompletionRequest(text, "\n", max_steps=1)
    other = CompletionRequest(text.replace("width * height", "width + height"), "\n", max_steps=1)
    failing, steady = FimCompleter(served), FimCompleter(served)
    expected = [steady.complete(first), steady.complete(first)][1]
    failing.complete(first)
    real_denoise = inference.denoise

    def denoise_then_fail(*args: object, **kwargs: object) -> object:
        real_denoise(*args, **kwargs)  # type: ignore[arg-type]  # the first pass writes the room
        raise RuntimeError("a failure after the first pass")

    monkeypatch.setattr(inference, "denoise", denoise_then_fail)
    with pytest.raises(RuntimeError):
        failing.complete(other)  # its room lies where the first context did, and wrote over its end
    monkeypatch.setattr(inference, "denoise", real_denoise)
    again = failing.complete(first)
    assert [c.text for c in again] == [c.text for c in expected]
    for got, wanted in zip(again, expected, strict=True):  # what the network said, as closely as float allows
        assert got.features == pytest.approx(wanted.features, abs=1e-4)
        assert got.confidence == pytest.approx(wanted.confidence, abs=1e-5)
