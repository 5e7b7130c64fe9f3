"""Server start-up paths: encoding negotiation, bad options, a missing model."""

import asyncio
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.test_server_e2e import SERVER, complete, initialize_params, open_document


async def start(command: list[str]) -> LanguageClient:
    client = await ClientServerConfig(server_command=command).start()
    assert isinstance(client, LanguageClient)
    return client


async def test_utf8_is_negotiated_when_the_client_offers_it() -> None:
    client = await start(SERVER)
    try:
        result = await client.initialize_session(initialize_params(0.5, ["utf-8", "utf-16"]))
        assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf8
        assert result.capabilities.inline_completion_provider
        # Our methods beyond LSP are announced, so a client can tell them apart from a plain server.
        assert result.capabilities.experimental == {"redraft": {
            "requests": ["redraft/nextEdit"],
            "notifications": ["redraft/cursor", "redraft/feedback"],
            "acceptedCommand": "redraft.accepted",
        }}
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_utf16_is_the_default_encoding() -> None:
    client = await start(SERVER)
    try:
        result = await client.initialize_session(initialize_params(0.5))
        assert result.capabilities.position_encoding in (None, types.PositionEncodingKind.Utf16)
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_bad_option_is_reported_and_the_default_is_kept() -> None:
    client = await start(SERVER)
    try:
        params = initialize_params(0.5)
        params.initialization_options = {"confidenceThreshold": "high"}
        await client.initialize_session(params)
        for _ in range(200):
            if client.messages:
                break
            await asyncio.sleep(0.05)
        assert any("confidenceThreshold" in m.message for m in client.messages)
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_missing_model_is_reported_once_and_the_server_keeps_answering(tmp_path: Path) -> None:
    client = await start([sys.executable, "-m", "lsp_server", "--model", str(tmp_path), "serve"])
    try:
        await client.initialize_session(initialize_params(0.0))
        uri = open_document(client, "x = 1\n")
        assert await complete(client, uri, 1, 0) is None
        assert await complete(client, uri, 1, 0) is None
        errors = [m for m in client.messages if m.type == types.MessageType.Error]
        assert len(errors) == 1 and "missing" in errors[0].message
    finally:
        await client.shutdown_session()
        await client.stop()


def _broken_copy(folder: Path, fault: str) -> Path:
    """The shipped model with one fault."""
    import json
    import shutil

    from model.model_folder import SHIPPED_DIR

    shutil.copytree(SHIPPED_DIR, folder, dirs_exist_ok=True)
    if fault == "truncated weights":
        weights = folder / "model.safetensors"
        weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    elif fault == "tokenizer of another size":
        tokenizer = json.loads((folder / "tokenizer.json").read_text())
        vocab = tokenizer["model"]["vocab"]
        for token in sorted(vocab, key=vocab.__getitem__)[-100:]:
            del vocab[token]
        tokenizer["model"]["merges"] = tokenizer["model"]["merges"][:-100]
        (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    elif fault == "config that doesn't match the weights":
        config = json.loads((folder / "config.json").read_text())
        config["network"]["d_model"] = 128
        (folder / "config.json").write_text(json.dumps(config))
    elif fault == "corrupt config":
        (folder / "config.json").write_text("{not json")
    return folder


@pytest.mark.parametrize("fault", ["truncated weights", "tokenizer of another size",
                                   "config that doesn't match the weights", "corrupt config"])
async def test_a_broken_model_is_reported_once_and_the_server_keeps_answering(tmp_path: Path, fault: str) -> None:
    folder = _broken_copy(tmp_path / "model", fault)
    client = await start([sys.executable, "-m", "lsp_server", "--model", str(folder), "serve"])
    try:
        await client.initialize_session(initialize_params(0.0))
        uri = open_document(client, "while True\n")
        assert await complete(client, uri, 0, 10) is None
        assert await complete(client, uri, 0, 10) is None
        errors = [m for m in client.messages if m.type == types.MessageType.Error]
        assert len(errors) == 1 and str(folder) in errors[0].message, errors
    finally:
        await client.shutdown_session()
        await client.stop()


pytestmark = pytest.mark.asyncio
