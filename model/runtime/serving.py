"""Loading a model folder for serving, without torch (the room a canvas is denoised in is
``canvas_room.py``, the protocol both runtimes serve ``served_model.py``).

Serving prefers ONNX Runtime (``onnx_network.py``): ~4× faster per denoising pass here
than torch, and the server starts without importing torch (~1.6 s of cold start). Where
ONNX Runtime can't run, torch serves the same protocol (``torch_serving.py``).
``REDRAFT_ONNX=0`` chooses torch; ``REDRAFT_INT8=0`` keeps floating point in either.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from model.architecture import NetworkConfig, weight_shapes
from model.fim.phrase_table import read_phrases
from model.model_folder import SHIPPED_DIR, WEIGHTS_FILE, ModelLoadError, read_folder
from model.runtime.int8_smoothing import fold, read_scales
from model.runtime.served_model import ServedModel

log = logging.getLogger(__name__)

def read_weights(folder: Path, config: NetworkConfig) -> dict[str, np.ndarray]:
    """The weights as float32 arrays, checked against the config."""
    from safetensors.numpy import load_file

    try:
        weights = {name: array.astype(np.float32) for name, array in load_file(str(folder / WEIGHTS_FILE)).items()}
    except Exception as exc:  # a truncated or foreign file
        raise ModelLoadError(f"cannot read the model in {folder}: {exc}") from exc
    expected = weight_shapes(config)
    wrong = sorted(name for name in expected.keys() | weights.keys()
                   if name not in weights or expected.get(name) != weights[name].shape)
    if wrong:
        raise ModelLoadError(f"weights in {folder} do not match its config: {', '.join(wrong[:5])}")
    return weights


def load_served_model(folder: Path = SHIPPED_DIR, threads: int = 2) -> ServedModel:
    """The model as the server runs it (module docstring), its passes on ``threads``
    threads; raises ModelLoadError."""
    int8 = os.environ.get("REDRAFT_INT8", "1") != "0"
    if os.environ.get("REDRAFT_ONNX", "1") != "0":
        contents = read_folder(folder)  # torch's loader reads and checks the folder itself
        weights = read_weights(folder, contents.config)
        scales = read_scales(folder, contents.config) if int8 else None
        if scales is not None:  # the same function, its int8 rounding closer to fp32 (int8_smoothing.py)
            fold(weights, scales, contents.config)
        try:
            from model.runtime.onnx_network import OrtNetwork

            network = OrtNetwork(contents.config, weights, int8=int8, threads=threads)
        except Exception as exc:  # a missing or broken onnxruntime: torch still serves
            log.warning("ONNX Runtime can't serve here (%s); serving with torch", exc)
        else:
            return ServedModel(network, contents.tokenizer, contents.metadata, read_phrases(folder))
    from model.runtime.torch_serving import load_torch_served

    return replace(load_torch_served(folder, int8, threads), phrases=read_phrases(folder))
