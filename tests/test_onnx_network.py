"""The ONNX Runtime network must serve what the torch network computes."""

import numpy as np
import pytest
import torch

from model.architecture import NetworkConfig, weight_shapes
from model.model_folder import SHIPPED_DIR
from model.network import DiffusionEditor
from model.runtime import onnx_network
from model.runtime.canvas_room import new_room
from model.runtime.onnx_network import OrtNetwork
from model.runtime.served_model import ServingNetwork
from model.runtime.serving import load_served_model
from model.runtime.torch_serving import TorchServing


def tiny_pair(int8: bool = False, threads: int = 1) -> tuple[TorchServing, OrtNetwork]:
    torch.manual_seed(0)  # the sizes of test_int8.py, whose int8 tolerances this file shares
    network = DiffusionEditor(NetworkConfig(vocab_size=256, n_layer=2, n_head=2, d_model=64, mlp_hidden=96)).eval()
    weights = {name: tensor.detach().numpy() for name, tensor in network.state_dict().items()}
    return TorchServing(network), OrtNetwork(network.config, weights, int8=int8, threads=threads)


def test_every_serving_entry_point_matches_the_torch_network() -> None:
    rng = np.random.default_rng(0)
    context, tail, canvas = rng.integers(0, 256, 12), rng.integers(0, 256, 3), rng.integers(0, 256, 6)
    results = []
    runner: ServingNetwork
    for runner in tiny_pair():
        cache = runner.encode_context(context)
        room = runner.make_room(cache, 6, pending=tail)
        first = runner.probabilities(canvas, room, np.arange(6))  # pending tail + canvas in one pass
        prefix = runner.probabilities(canvas[:4], room, np.array([1, 3]))  # then a frozen tail after it
        whole = runner.encode_context(tail, cache)
        plain = runner.probabilities(canvas, whole, np.array([0, 5]))
        cold = runner.make_room(None, 6, pending=context)  # nothing cached: the whole room is written
        first_cold = runner.probabilities(canvas, cold, np.arange(6))
        again = runner.probabilities(canvas[::-1].copy(), cold, np.arange(6))
        results.append((first, prefix, plain, first_cold, again, room.context_cache(), whole, cold.context_cache()))
    (*torch_probabilities, torch_room, torch_whole, torch_cold), (*ort_probabilities, ort_room, ort_whole, ort_cold) \
        = results
    for expected, got in zip(torch_probabilities, ort_probabilities, strict=True):
        np.testing.assert_allclose(got, expected, atol=1e-6, rtol=1e-4)
        np.testing.assert_allclose(got.sum(-1), 1.0, rtol=1e-5)
    for cache_a, cache_b in ((torch_room, ort_room), (torch_whole, ort_whole), (torch_cold, ort_cold)):
        for (k, v), (k2, v2) in zip(cache_a, cache_b, strict=True):
            np.testing.assert_allclose(k2, k, atol=1e-5, rtol=1e-4)
            np.testing.assert_allclose(v2, v, atol=1e-5, rtol=1e-4)


def test_the_pass_that_encodes_the_context_also_gives_the_head_s_distribution_at_a_pending_position() -> None:
    rng = np.random.default_rng(3)
    context, canvas = rng.integers(0, 256, 12), rng.integers(0, 256, 6)
    _, ort = tiny_pair()
    cache = ort.encode_context(context[:9])
    for head_at in (9, 11):  # the first and the last pending position
        plain = ort.make_room(cache, 6, pending=context[9:])
        room = ort.make_room(cache, 6, pending=context[9:])
        room.head_at = head_at
        np.testing.assert_allclose(ort.probabilities(canvas, room), ort.probabilities(canvas, plain), atol=1e-6)
        # What the beam search's own first pass would compute: the token at head_at after the cache before it.
        beams = new_room(ort.config, [(k[:, :head_at], v[:, :head_at]) for k, v in room.context_cache()], 1, None)
        own = ort.next_tokens(context[head_at:head_at + 1], beams, head_at, np.array([head_at]),
                              np.ones((1, head_at + 1), dtype=bool))
        assert room.head is not None
        np.testing.assert_allclose(room.head, own[0], atol=1e-6, rtol=1e-4)
    cold = ort.make_room(None, 6, pending=context)
    cold.head_at = 11
    ort.probabilities(canvas, cold)
    assert cold.head is not None
    cached = ort.make_room(cache, 6, pending=context[9:])
    cached.head_at = 5  # already cached: no pass computes it, and none is asked to
    ort.probabilities(canvas, cached)
    assert cached.head is None


def test_the_onnx_sessions_flush_denormals_and_their_threads_sleep_between_passes() -> None:
    # Hidden keys score -inf: their exponentials went through denormal floats, and the
    # attention's softmax was ~9x slower for it. Spinning pool threads
    # burned 2.5x the CPU per keystroke. The first test above checks answers
    # with these settings; this one that they stay set, in both sessions.
    _, ort = tiny_pair(int8=True, threads=2)
    for session, threads in ((ort.session, "2"), (ort.small_pass_session, "1")):
        options = session.get_session_options()
        assert options.get_session_config_entry("session.set_denormal_as_zero") == "1"
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        assert str(options.intra_op_num_threads) == threads


class _RecordedSession:
    """An ONNX Runtime session that notes its name in ``used`` on every run."""

    def __init__(self, session: object, name: str, used: list[str]) -> None:
        self.session, self.name, self.used = session, name, used

    def run(self, *args: object) -> object:
        self.used.append(self.name)
        return self.session.run(*args)  # type: ignore[attr-defined]


def test_small_passes_run_on_one_thread_and_compute_what_two_threads_do(monkeypatch: pytest.MonkeyPatch) -> None:
    _, ort = tiny_pair(int8=True, threads=2)
    used: list[str] = []
    for name in ("session", "small_pass_session"):
        monkeypatch.setattr(ort, name, _RecordedSession(getattr(ort, name), name, used))
    rng = np.random.default_rng(3)
    long = onnx_network.SMALL_PASS_ROWS + 1  # a cold context's pass: two threads
    context, beams, canvas = rng.integers(0, 256, long), rng.integers(0, 256, 8), rng.integers(0, 256, 34)

    def passes() -> tuple[np.ndarray, np.ndarray]:
        room = ort.make_room(ort.encode_context(context), len(canvas))
        denoised = ort.probabilities(canvas, room)  # the canvas's pass as you type: one thread
        return denoised, ort.next_tokens(beams, room, long, np.full(len(beams), long), _beside(len(beams), long))

    small = passes()
    assert used == ["session", "small_pass_session", "small_pass_session"]
    monkeypatch.setattr(onnx_network, "SMALL_PASS_ROWS", 0)
    for two_threads, one_thread in zip(passes(), small, strict=True):
        np.testing.assert_array_equal(two_threads, one_thread)
    assert used[3:] == ["session"] * 3


def test_next_tokens_extends_each_beam_as_one_causal_pass_of_its_own_tokens() -> None:
    rng = np.random.default_rng(2)
    context = rng.integers(0, 256, 13)
    other = np.concatenate([context[:9], [(context[9] + 1) % 256]])  # a second beam, forking at token 9
    torch_network, ort_network = tiny_pair()
    editor = torch_network.editor

    def causal(ids: np.ndarray) -> np.ndarray:  # the distribution after each token, one causal pass
        with torch.no_grad():
            n = len(ids)
            hidden, _ = editor._run(torch.from_numpy(ids)[None], 0, torch.ones(n, n, dtype=torch.bool).tril(), None)
            return editor.logits(hidden[0]).softmax(-1).numpy()

    expected, forked = causal(context), causal(other)
    runner: ServingNetwork
    for runner in (torch_network, ort_network):
        room = new_room(runner.config, runner.encode_context(context[:8]), 8, None)
        for keys, values in room.layers:  # slots not written yet must not be seen
            keys[:, 8:], values[:, 8:] = 7.0, -7.0
        np.testing.assert_allclose(runner.next_tokens(context[8:9], room, 8, np.array([8]), _beside(1, 8))[0],
                                   expected[8], atol=1e-6, rtol=1e-4)
        # Two beams after slot 8, in slots 9 and 10, both at position 9: neither sees the other.
        both = runner.next_tokens(np.array([context[9], other[9]]), room, 9, np.array([9, 9]), _beside(2, 9))
        np.testing.assert_allclose(both[0], expected[9], atol=1e-6, rtol=1e-4)
        np.testing.assert_allclose(both[1], forked[9], atol=1e-6, rtol=1e-4)
        # The first beam goes on in slot 11, at position 10, seeing its own slot 9 and not slot 10;
        # in the same pass, two drafted tokens after it in slots 12 and 13, at positions 11 and 12,
        # each seeing the beam's slots and the drafted rows before it.
        sees = np.ones((3, 14), dtype=bool)
        sees[:, 10] = False
        sees[0, 12:] = False
        sees[1, 13] = False
        rows = runner.next_tokens(context[10:13], room, 11, np.array([10, 11, 12]), sees)
        np.testing.assert_allclose(rows, expected[10:13], atol=1e-6, rtol=1e-4)


def _beside(rows: int, at: int) -> np.ndarray:
    """What rows written at ``at`` see when each goes on from all of the slots before it: those and itself."""
    sees = np.zeros((rows, at + rows), dtype=bool)
    sees[:, :at] = True
    sees[:, at:] = np.eye(rows, dtype=bool)
    return sees


def test_the_int8_graph_serves_nearly_the_same_distributions() -> None:
    network, served = tiny_pair(int8=True)
    rng = np.random.default_rng(1)
    context, canvas = rng.integers(0, 256, 20), rng.integers(0, 256, 8)
    expected = network.probabilities(canvas, network.encode_context(context))
    got = served.probabilities(canvas, served.encode_context(context))
    assert got.shape == expected.shape
    kl = (expected * (np.log(expected) - np.log(got))).sum(-1)
    assert kl.max() < 0.01
    assert (got.argmax(-1) == expected.argmax(-1)).mean() >= 0.75


def test_the_weight_list_is_the_torch_network_s() -> None:
    for config in (NetworkConfig(vocab_size=64, n_layer=2, n_head=2, d_model=32, mlp_hidden=48),
                   NetworkConfig(vocab_size=64, n_layer=1, n_head=2, d_model=32, mlp_hidden=48, length_head=True)):
        state = DiffusionEditor(config).state_dict()
        assert weight_shapes(config) == {name: tuple(tensor.shape) for name, tensor in state.items()}


def test_the_server_loads_onnx_runtime_and_torch_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(load_served_model(SHIPPED_DIR).network, OrtNetwork)
    monkeypatch.setenv("REDRAFT_ONNX", "0")
    assert isinstance(load_served_model(SHIPPED_DIR).network, TorchServing)


def test_a_broken_onnx_runtime_falls_back_to_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("no CPU provider")

    import model.runtime.onnx_network

    monkeypatch.setattr(model.runtime.onnx_network, "OrtNetwork", broken)
    served = load_served_model(SHIPPED_DIR)
    assert isinstance(served.network, TorchServing)
    cache = served.network.encode_context(np.ones(5, dtype=np.int64))
    distribution = served.network.probabilities(np.zeros(4, dtype=np.int64), cache)
    assert distribution.shape == (4, served.network.config.vocab_size)
    np.testing.assert_allclose(distribution.sum(-1), 1.0, rtol=1e-5)
