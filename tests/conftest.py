import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, "-m", "lsp_server", "serve"]


@pytest.fixture
def repo_root() -> Path:
    return ROOT
