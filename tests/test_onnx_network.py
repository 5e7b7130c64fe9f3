"""The ONNX Runtime network must serve what the torch network computes."""

import pytest
import torch

from model import checkpoint
from model.checkpoint import SHIPPED_DIR, load_served_model
from model.network import DiffusionEditor, NetworkConfig
from model.onnx_network import OrtNetwork


def tiny_pair(int8: bool = False) -> tuple[DiffusionEditor, OrtNetwork]:
    torch.manual_seed(0)  # the sizes of test_int8.py, whose int8 tolerances this file shares
    network = DiffusionEditor(NetworkConfig(vocab_size=256, n_layer=2, n_head=2, d_model=64, mlp_hidden=96)).eval()
    weights = {name: tensor.numpy() for name, tensor in network.state_dict().items()}
    return network, OrtNetwork(network.config, weights, int8=int8, threads=1)


def test_every_serving_entry_point_matches_the_torch_network() -> None:
    network, served = tiny_pair()
    context, tail = torch.randint(0, 256, (1, 12)), torch.randint(0, 256, (1, 3))
    canvas = torch.randint(0, 256, (1, 6))
    results = []
    with torch.no_grad():
        for runner in (network, served):
            cache = runner.encode_context(context)
            room = runner.make_room(cache, 6, pending=tail)
            first = runner.denoise(canvas, room, torch.arange(6))  # pending tail + canvas in one pass
            prefix = runner.denoise(canvas[:, :4], room, torch.tensor([1, 3]))  # a frozen tail after it
            whole = runner.encode_context(tail, cache)
            plain = runner.denoise(canvas, whole, torch.tensor([0, 5]))
            results.append((first, prefix, plain, room.context_cache(), whole))
    (*torch_logits, torch_room, torch_whole), (*ort_logits, ort_room, ort_whole) = results
    for expected, got in zip(torch_logits, ort_logits, strict=True):
        torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)
    for cache_a, cache_b in ((torch_room, ort_room), (torch_whole, ort_whole)):
        for (k, v), (k2, v2) in zip(cache_a, cache_b, strict=True):
            torch.testing.assert_close(k2, k, atol=1e-5, rtol=1e-4)
            torch.testing.assert_close(v2, v, atol=1e-5, rtol=1e-4)


def test_the_int8_graph_serves_nearly_the_same_logits() -> None:
    network, served = tiny_pair(int8=True)
    context, canvas = torch.randint(0, 256, (1, 20)), torch.randint(0, 256, (1, 8))
    with torch.no_grad():
        expected = network.denoise(canvas, network.encode_context(context))
        got = served.denoise(canvas, served.encode_context(context))
    assert got.shape == expected.shape
    assert float((got - expected).abs().max()) < 0.05 * float(expected.abs().max())
    assert float((got.argmax(-1) == expected.argmax(-1)).float().mean()) >= 0.75


def test_the_server_loads_onnx_runtime_and_torch_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(load_served_model(SHIPPED_DIR).network, OrtNetwork)
    monkeypatch.setenv("REDRAFT_ONNX", "0")
    assert isinstance(load_served_model(SHIPPED_DIR).network, DiffusionEditor)


def test_a_broken_onnx_runtime_falls_back_to_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("no CPU provider")

    import model.onnx_network

    monkeypatch.setattr(model.onnx_network, "OrtNetwork", broken)
    served = checkpoint.load_served_model(SHIPPED_DIR)
    assert isinstance(served.network, DiffusionEditor)
    with torch.no_grad():
        logits = served.network.denoise(torch.zeros(1, 4, dtype=torch.long),
                                        served.network.encode_context(torch.ones(1, 5, dtype=torch.long)))
    assert logits.shape == (4, served.network.config.vocab_size) and bool(torch.isfinite(logits).all())
