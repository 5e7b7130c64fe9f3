"""The denoiser's serving pass as an ONNX graph, built from the saved weights.

Why: a pass over a few canvas tokens costs torch ~4.7 ms on 2 cores even in int8, almost
all of it per-op dispatch (RMSNorm, rotary, attention, each ~30–70 µs per layer). ONNX
Runtime runs the same pass in ~1.1 ms, and a 32-token pass in 3.6 ms instead of 7.9 ms.
ONNX Runtime's fused contrib ops (rotary, residual add + RMSNorm) replace ~100 of the
graph's ~290 nodes. Its fused attention (``MultiHeadAttention``) was no faster here: with
a past it must also return the past and the new keys joined, a copy of the cache per layer.

One graph serves every pass (``onnx_network.py`` decides what each row may see):

    ids (n,) and their positions (n,), the rotary cos/sin tables (table, head_dim/2),
    past keys/values per layer (heads, p, head_dim), an additive attention bias (n, p + n)
    over [past | these rows], the rows to score (r,)
    → probabilities (r, vocab), and these rows' keys (rotated) and values per layer (heads, n, head_dim).

The blocks mirror ``network.py`` exactly (pre-norm RMSNorm, fused qkv, rotary on halves,
SwiGLU, tied output layer, then a softmax; the attention's scale folded into the query's
weights); a test compares them with the torch network. With ``int8``,
every matmul has per-column int8 weights and activations quantized per call
(``DynamicQuantizeMatMul``), as ``int8.py`` does for torch. With weights ``v25``, the
first pass's canvas distributions over 135 contexts of packages in no corpus are 0.027 nats
(mean KL) from fp32's, their argmax the same at 94.6% of positions; most of the gap is the
feed-forward's down projection (in fp32 alone: 0.005), whose SwiGLU inputs have outlier
channels that one activation scale per call serves badly. That projection in fp32 cost
1.6 ms a request (paired, in-process, over the typing bench's keystrokes), so every matmul
stays int8 and the weights given here are smoothed instead (``int8_smoothing.py``: 0.008).
The unsmoothed gap cost no measured quality either (weights ``v24``, HumanEval single-line
exact / pass@1: 93 / 140 in int8, 95 / 141 in fp32).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from onnx import ModelProto, NodeProto, TensorProto, helper, numpy_helper

from model.architecture import NetworkConfig

OPSET = 17
WEIGHT_LEVELS = 63
RMS_EPSILON = float(np.finfo(np.float32).eps)  # nn.RMSNorm's default for fp32


class _GraphBuilder:
    def __init__(self, int8: bool) -> None:
        self.int8 = int8
        self.nodes: list[NodeProto] = []
        self.initializers: list[TensorProto] = []
        self._count = 0

    def constant(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def op(self, op_type: str, inputs: list[str], outputs: int = 1, domain: str | None = None,
           **attributes: Any) -> list[str]:
        self._count += 1
        names = [f"{op_type.lower()}{self._count}_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, names, domain=domain, **attributes))
        return names

    def one(self, op_type: str, inputs: list[str], **attributes: Any) -> str:
        return self.op(op_type, inputs, **attributes)[0]

    def linear(self, x: str, weight: np.ndarray, name: str, int8: bool | None = None) -> str:
        """``x @ weight.T`` for a torch-layout weight (out, in)."""
        transposed = np.ascontiguousarray(weight.T, dtype=np.float32)  # (in, out)
        if not (self.int8 if int8 is None else int8):
            return self.one("MatMul", [x, self.constant(name, transposed)])
        # Symmetric per output column, so zero stays exact (as int8.py), in 7 bits: AVX2's
        # u8×s8 multiply-add saturates 16-bit pair sums with 8-bit weights (measured on the
        # shipped model's logits: KL to fp32 0.00097 with 8 bits, 0.00046 with 7).
        scale = (np.maximum(np.abs(transposed).max(axis=0), 1e-8) / WEIGHT_LEVELS).astype(np.float32)
        quantized = np.clip(np.round(transposed / scale), -WEIGHT_LEVELS, WEIGHT_LEVELS).astype(np.int8)
        inputs = [x, self.constant(name + ".int8", quantized), self.constant(name + ".scale", scale),
                  self.constant(name + ".zero", np.zeros(quantized.shape[1], dtype=np.int8))]
        return self.op("DynamicQuantizeMatMul", inputs, domain="com.microsoft")[0]

    def rms_norm(self, x: str, weight: np.ndarray, name: str) -> str:
        return self.one("SimplifiedLayerNormalization", [x, self.constant(name, weight.astype(np.float32))],
                        axis=-1, epsilon=RMS_EPSILON)

    def add_and_norm(self, x: str, added: str, weight: np.ndarray, name: str) -> tuple[str, str]:
        """``x + added`` and its RMSNorm, in one fused node: (normed, sum)."""
        normed, _, _, total = self.op("SkipSimplifiedLayerNormalization",
                                      [x, added, self.constant(name, weight.astype(np.float32))],
                                      outputs=4, domain="com.microsoft", epsilon=RMS_EPSILON)
        return normed, total

    def rotary(self, x: str, positions: str, heads: int) -> str:
        """(1, n, heads × head_dim) rotated by position, each head's pairs (first half,
        second half) as ``network.py`` pairs them."""
        return self.one("RotaryEmbedding", [x, positions, "cos", "sin"], domain="com.microsoft",
                        interleaved=0, num_heads=heads)


def build_pass_graph(config: NetworkConfig, weights: Mapping[str, np.ndarray], int8: bool = True) -> ModelProto:
    """The graph of one pass (module docstring) for a network without a length head."""
    if config.length_head:
        raise ValueError("the serving graph does not cover the length-head ablation")
    heads, head_dim, width = config.n_head, config.head_dim, config.d_model
    g = _GraphBuilder(int8)
    g.constant("batch_axis", np.array([0], dtype=np.int64))
    g.constant("batch_shape", np.array([1, -1, width], dtype=np.int64))
    g.constant("head_shape", np.array([-1, heads, head_dim], dtype=np.int64))
    embedding = weights["embed.weight"].astype(np.float32)
    batch_positions = g.one("Unsqueeze", ["positions", "batch_axis"])  # (1, n)
    x = g.one("Reshape", [g.one("Gather", [g.constant("embed", embedding), "ids"], axis=0), "batch_shape"])
    added: str | None = None  # the last block's output, not yet added to x
    for i in range(config.n_layer):
        p = f"blocks.{i}."
        if added is None:
            normed = g.rms_norm(x, weights[p + "attn_norm.weight"], p + "attn_norm")
        else:
            normed, x = g.add_and_norm(x, added, weights[p + "attn_norm.weight"], p + "attn_norm")
        # The attention's 1/sqrt(head_dim) folded into the query's weights (rotary is linear).
        qkv_weight = weights[p + "attn.qkv.weight"].astype(np.float32)
        qkv_weight = np.concatenate([qkv_weight[:width] / math.sqrt(head_dim), qkv_weight[width:]])
        q, k, v = g.op("Split", [g.linear(normed, qkv_weight, p + "qkv")], outputs=3, axis=-1)  # (1, n, width)
        q, k = g.rotary(q, batch_positions, heads), g.rotary(k, batch_positions, heads)
        q = g.one("Transpose", [g.one("Reshape", [q, "head_shape"])], perm=[1, 0, 2])  # (heads, n, head_dim)
        for kind, rows in (("keys", k), ("values", v)):
            g.nodes.append(helper.make_node("Transpose", [g.one("Reshape", [rows, "head_shape"])], [f"{kind}{i}"],
                                            perm=[1, 0, 2]))
        all_keys = g.one("Concat", [f"past_keys{i}", f"keys{i}"], axis=1)
        all_values = g.one("Concat", [f"past_values{i}", f"values{i}"], axis=1)
        scores = g.one("Add", [g.one("MatMul", [q, g.one("Transpose", [all_keys], perm=[0, 2, 1])]), "bias"])
        attended = g.one("MatMul", [g.one("Softmax", [scores], axis=-1), all_values])  # (heads, n, head_dim)
        attended = g.one("Reshape", [g.one("Transpose", [attended], perm=[1, 0, 2]), "batch_shape"])
        normed, x = g.add_and_norm(x, g.linear(attended, weights[p + "attn.out.weight"], p + "out"),
                                   weights[p + "ff_norm.weight"], p + "ff_norm")
        gate, up = g.op("Split", [g.linear(normed, weights[p + "ff.gate_up.weight"], p + "gate_up")],
                        outputs=2, axis=-1)
        swiglu = g.one("Mul", [g.one("Mul", [gate, g.one("Sigmoid", [gate])]), up])
        added = g.linear(swiglu, weights[p + "ff.down.weight"], p + "down")
    assert added is not None
    x = g.one("Squeeze", [g.one("Add", [x, added]), "batch_axis"])  # (n, width)
    scored = g.rms_norm(g.one("Gather", [x, "rows"], axis=0), weights["final_norm.weight"], "final_norm")
    # Softmax in the graph: numpy's over 32 × 8,192 logits cost ~0.9 ms a pass.
    g.nodes.append(helper.make_node("Softmax", [g.linear(scored, embedding, "output")], ["probabilities"], axis=-1))

    f32 = TensorProto.FLOAT
    inputs = [
        helper.make_tensor_value_info("ids", TensorProto.INT64, ["n"]),
        helper.make_tensor_value_info("positions", TensorProto.INT64, ["n"]),
        helper.make_tensor_value_info("cos", f32, ["table", head_dim // 2]),
        helper.make_tensor_value_info("sin", f32, ["table", head_dim // 2]),
        helper.make_tensor_value_info("bias", f32, ["n", "keys"]),
        helper.make_tensor_value_info("rows", TensorProto.INT64, ["r"]),
    ]
    graph_outputs = [helper.make_tensor_value_info("probabilities", f32, ["r", config.vocab_size])]
    for i in range(config.n_layer):
        for kind in ("keys", "values"):
            inputs.append(helper.make_tensor_value_info(f"past_{kind}{i}", f32, [heads, "p", head_dim]))
            graph_outputs.append(helper.make_tensor_value_info(f"{kind}{i}", f32, [heads, "n", head_dim]))
    graph = helper.make_graph(g.nodes, "redraft_denoising_pass", inputs, graph_outputs, g.initializers)
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets)
