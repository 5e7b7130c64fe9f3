"""Saving and loading models in torch (training, ablations, tests). Weights are
safetensors (no pickle); the config and the tokenizer travel beside them, so loading
never guesses a shape. The server loads without torch: ``serving.py``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from model.model_folder import (
    CONFIG_FILE,
    SCALES_FILE,
    SHIPPED_DIR,
    TOKENIZER_FILE,
    WEIGHTS_FILE,
    ModelLoadError,
    read_folder,
)
from model.network import DiffusionEditor
from model.tokenizer import CodeTokenizer


@dataclass(frozen=True)
class LoadedModel:
    network: DiffusionEditor
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
    # int8 scales beside the weights were measured for the ones just replaced (`redraft
    # calibrate` measures new ones); stale, they would still be exact, only less useful.
    (folder / SCALES_FILE).unlink(missing_ok=True)
    config = {"network": network.config.to_dict(), **metadata}
    (folder / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n")
    tokenizer.save(folder / TOKENIZER_FILE)


def load_model(folder: Path = SHIPPED_DIR, dtype: torch.dtype = torch.float32) -> LoadedModel:
    """Load weights + config + tokenizer from ``folder``; raise ModelLoadError with a
    message a user can act on when anything is missing or inconsistent."""
    contents = read_folder(folder)
    network = DiffusionEditor(contents.config)
    try:
        state = load_file(str(folder / WEIGHTS_FILE))
    except Exception as exc:  # a truncated or foreign file
        raise ModelLoadError(f"cannot read the model in {folder}: {exc}") from exc
    try:
        network.load_state_dict({k: v.float() for k, v in state.items()})
    except RuntimeError as exc:
        raise ModelLoadError(f"weights in {folder} do not match its config: {exc}") from exc
    network.to(dtype).eval()
    return LoadedModel(network, contents.tokenizer, contents.metadata)
