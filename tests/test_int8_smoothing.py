"""Smoothing the down projection for int8 (int8_smoothing.py): the same network, a closer int8 copy."""

from __future__ import annotations

import json.decoder
import logging
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from model.architecture import NetworkConfig
from model.fim.calibrate import int8_distance
from model.formats import ContextBudget, context_ids
from model.model_folder import SCALES_FILE, SHIPPED_DIR, read_folder
from model.network import DiffusionEditor
from model.runtime.int8_smoothing import fold, measure_scales, read_scales, save_scales, scale_name, smoothing_scales
from model.runtime.onnx_network import OrtNetwork
from model.runtime.served_model import ServingNetwork
from model.runtime.serving import load_served_model, read_weights

CONFIG = NetworkConfig(vocab_size=256, n_layer=2, n_head=2, d_model=64, mlp_hidden=96)


def tiny_weights() -> dict[str, np.ndarray]:
    torch.manual_seed(0)
    return {name: tensor.detach().numpy() for name, tensor in DiffusionEditor(CONFIG).state_dict().items()}


def test_folding_scales_in_leaves_the_network_s_function_unchanged() -> None:
    weights = tiny_weights()
    rng = np.random.default_rng(0)
    scales = {scale_name(layer): rng.uniform(0.1, 10.0, CONFIG.mlp_hidden).astype(np.float32)
              for layer in range(CONFIG.n_layer)}
    folded = {name: array.copy() for name, array in weights.items()}
    fold(folded, scales, CONFIG)
    assert not np.allclose(folded["blocks.0.ff.down.weight"], weights["blocks.0.ff.down.weight"])
    context, canvas = rng.integers(0, 256, 20), rng.integers(0, 256, 8)
    plain, smoothed = (OrtNetwork(CONFIG, w, int8=False, threads=1) for w in (weights, folded))
    np.testing.assert_allclose(smoothed.probabilities(canvas, smoothed.encode_context(context)),
                               plain.probabilities(canvas, plain.encode_context(context)), atol=1e-6, rtol=1e-4)


def test_scales_grow_with_the_channel_s_activations_and_shrink_with_its_weights() -> None:
    down = np.ones((4, 3), dtype=np.float32)
    down[:, 2] = 4.0
    scales = smoothing_scales(np.array([1.0, 16.0, 1.0]), down)
    assert scales[1] > scales[0] > scales[2]
    assert scales[1] / scales[0] == pytest.approx(4.0)  # α = 0.5: the square root of the activations' ratio
    assert np.exp(np.log(scales).mean()) == pytest.approx(1.0)


def test_scales_that_don_t_fit_the_network_are_ignored(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    good = {scale_name(layer): np.ones(CONFIG.mlp_hidden, dtype=np.float32) for layer in range(CONFIG.n_layer)}
    save_scales(tmp_path, good)
    assert read_scales(tmp_path, CONFIG) is not None
    assert read_scales(tmp_path, NetworkConfig(vocab_size=256, n_layer=3, n_head=2, d_model=64, mlp_hidden=96)) is None
    save_scales(tmp_path, {**good, scale_name(0): np.zeros(CONFIG.mlp_hidden, dtype=np.float32)})
    with caplog.at_level(logging.WARNING):
        assert read_scales(tmp_path, CONFIG) is None
    assert "don't fit" in caplog.text
    (tmp_path / SCALES_FILE).write_bytes(b"not a tensor file")
    assert read_scales(tmp_path, CONFIG) is None
    assert read_scales(tmp_path / "missing", CONFIG) is None


def _contexts(folder: Path, text: str, count: int) -> list[list[int]]:
    contents = read_folder(folder)
    cuts = np.linspace(len(text) // 4, len(text) - 1, count).astype(int)
    return [context_ids(contents.tokenizer, text[:cut], text[cut:], ContextBudget.of(contents.metadata))
            for cut in cuts]


def test_measured_scales_bring_the_served_int8_network_closer_to_fp32(tmp_path: Path) -> None:
    """On the shipped weights, with scales measured on one file and checked on another
    (standard-library files: our own change with every refactor)."""
    folder = tmp_path / "model"
    shutil.copytree(SHIPPED_DIR, folder)
    (folder / SCALES_FILE).unlink(missing_ok=True)
    scales = measure_scales(folder, _contexts(folder, Path(textwrap.__file__).read_text(), 8))
    contents = read_folder(folder)
    fp32 = OrtNetwork(contents.config, read_weights(folder, contents.config), int8=False)
    unsmoothed = load_served_model(folder).network
    save_scales(folder, scales)
    smoothed = load_served_model(folder).network
    checked = _contexts(folder, Path(json.decoder.__file__).read_text(), 6)

    def distance(network: ServingNetwork) -> float:
        return int8_distance(fp32, network, checked, contents.tokenizer.mask_id)

    assert distance(smoothed) < 0.7 * distance(unsmoothed)


def test_calibration_keeps_the_scales_only_when_they_bring_int8_closer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import model.fim.calibrate
    from model.data.corpus import SourceFile
    from model.fim.calibrate import calibrate_int8

    folder = tmp_path / "model"
    shutil.copytree(SHIPPED_DIR, folder)
    (folder / SCALES_FILE).unlink(missing_ok=True)
    repo = Path(__file__).resolve().parent.parent
    files = [SourceFile("redraft", str(path.relative_to(repo)), path.read_text())
             for path in sorted((repo / "lsp_server").glob("*.py"))]
    monkeypatch.setattr(model.fim.calibrate, "SCALE_CONTEXTS", 6)
    monkeypatch.setattr(model.fim.calibrate, "INT8_REPORT_CONTEXTS", 4)
    report = calibrate_int8(folder, files)
    assert "scales from 6 held-out contexts; on 4 others" in report and "written to" in report
    assert read_scales(folder, read_folder(folder).config) is not None
    # Scales that change nothing (folding made a no-op here) are not kept.
    monkeypatch.setattr(model.fim.calibrate, "fold", lambda weights, scales, config: None)
    assert "no better, so none kept" in calibrate_int8(folder, files)
    assert not (folder / SCALES_FILE).exists()
    assert "nothing written" in calibrate_int8(folder, [])


def test_weights_saved_over_a_folder_drop_the_scales_measured_for_the_old_ones(tmp_path: Path) -> None:
    from model.checkpoint import load_model, save_model

    folder = tmp_path / "model"
    shutil.copytree(SHIPPED_DIR, folder)
    save_scales(folder, {scale_name(layer): np.ones(CONFIG.mlp_hidden, dtype=np.float32) for layer in range(2)})
    loaded = load_model(folder)
    save_model(loaded.network, loaded.tokenizer, folder, loaded.metadata)
    assert not (folder / SCALES_FILE).exists()
