"""Saving and loading models. Weights are safetensors (no pickle); the config and the
tokenizer travel beside them, so loading never guesses a shape."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from model.int8 import quantize_for_serving
from model.network import DiffusionEditor, NetworkConfig, ServingNetwork
from model.precision import fastest_dtype
from model.tokenizer import CodeTokenizer

SHIPPED_DIR = Path(__file__).parent / "weights"
WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
TOKENIZER_FILE = "tokenizer.json"

log = logging.getLogger(__name__)


class ModelLoadError(RuntimeError):
    """A model folder that is missing, truncated or does not match its config."""


@dataclass(frozen=True)
class LoadedModel:
    network: DiffusionEditor
    tokenizer: CodeTokenizer
    metadata: dict[str, Any]


@dataclass(frozen=True)
class ServedModel:
    """A model as the server runs it: only the serving entry points of the network."""

    network: ServingNetwork
    tokenizer: CodeTokenizer
    metadata: dict[str, Any]


def save_model(
    network: DiffusionEditor, tokenizer: CodeTokenizer, folder: Path,
    metadata: dict[str, Any], dtype: torch.dtype = torch.float32,
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().to(dtype).contiguous() for k, v in network.state_dict().items()}
    tmp = folder / (WEIGHTS_FILE + ".tmp")
    save_file(tensors, str(tmp))
    tmp.replace(folder / WEIGHTS_FILE)  # atomic: a crash never leaves half a file
    config = {"network": network.config.to_dict(), **metadata}
    (folder / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n")
    tokenizer.save(folder / TOKENIZER_FILE)


def network_config(raw: dict[str, Any]) -> NetworkConfig:
    known = {f.name for f in fields(NetworkConfig)}
    unknown = set(raw) - known
    if unknown:
        raise ModelLoadError(f"config has unknown network fields {sorted(unknown)}")
    return NetworkConfig(**raw)


def load_model(folder: Path = SHIPPED_DIR, dtype: torch.dtype = torch.float32) -> LoadedModel:
    """Load weights + config + tokenizer from ``folder``; raise ModelLoadError with a
    message a user can act on when anything is missing or inconsistent."""
    for name in (WEIGHTS_FILE, CONFIG_FILE, TOKENIZER_FILE):
        if not (folder / name).is_file():
            raise ModelLoadError(f"model file {folder / name} is missing")
    try:
        config = json.loads((folder / CONFIG_FILE).read_text())
        tokenizer = CodeTokenizer.load(folder / TOKENIZER_FILE)
        network = DiffusionEditor(network_config(config["network"]))
        state = load_file(str(folder / WEIGHTS_FILE))
    except ModelLoadError:
        raise
    except Exception as exc:  # corrupt JSON, truncated safetensors, bad tokenizer file
        raise ModelLoadError(f"cannot read the model in {folder}: {exc}") from exc
    if tokenizer.vocab_size != network.config.vocab_size:
        raise ModelLoadError(
            f"the tokenizer in {folder} has {tokenizer.vocab_size} tokens but the network expects "
            f"{network.config.vocab_size}"
        )
    try:
        network.load_state_dict({k: v.float() for k, v in state.items()})
    except RuntimeError as exc:
        raise ModelLoadError(f"weights in {folder} do not match its config: {exc}") from exc
    network.to(dtype).eval()
    metadata = {k: v for k, v in config.items() if k != "network"}
    return LoadedModel(network, tokenizer, metadata)


def load_served_model(folder: Path = SHIPPED_DIR) -> ServedModel:
    """The model as the server runs it: ONNX Runtime with int8 matmuls (``onnx_network.py``,
    ~4× faster per pass than torch here); where ONNX Runtime can't run it, torch in this
    CPU's fastest float type with int8 linear layers (``int8.py``). ``REDRAFT_ONNX=0``
    chooses torch; ``REDRAFT_INT8=0`` keeps floating point in either."""
    loaded = load_model(folder, dtype=torch.float32)
    if os.environ.get("REDRAFT_ONNX", "1") != "0":
        try:
            from model.onnx_network import OrtNetwork

            weights = {name: tensor.numpy() for name, tensor in loaded.network.state_dict().items()}
            int8 = os.environ.get("REDRAFT_INT8", "1") != "0"
            network = OrtNetwork(loaded.network.config, weights, int8=int8)
            # torch then runs only the sampler's small ops; its thread pool would fight
            # ONNX Runtime's for the cores (measured: typing p50 38 → 28 ms with one thread).
            torch.set_num_threads(1)
            return ServedModel(network, loaded.tokenizer, loaded.metadata)
        except Exception as exc:  # a missing or broken onnxruntime: torch still serves
            log.warning("ONNX Runtime unavailable (%s); serving with torch", exc)
    editor = loaded.network.to(fastest_dtype())
    quantize_for_serving(editor)
    return ServedModel(editor, loaded.tokenizer, loaded.metadata)
