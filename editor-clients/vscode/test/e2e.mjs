// End to end in a real VS Code: code-server with the packaged .vsix, driven by Debian's
// Chromium through playwright-core, against the real `redraft serve`.
//
//   CODE_SERVER=…/.bin/code-server REDRAFT_CMD=…/redraft [VSIX=redraft.vsix] node test/e2e.mjs
//
// 1. Ghost text: in a Python file, put the cursor at the end of `while Tru` (the extension
//    announces it with redraft/cursor once it rests), finish typing `while True`, wait for the inline
//    suggestion in the DOM, accept it with Tab, save; the file on disk has it, and the
//    server counted the accept (VS Code ran the item's `redraft.accepted` command).
// 2. A setting changes in the Settings editor (ghost text off: confidence threshold 1);
//    the extension sends it with didChangeConfiguration.
// 3. Next edit: rename a parameter in a `def`; the status bar announces the proposal on
//    the next line; Tab jumps there, Tab accepts. Rename the other parameter; its proposal
//    is dismissed with Esc. The file on disk and the server's accept/reject counts agree.
// Screenshots go to $ARTIFACTS (default test-artifacts/). code-server and every process it
// started (extension host, the Redraft server) are stopped at the end. KEEP=1 keeps the
// user-data dir (VS Code's and the extension's logs) of a failed run.

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

const GHOST_PY = "def check(value):\n    while Tru\n";
// An astral character before a use: the server's UTF-16 columns must land on `width`.
const RENAME_PY = [
  "def area(width, height):",
  '    label, half = "𝛑 ☕", width / 2',
  "    return half * height, label",
  "",
  "",
  "def scale(factor, values):",
  "    return [factor * value for value in values]",
  "",
].join("\n");
const RENAMED_PY = RENAME_PY.replace("area(width", "area(w").replace("width / 2", "w / 2").replace("scale(factor", "scale(f");

function required(name) {
  const value = process.env[name];
  if (!value) {
    process.stderr.write(`e2e: set ${name}\n`);
    process.exit(2);
  }
  return value;
}

// Every line prefixed, so that a multi-line dump (editor text, logs) survives the test's filter.
function log(message) {
  process.stdout.write(String(message).split("\n").map((line) => `e2e: ${line}\n`).join(""));
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

// Every process whose environment carries this run's marker: children that leave
// code-server's process group (the extension host's language server) are found anyway.
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

function writeSettings(dirs) {
  const settings = {
    "files.hotExit": "off",
    "workbench.startupEditor": "none",
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoUpdate": false,
    "extensions.autoCheckUpdates": false,
    "workbench.tips.enabled": false,
    "chat.disableAIFeatures": true,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "editor.quickSuggestions": { other: false, comments: false, strings: false },
    "editor.suggestOnTriggerCharacters": false,
    "editor.autoClosingBrackets": "never",
    "editor.inlineSuggest.enabled": true,
    "redraft.serverPath": redraft,
    "redraft.confidenceThreshold": 0,
    "redraft.nextEditConfidenceThreshold": 0.5,
    "redraft.requestTimeoutMs": 20000,
    "redraft.nextEdit.debounceMs": 200,
  };
  fs.writeFileSync(path.join(dirs.userData, "User", "settings.json"), JSON.stringify(settings, null, 2));
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
  writeSettings(dirs);
  fs.writeFileSync(path.join(dirs.workspace, "ghost.py"), GHOST_PY);
  fs.writeFileSync(path.join(dirs.workspace, "rename.py"), RENAME_PY);
  return dirs;
}

async function openFile(page, name) {
  // A click in the Explorer: quick open (Ctrl+P) sometimes loses the keystroke to the editor.
  await page.locator(".explorer-folders-view .monaco-list-row", { hasText: name }).first().click();
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

// The editor's visible text (VS Code draws spaces as no-break spaces).
async function editorText(page) {
  const lines = await page.locator(".monaco-editor .view-lines .view-line").allTextContents();
  return lines.map((line) => line.replace(/\u00a0/g, " ")).join("\n");
}

// The cursor's place as the status bar shows it: "Ln 2, Col 14".
async function cursorPlace(page) {
  const items = await page.locator(".statusbar-item").allTextContents();
  return items.map((text) => /Ln \d+, Col \d+/.exec(text)?.[0]).find((place) => place);
}

async function cursorLine(page) {
  const match = /Ln (\d+)/.exec((await cursorPlace(page)) ?? "");
  return match ? Number(match[1]) : undefined;
}

function readStats(dirs) {
  return JSON.parse(fs.readFileSync(path.join(dirs.state, "redraft", "stats.json"), "utf8"));
}

function extensionLog(dirs) {
  const logs = path.join(dirs.userData, "logs");
  const found = fs.readdirSync(logs, { recursive: true }).filter((name) => String(name).endsWith("Redraft.log"));
  return found.map((name) => fs.readFileSync(path.join(logs, String(name)), "utf8")).join("\n");
}

async function ghostText(page, dirs) {
  await openFile(page, "ghost.py");
  // Keystrokes before the server is up would reach it inside didOpen, with no request.
  const ready = await waitFor(async () => {
    const text = await statusText(page);
    return /Redraft/.test(text) && !/starting/.test(text) && text;
  }, "the extension to start its server");
  log(`status bar: ${JSON.stringify(ready)}`);
  // To the end of `while Tru`; keys sent while the editor settles can be lost, so again until
  // the status bar shows the cursor there.
  await waitFor(async () => {
    await page.keyboard.press("Control+End");
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("End");
    return (await waitFor(async () => (await cursorPlace(page)) === "Ln 2, Col 14", "", 2_000).catch(() => false));
  }, "the cursor to reach the end of `while Tru`");
  log(`cursor at ${await cursorPlace(page)}`);
  // Resting there, the cursor is announced (redraft/cursor), and the server prepares the place.
  await waitFor(async () => /redraft\/cursor: Ln 2, Col 14\b/.test(extensionLog(dirs)),
    "the extension to tell the server where the cursor rests");
  log("cursor announced");
  await page.keyboard.type("e");
  const ghost = page.locator(".monaco-editor .ghost-text-decoration, .monaco-editor .ghost-text").first();
  await ghost.waitFor({ state: "visible", timeout: WAIT_MS });
  const shown = (await ghost.textContent()) ?? "";
  await page.screenshot({ path: path.join(artifacts, "vscode-ghost-text.png") });
  log(`ghost text shown: ${JSON.stringify(shown)}`);
  if (shown.trim() === "") {
    throw new Error("the ghost text is empty");
  }
  await page.keyboard.press("Tab");
  const expected = `def check(value):\n    while True${shown}\n`;
  await waitFor(async () => (await editorText(page)).includes(`while True${shown}`), "the editor to show the accepted text");
  await page.keyboard.press("Control+S");
  const file = path.join(dirs.workspace, "ghost.py");
  await waitFor(async () => fs.readFileSync(file, "utf8") === expected, `ghost.py to hold ${JSON.stringify(expected)}`);
  await waitFor(async () => readStats(dirs).inline_completion.accepted === 1, "the server to count the accepted ghost text");
  log("ghost text accepted");
}

async function settingsReachTheServer(page, dirs) {
  // Through the Settings editor, as a user would.
  await page.keyboard.press("Control+,");
  await page.locator(".settings-editor").waitFor({ state: "visible", timeout: WAIT_MS });
  await page.locator(".settings-editor .suggest-input-container .monaco-editor").first().click();
  await page.keyboard.type("@id:redraft.confidenceThreshold");
  const input = page.locator(".settings-editor .setting-item-number input").first();
  await waitFor(async () => (await page.locator(".settings-editor .setting-item-number").count()) === 1,
    "the settings editor to list the one setting");
  // The list re-renders while the search settles and can drop the first keystrokes: retry.
  const sent = async () => /settings sent to the server: .*"confidenceThreshold":1\b/.test(extensionLog(dirs));
  for (let attempt = 1; !(await sent()); attempt++) {
    await input.click();
    await page.keyboard.press("Control+A");
    await page.keyboard.type("1");
    const ok = await waitFor(sent, "the changed setting to be sent to the server", 10_000).catch((error) => {
      if (attempt === 3) {
        throw error;
      }
      return false;
    });
    if (ok) {
      break;
    }
  }
  await page.keyboard.press("Control+W");
  log("changed setting sent");
}

// Selects the word at line:column (1-based) through Go to Line and types `name` over it.
// Keystrokes sent before the Go to Line box is open would land in the file, so each step
// waits for the screen to show the previous one, and the box is asked for again if it
// didn't open.
async function renameInDef(page, line, column, name, expectedLine) {
  const box = page.locator(".quick-input-widget");
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press("Control+G");
    const opened = await box.waitFor({ state: "visible", timeout: 5_000 }).then(() => true, () => false);
    if (opened) {
      break;
    }
    if (attempt === 3) {
      throw new Error("Go to Line (Ctrl+G) did not open");
    }
  }
  await page.keyboard.type(`${line}:${column}`);
  await page.keyboard.press("Enter");
  await box.waitFor({ state: "hidden", timeout: WAIT_MS });
  await waitFor(async () => (await cursorLine(page)) === line, `the cursor to reach line ${line}`);
  await page.keyboard.press("Control+Shift+ArrowRight"); // selects the parameter
  await page.keyboard.type(name);
  await waitFor(async () => (await editorText(page)).includes(expectedLine), `the editor to show ${JSON.stringify(expectedLine)}`);
}

async function nextEdit(page, dirs) {
  await openFile(page, "rename.py");
  await renameInDef(page, 1, 10, "w", "def area(w, height):"); // width → w
  const announced = await waitFor(async () => {
    const text = await statusText(page);
    return /next edit: line 2\b/.test(text) && text;
  }, "the next-edit proposal on line 2 in the status bar");
  log(`status bar: ${JSON.stringify(announced)}`);
  await page.screenshot({ path: path.join(artifacts, "vscode-next-edit.png") });
  await page.keyboard.press("Tab"); // the proposal is away from the cursor: jump
  await waitFor(async () => (await cursorLine(page)) === 2, "the cursor to jump to line 2");
  await page.keyboard.press("Tab"); // at the proposal: accept
  await waitFor(async () => (await editorText(page)).includes('"𝛑 ☕", w / 2'), "the editor to show the accepted edit");
  log("next edit accepted");

  // In another function: right after the accept, a change on a line next to it would merge
  // with it into one edit the server can't read as a rename.
  await renameInDef(page, 6, 11, "f", "def scale(f, values):"); // factor → f
  await waitFor(async () => /next edit: line 7\b/.test(await statusText(page)), "the proposal on line 7");
  await page.keyboard.press("Escape");
  await waitFor(async () => !/next edit/.test(await statusText(page)), "the proposal to be dismissed");
  log("next edit dismissed");

  await page.keyboard.press("Control+S");
  const file = path.join(dirs.workspace, "rename.py");
  await waitFor(async () => fs.readFileSync(file, "utf8") === RENAMED_PY, "rename.py to hold the accepted edit only");
  await waitFor(async () => {
    const counts = readStats(dirs).next_edit;
    return counts.accepted === 1 && counts.rejected === 1;
  }, "the server to count one accepted and one dismissed next edit");
}

async function main() {
  fs.mkdirSync(artifacts, { recursive: true });
  const dirs = setUp();
  const marker = `REDRAFT_E2E_MARKER=${path.basename(dirs.root)}`;
  const env = {
    ...process.env,
    XDG_STATE_HOME: dirs.state, // the server's accept/reject counts, read back below
    REDRAFT_E2E_MARKER: path.basename(dirs.root),
  };
  const common = ["--user-data-dir", dirs.userData, "--extensions-dir", dirs.extensions];
  const config = path.join(dirs.root, "config.yaml");
  fs.writeFileSync(config, "auth: none\ncert: false\n");
  const started = Date.now();
  const installed = spawnSync(codeServer, ["--config", config, ...common, "--install-extension", vsix], {
    env,
    encoding: "utf8",
    timeout: WAIT_MS,
  });
  if (installed.status !== 0) {
    log(`installing the .vsix failed:\n${installed.stdout}\n${installed.stderr}`);
    fs.rmSync(dirs.root, { recursive: true, force: true });
    process.exitCode = 1;
    return;
  }
  log(`extension installed (${Date.now() - started} ms)`);
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
    log(`workbench loaded (${Date.now() - started} ms)`);
    await ghostText(page, dirs);
    await settingsReachTheServer(page, dirs);
    await nextEdit(page, dirs);
    log(`done in ${Date.now() - started} ms`);
  } catch (error) {
    log(`FAILED: ${error instanceof Error ? error.stack : String(error)}`);
    if (page) {
      await page.screenshot({ path: path.join(artifacts, "vscode-failure.png") }).catch(() => undefined);
      log(`status bar: ${JSON.stringify(await statusText(page).catch(() => ""))}`);
      log(`editor text:\n${await editorText(page).catch(() => "")}`);
    }
    log(`extension log (tail):\n${(() => { try { return extensionLog(dirs).slice(-3000); } catch { return ""; } })()}`);
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
