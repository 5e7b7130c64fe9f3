"""Averaging the weights of models trained on from one another (a "model soup").

Each session warm-starts a run from the last shipped weights, climbs back to its peak
learning rate and cools down again, so consecutive runs end at different points of one
basin. Their uniform mean sits nearer the basin's floor than any of them (stochastic
weight averaging, Izmailov et al. 2018; model soups, Wortsman et al. 2022): measured here,
runs ``v25`` + ``v26`` averaged beat both on every held-out loss.

Only models that share a start can be averaged: two unrelated networks have permuted
hidden units, and their mean is noise. ``MAX_SPREAD`` refuses those with a clear message.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch

from model.checkpoint import LoadedModel, load_model, save_model
from model.fim.phrase_table import PHRASES_FILE
from model.model_folder import TOKENIZER_FILE

log = logging.getLogger(__name__)

# Largest relative distance ‖w − mean‖ / ‖mean‖ of any one model from the mean. Two or three
# consecutive sessions' runs measured 0.02–0.04 from their mean (0.05–0.09 from each other);
# runs of two branches of one lineage are ~0.16 from each other, an unrelated network of the
# same shape ~1.4.
MAX_SPREAD = 0.5


@dataclass(frozen=True)
class Averaged:
    model: LoadedModel
    spreads: list[float]  # each folder's relative distance from the mean, in order


def _flat(state: dict[str, torch.Tensor]) -> torch.Tensor:
    return torch.cat([state[name].flatten() for name in sorted(state)])


def average_models(folders: list[Path]) -> Averaged:
    """The uniform mean of the folders' weights. The last folder's config (step, tokens,
    calibration) is kept: calibration measured for other weights is a starting point only,
    so run ``redraft calibrate`` on the result."""
    if len(folders) < 2:
        raise ValueError("averaging needs at least two model folders")
    loaded = [load_model(folder) for folder in folders]
    first = loaded[0]
    tokenizer_text = (folders[0] / TOKENIZER_FILE).read_text()
    for folder, model in zip(folders[1:], loaded[1:], strict=True):
        if model.network.config != first.network.config:
            raise ValueError(f"{folder} has a different network ({model.network.config}) from {folders[0]} "
                             f"({first.network.config}); only models of one shape can be averaged")
        if (folder / TOKENIZER_FILE).read_text() != tokenizer_text:
            raise ValueError(f"{folder} has a different tokenizer from {folders[0]}")
    states = [model.network.state_dict() for model in loaded]
    mean = {name: torch.stack([state[name].float() for state in states]).mean(0) for name in states[0]}
    centre = _flat(mean)
    spreads = [float((_flat(state) - centre).norm() / centre.norm()) for state in states]
    for folder, spread in zip(folders, spreads, strict=True):
        if spread > MAX_SPREAD:
            raise ValueError(f"{folder} is far from the others (relative distance {spread:.2f} from their mean, "
                             f"more than {MAX_SPREAD}): average only runs trained on from one another's weights")
    last = loaded[-1]
    last.network.load_state_dict(mean)
    metadata = dict(last.metadata)
    metadata["averaged_from"] = [str(folder) for folder in folders]
    return Averaged(LoadedModel(last.network, last.tokenizer, metadata), spreads)


def write_average(folders: list[Path], target: Path) -> Averaged:
    """``average_models`` saved as fp16 into ``target`` (as ``export`` saves), with the last
    folder's phrase table, which depends on the corpus, not on the weights."""
    if target.resolve() in {folder.resolve() for folder in folders}:
        raise ValueError(f"write the average to a new folder, not to one of its inputs ({target})")
    averaged = average_models(folders)
    save_model(averaged.model.network, averaged.model.tokenizer, target, averaged.model.metadata,
               dtype=torch.float16)
    phrases = folders[-1] / PHRASES_FILE
    if phrases.is_file():
        shutil.copyfile(phrases, target / PHRASES_FILE)
    log.info("averaged %s → %s", ", ".join(map(str, folders)), target)
    return averaged
