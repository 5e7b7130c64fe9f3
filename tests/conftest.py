import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, "-m", "lsp_server", "serve"]


@pytest.fixture
def repo_root() -> Path:
    return ROOT


@pytest.fixture
def tokenizer_free_network() -> object:
    """A served torch network of the shipped tokenizer's vocabulary, tiny and random."""
    import torch

    from model.architecture import NetworkConfig
    from model.network import DiffusionEditor
    from model.runtime.torch_serving import TorchServing

    torch.manual_seed(0)
    from model.model_folder import SHIPPED_DIR
    from model.tokenizer import CodeTokenizer

    vocab = CodeTokenizer.load(SHIPPED_DIR / "tokenizer.json").vocab_size
    editor = DiffusionEditor(NetworkConfig(vocab_size=vocab, n_layer=1, n_head=2, d_model=32, mlp_hidden=48)).eval()
    return TorchServing(editor)


@pytest.fixture
def float_network(monkeypatch: pytest.MonkeyPatch) -> object:
    """The shipped model's served network in float: int8 scales activations per pass, so
    rows added to a pass move the others' distributions; float compares exactly."""
    from model.model_folder import SHIPPED_DIR
    from model.runtime.serving import load_served_model

    monkeypatch.setenv("REDRAFT_INT8", "0")
    return load_served_model(SHIPPED_DIR).network
