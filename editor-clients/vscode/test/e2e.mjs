// STATUS: does not pass yet, and CI does not run it. Everything up to the first keystroke
// works (code-server starts with the .vsix, the extension starts `redraft serve`, which gets
// initialize and didOpen), but after typing, the extension sees the document change while
// vscode-languageclient sends no didChange and no inlineCompletion request to the server —
// not understood yet. Run by hand: KEEP=1 keeps the user-data dir (logs) of a failed run.
//
// End to end in a real VS Code: code-server with the packaged .vsix, driven by Chromium
// through playwright-core, against the real `redraft serve`.
//
//   CODE_SERVER=…/bin/code-server REDRAFT_CMD=…/redraft VSIX=redraft.vsix node test/e2e.mjs
//
// 1. Ghost text: in a Python file, type the end of `while True`, wait for the inline
//    suggestion in the DOM, accept it with Tab, save, and compare the file on disk.
// 2. Next edit: in a JavaScript file (ghost text off there), rename a parameter; the
//    status bar announces the proposal; Tab jumps to it, Tab accepts it; the file on disk
//    has the rename at its use, and the server counted the accept.
// Screenshots go to $ARTIFACTS (default test-artifacts/). code-server and every process it
// started (extension host, the Redraft server) are stopped at the end.

import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { chromium } from "playwright-core";

const here = path.dirname(new URL(import.meta.url).pathname);
const codeServer = required("CODE_SERVER");
const redraft = required("REDRAFT_CMD");
const vsix = path.resolve(process.env.VSIX ?? path.join(here, "..", "redraft.vsix"));
const artifacts = path.resolve(process.env.ARTIFACTS ?? path.join(here, "..", "test-artifacts"));
const browserPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const WAIT_MS = 90_000; // the model shares two cores with whatever else runs

function required(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`set ${name}`);
  }
  return value;
}

function log(message) {
  process.stdout.write(`e2e: ${message}\n`);
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

async function waitFor(check, what, timeoutMs = WAIT_MS) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await check();
      if (last) {
        return last;
      }
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what} (last: ${String(last)})`);
}

// Every process whose environment carries this run's marker: code-server's children may
// leave its process group, the marker finds them anyway.
function processesWithMarker(marker) {
  const found = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) {
      continue;
    }
    try {
      if (fs.readFileSync(`/proc/${entry}/environ`, "latin1").includes(marker)) {
        found.push(Number(entry));
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

async function stopAll(child, marker) {
  for (const signal of ["SIGTERM", "SIGKILL"]) {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
    for (const pid of processesWithMarker(marker)) {
      try {
        process.kill(pid, signal);
      } catch {
        // already gone
      }
    }
    const gone = await waitFor(async () => processesWithMarker(marker).length === 0, "processes to exit", 5_000).catch(
      () => false,
    );
    if (gone) {
      return;
    }
  }
}

function setUp() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "redraft-vscode-"));
  const dirs = {
    root,
    userData: path.join(root, "user-data"),
    extensions: path.join(root, "extensions"),
    workspace: path.join(root, "workspace"),
    state: path.join(root, "state"),
  };
  for (const dir of Object.values(dirs)) {
    fs.mkdirSync(dir, { recursive: true });
  }
  fs.mkdirSync(path.join(dirs.userData, "User"), { recursive: true });
  fs.writeFileSync(
    path.join(dirs.userData, "User", "settings.json"),
    JSON.stringify(
      {
        "files.hotExit": "off",
        "workbench.startupEditor": "none",
        "security.workspace.trust.enabled": false,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoUpdate": false,
        "extensions.autoCheckUpdates": false,
        "workbench.tips.enabled": false,
        "editor.quickSuggestions": { other: false, comments: false, strings: false },
        "editor.suggestOnTriggerCharacters": false,
        "editor.autoClosingBrackets": "never",
        "editor.inlineSuggest.enabled": true,
        "editor.editContext": false,
        "[javascript]": { "editor.inlineSuggest.enabled": false },
        "redraft.serverPath": redraft,
        "redraft.languages": ["python", "javascript"],
        "redraft.confidenceThreshold": 0,
        "redraft.requestTimeoutMs": 20000,
        "redraft.nextEdit.debounceMs": 200,
      },
      null,
      2,
    ),
  );
  fs.writeFileSync(path.join(dirs.workspace, "ghost.py"), "def check(value):\n    while Tru\n");
  fs.writeFileSync(
    path.join(dirs.workspace, "rename.js"),
    "function area(width, height) {\n  // café ☕\n  const half = width / 2;\n  return half * height;\n}\n",
  );
  return dirs;
}

async function openFile(page, name) {
  await page.keyboard.press("Control+P");
  await page.locator(".quick-input-widget input").waitFor({ state: "visible", timeout: WAIT_MS });
  await page.keyboard.type(name);
  await waitFor(
    async () => (await page.locator(".quick-input-list .monaco-list-row").count()) > 0,
    `quick open to list ${name}`,
  );
  await page.keyboard.press("Enter");
  await waitFor(
    async () => (await page.locator(".tab.active").first().textContent())?.includes(name),
    `${name} to open`,
  );
  await page.locator(".monaco-editor .view-lines").first().click();
}

async function statusText(page) {
  const items = await page.locator(".statusbar-item").allTextContents();
  return items.find((text) => text.includes("Redraft")) ?? "";
}

async function main() {
  fs.mkdirSync(artifacts, { recursive: true });
  const dirs = setUp();
  const marker = `REDRAFT_E2E_MARKER=${path.basename(dirs.root)}`;
  const env = {
    ...process.env,
    XDG_STATE_HOME: dirs.state,
    REDRAFT_E2E_MARKER: path.basename(dirs.root),
  };
  const common = ["--user-data-dir", dirs.userData, "--extensions-dir", dirs.extensions];
  const config = path.join(dirs.root, "config.yaml");
  fs.writeFileSync(config, "auth: none\ncert: false\n");
  const installed = spawnSync(codeServer, ["--config", config, ...common, "--install-extension", vsix], {
    env,
    encoding: "utf8",
  });
  if (installed.status !== 0) {
    throw new Error(`installing the .vsix failed:\n${installed.stdout}\n${installed.stderr}`);
  }
  log("extension installed");
  const port = await freePort();
  fs.writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const server = spawn(
    codeServer,
    [
      "--config", config, ...common,
      "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
      "--disable-getting-started-override", dirs.workspace,
    ],
    { env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  let serverLog = "";
  server.stdout.on("data", (chunk) => (serverLog += chunk));
  server.stderr.on("data", (chunk) => (serverLog += chunk));
  let browser;
  let page;
  try {
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, "code-server to listen");
    browser = await chromium.launch({
      executablePath: browserPath,
      headless: true,
      args: ["--no-sandbox", "--disable-background-networking", "--disable-gpu", "--disable-dev-shm-usage"],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dirs.workspace)}`);
    await page.locator(".monaco-workbench").waitFor({ timeout: WAIT_MS });
    log("workbench loaded");

    // 1. Ghost text.
    await openFile(page, "ghost.py");
    await waitFor(async () => /Redraft/.test(await statusText(page)) && !/sync~spin|starting/.test(await statusText(page)),
      "the extension to start its server");
    await page.keyboard.press("Control+End");
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("End");
    await page.keyboard.type("e");
    const ghost = page.locator(".monaco-editor .ghost-text-decoration, .monaco-editor .ghost-text").first();
    await ghost.waitFor({ state: "visible", timeout: WAIT_MS });
    const shown = (await ghost.textContent()) ?? "";
    await page.screenshot({ path: path.join(artifacts, "vscode-ghost-text.png") });
    log(`ghost text shown: ${JSON.stringify(shown)}`);
    await page.keyboard.press("Tab");
    await page.keyboard.press("Control+S");
    const ghostFile = path.join(dirs.workspace, "ghost.py");
    const expected = `def check(value):\n    while True${shown}\n`;
    await waitFor(async () => fs.readFileSync(ghostFile, "utf8") === expected, `ghost.py to hold ${JSON.stringify(expected)}`);
    log("ghost text accepted");

    // 2. Next edit.
    await openFile(page, "rename.js");
    await page.keyboard.press("Control+G");
    await page.keyboard.type("1:15");
    await page.keyboard.press("Enter");
    await page.keyboard.press("Control+Shift+Right"); // selects `width`
    await page.keyboard.type("w");
    const announced = await waitFor(async () => {
      const text = await statusText(page);
      return /next edit: line 3/.test(text) && text;
    }, "the next-edit proposal in the status bar");
    log(`status bar: ${JSON.stringify(announced)}`);
    await page.screenshot({ path: path.join(artifacts, "vscode-next-edit.png") });
    await page.keyboard.press("Tab"); // jump there
    await page.keyboard.press("Tab"); // accept
    await page.keyboard.press("Control+S");
    const renameFile = path.join(dirs.workspace, "rename.js");
    const renamed = "function area(w, height) {\n  // café ☕\n  const half = w / 2;\n  return half * height;\n}\n";
    await waitFor(async () => fs.readFileSync(renameFile, "utf8") === renamed, "rename.js to hold the accepted edit");
    const statsFile = path.join(dirs.state, "redraft", "stats.json");
    await waitFor(
      async () => JSON.parse(fs.readFileSync(statsFile, "utf8")).next_edit.accepted === 1,
      "the server to count the accepted next edit",
    );
    log("next edit accepted");
  } catch (error) {
    log(`FAILED: ${error instanceof Error ? error.stack : String(error)}`);
    if (page) {
      await page.screenshot({ path: path.join(artifacts, "vscode-failure.png") }).catch(() => undefined);
      log(`status bar: ${JSON.stringify(await statusText(page).catch(() => ""))}`);
    }
    log(`code-server output (tail):\n${serverLog.slice(-3000)}`);
    process.exitCode = 1;
  } finally {
    if (browser) {
      await browser.close().catch(() => undefined);
    }
    await stopAll(server, marker);
    const left = processesWithMarker(marker);
    if (left.length > 0) {
      log(`processes still running: ${left.join(", ")}`);
      process.exitCode = 1;
    }
    if (process.exitCode === 1 && process.env.KEEP) {
      log(`kept ${dirs.root}`);
    } else {
      fs.rmSync(dirs.root, { recursive: true, force: true });
    }
  }
  if (process.exitCode !== 1) {
    log("all passed");
  }
}

await main();
