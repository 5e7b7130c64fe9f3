"""A model folder on disk: weights (safetensors), config.json and tokenizer.json.

Read without torch, so the server can check and load a model without importing it;
every problem becomes a ``ModelLoadError`` whose message names the folder and what to fix.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from model.architecture import NetworkConfig
from model.tokenizer import CodeTokenizer

SHIPPED_DIR = Path(__file__).parent / "weights"
WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
TOKENIZER_FILE = "tokenizer.json"
SCALES_FILE = "int8_scales.safetensors"  # optional: int8_smoothing.py


class ModelLoadError(RuntimeError):
    """A model folder that is missing, truncated or does not match its config."""


@dataclass(frozen=True)
class FolderContents:
    config: NetworkConfig
    tokenizer: CodeTokenizer
    metadata: dict[str, Any]  # config.json without the network: training step, calibration…


def store_calibration(folder: Path, key: str, entry: object) -> None:
    """Write ``entry`` as ``calibration[key]`` into the folder's config.json, the rest kept."""
    path = folder / CONFIG_FILE
    config = json.loads(path.read_text())
    config.setdefault("calibration", {})[key] = entry
    path.write_text(json.dumps(config, indent=2) + "\n")


def network_config(raw: dict[str, Any]) -> NetworkConfig:
    known = {f.name for f in fields(NetworkConfig)}
    unknown = set(raw) - known
    if unknown:
        raise ModelLoadError(f"config has unknown network fields {sorted(unknown)}")
    return NetworkConfig(**raw)


def read_folder(folder: Path) -> FolderContents:
    """The config and tokenizer of a model folder, checked against each other."""
    for name in (WEIGHTS_FILE, CONFIG_FILE, TOKENIZER_FILE):
        if not (folder / name).is_file():
            raise ModelLoadError(f"model file {folder / name} is missing")
    try:
        raw = json.loads((folder / CONFIG_FILE).read_text())
        config = network_config(raw["network"])
        tokenizer = CodeTokenizer.load(folder / TOKENIZER_FILE)
    except ModelLoadError:
        raise
    except Exception as exc:  # corrupt JSON, a bad tokenizer file
        raise ModelLoadError(f"cannot read the model in {folder}: {exc}") from exc
    if tokenizer.vocab_size != config.vocab_size:
        raise ModelLoadError(
            f"the tokenizer in {folder} has {tokenizer.vocab_size} tokens but the network expects "
            f"{config.vocab_size}"
        )
    return FolderContents(config, tokenizer, {k: v for k, v in raw.items() if k != "network"})
