"""Serving in int8: close to the float network, and off when asked."""

from __future__ import annotations

import copy

import pytest
import torch

from model.architecture import NetworkConfig
from model.network import DiffusionEditor
from model.runtime.int8 import Int8Linear, int8_linear, quantize_for_serving


def float_network() -> DiffusionEditor:
    torch.manual_seed(0)
    return DiffusionEditor(NetworkConfig(vocab_size=256, n_layer=2, n_head=2, d_model=64, mlp_hidden=96)).eval()


def test_int8_matmul_is_close_to_the_float_one() -> None:
    torch.manual_seed(1)
    weight, x = torch.randn(96, 64) * 0.05, torch.randn(3, 7, 64)
    exact = x @ weight.T
    error = (int8_linear(weight)(x) - exact).abs().max()
    assert error < 0.02 * exact.abs().max()


def test_quantized_network_serves_nearly_the_same_logits() -> None:
    network = float_network()
    served = copy.deepcopy(network)
    assert quantize_for_serving(served)
    assert all(isinstance(block.attn.qkv, Int8Linear) and isinstance(block.ff.down, Int8Linear)
               for block in served.blocks)
    context, canvas = torch.randint(0, 256, (1, 20)), torch.randint(0, 256, (1, 8))
    with torch.no_grad():
        expected = network.denoise(canvas, network.encode_context(context))
        got = served.denoise(canvas, served.encode_context(context))
    assert got.shape == expected.shape
    assert (got - expected).abs().max() < 0.05 * expected.abs().max()
    assert (got.argmax(-1) == expected.argmax(-1)).float().mean() >= 0.75


def test_redraft_int8_0_keeps_floating_point(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDRAFT_INT8", "0")
    network = float_network()
    assert not quantize_for_serving(network)
    assert network.int8_output is None and isinstance(network.blocks[0].attn.qkv, torch.nn.Linear)
