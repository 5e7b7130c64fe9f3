"""A serve-only install: `pip install .` alone, in a fresh venv, serves ghost text and runs the
demo without ever importing torch or matplotlib (the `train` extra's), and the wheel that
`python -m build` makes carries the shipped model.

The venv's interpreter runs from a folder outside the checkout, so what it imports is what
was installed, model weights included; a `sitecustomize` records every attempt to import
the training stack (none is installed there, so an attempt would fail anyway, but a caught
ImportError could hide it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from benchmarks.lsp_client import LspClient

CHECKOUT = Path(__file__).resolve().parent.parent
# What the install needs of the checkout: the packages, the metadata and the readme.
SOURCES = ("lsp_server", "model", "benchmarks", "pyproject.toml", "README.md")
TRAINING_STACK = ("torch", "matplotlib")

RECORD_TRAINING_IMPORTS = f"""
import importlib.abc, os, sys

class _TrainingStackWatch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {set(TRAINING_STACK)!r}:
            with open(os.environ["REDRAFT_TRAINING_IMPORTS"], "a") as record:
                record.write(name + "\\n")
        return None

sys.meta_path.insert(0, _TrainingStackWatch())
"""


def _copy_sources(into: Path) -> Path:
    source = into / "redraft"
    source.mkdir()
    for name in SOURCES:
        path = CHECKOUT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(path, source / name)
    return source


@pytest.fixture(scope="module")
def lean_venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """(the venv, a folder outside the checkout to run in, the environment to run with)."""
    root = tmp_path_factory.mktemp("lean")
    source = _copy_sources(root)
    environment = root / "venv"
    venv.EnvBuilder(with_pip=True).create(environment)
    installed = subprocess.run([str(environment / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
                                str(source)], capture_output=True, text=True, timeout=900)
    assert installed.returncode == 0, installed.stderr[-3000:]
    watch = root / "watch"
    watch.mkdir()
    (watch / "sitecustomize.py").write_text(RECORD_TRAINING_IMPORTS)
    record = root / "training_imports.txt"
    record.touch()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(PYTHONPATH=str(watch), REDRAFT_TRAINING_IMPORTS=str(record), HOME=str(root))
    outside = root / "elsewhere"
    outside.mkdir()
    return environment, outside, env


def _training_imports(env: dict[str, str]) -> list[str]:
    return Path(env["REDRAFT_TRAINING_IMPORTS"]).read_text().split()


def _forget_training_imports(env: dict[str, str]) -> None:
    Path(env["REDRAFT_TRAINING_IMPORTS"]).write_text("")


def test_a_serve_only_install_has_no_training_stack(lean_venv: tuple[Path, Path, dict[str, str]]) -> None:
    environment, outside, env = lean_venv
    probe = "import importlib.util, json; print(json.dumps([importlib.util.find_spec(n) is None for n in %r]))"
    unwatched = {key: value for key, value in env.items() if key != "PYTHONPATH"}  # the probe itself looks
    found = subprocess.run([str(environment / "bin" / "python"), "-c", probe % (TRAINING_STACK,)], cwd=outside,
                           env=unwatched, capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(found.stdout) == [True] * len(TRAINING_STACK)


def test_the_demo_runs_from_a_serve_only_install_without_torch(
    lean_venv: tuple[Path, Path, dict[str, str]],
) -> None:
    environment, outside, env = lean_venv
    _forget_training_imports(env)
    demo = subprocess.run([str(environment / "bin" / "redraft"), "demo"], cwd=outside, env=env,
                          capture_output=True, text=True, timeout=300)
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert "confidence" in demo.stdout
    assert _training_imports(env) == []


def test_a_training_command_without_the_extra_says_which_extra_to_install(
    lean_venv: tuple[Path, Path, dict[str, str]],
) -> None:
    environment, outside, env = lean_venv
    train = subprocess.run([str(environment / "bin" / "redraft"), "train", "--minutes", "1"], cwd=outside, env=env,
                           capture_output=True, text=True, timeout=120)
    assert train.returncode == 2
    assert train.stdout == ""
    assert train.stderr.strip().splitlines() == [train.stderr.strip()]
    assert "redraft[train]" in train.stderr


@pytest.mark.asyncio
async def test_a_serve_only_install_answers_an_inline_completion_without_torch(
    lean_venv: tuple[Path, Path, dict[str, str]],
) -> None:
    environment, outside, env = lean_venv
    _forget_training_imports(env)
    module = outside / "shapes.py"
    module.write_text("def area(width, height):\n    return width * \n")
    command = [str(environment / "bin" / "python"), "-m", "lsp_server", "serve"]
    async with LspClient(command, timeout=120, cwd=outside, env=env) as client:
        await client.initialize({"confidenceThreshold": 0.0, "requestTimeoutMs": 20_000})
        await client.initialized()
        await client.did_open(module.as_uri(), module.read_text())
        answer = await client.inline_completion(module.as_uri(), 1, len("    return width * "), trigger_kind=1)
        await client.shutdown()
        await client.exit()
    items = answer["items"] if isinstance(answer, dict) else answer
    assert items, "the server answered with no suggestion at threshold 0"
    assert isinstance(items[0]["insertText"], str) and items[0]["insertText"]
    assert _training_imports(env) == []


def test_the_built_wheel_carries_the_shipped_model(tmp_path: Path) -> None:
    source = _copy_sources(tmp_path)
    built = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "dist"),
                            str(source)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("redraft-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"model/weights/{path.name}" for path in (CHECKOUT / "model" / "weights").iterdir()}
    assert shipped <= names
    assert "lsp_server/server.py" in names and "benchmarks/lsp_client.py" in names
