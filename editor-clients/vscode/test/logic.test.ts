// The extension's pure logic, run with `node --test out/test/`.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

import {
  announcesCursor,
  ChangeClock,
  Debouncer,
  DEFAULT_LANGUAGES,
  findServer,
  firstNextEdit,
  isCurrent,
  type NextEditItem,
  planNextEdit,
  serverCandidates,
  serverOffers,
  serverOptions,
  statusText,
} from "../src/logic";

const item = (range: NextEditItem["edit"]["range"], newText: string, version: number | null = 4): NextEditItem => ({
  id: "abc",
  textDocument: { uri: "file:///a.py", version },
  edit: { range, newText },
  confidence: 0.55,
});

test("settings become the server's options; explicit settings win over serverOptions", () => {
  const options = serverOptions({
    serverPath: "",
    confidenceThreshold: 0.4,
    nextEditConfidenceThreshold: 0.6,
    requestTimeoutMs: 900,
    serverOptions: { maxSteps: 8, confidenceThreshold: 0.1 },
  });
  assert.deepEqual(options, { maxSteps: 8, confidenceThreshold: 0.4, nextEditConfidenceThreshold: 0.6, requestTimeoutMs: 900 });
});

test("the server is the configured path, else a workspace venv, else PATH", () => {
  assert.deepEqual(serverCandidates(" /opt/redraft ", ["/w"], "/usr/bin"), ["/opt/redraft"]);
  const found = serverCandidates("", ["/w"], ["/usr/bin", "", "/bin"].join(path.delimiter));
  assert.deepEqual(found, [
    "/w/.venv/bin/redraft", "/w/venv/bin/redraft", "/.venv/bin/redraft", "/venv/bin/redraft",
    "/usr/bin/redraft", "/bin/redraft",
  ]);
  // a subfolder of the repository is open: the repository's venv is found above it
  const nested = serverCandidates("", ["/repo/src/pkg"], "");
  assert.deepEqual(nested.slice(0, 6), [
    "/repo/src/pkg/.venv/bin/redraft", "/repo/src/pkg/venv/bin/redraft",
    "/repo/src/.venv/bin/redraft", "/repo/src/venv/bin/redraft",
    "/repo/.venv/bin/redraft", "/repo/venv/bin/redraft",
  ]);
  assert.equal(findServer(found, (p) => p.startsWith("/usr")), "/usr/bin/redraft");
  assert.equal(findServer(found, () => false), undefined);
});

test("only a well-formed first item of a nextEdit answer is used", () => {
  const good = item({ start: { line: 2, character: 1 }, end: { line: 2, character: 4 } }, "x");
  assert.equal(firstNextEdit({ items: [good, { bad: true }] }), good);
  assert.equal(firstNextEdit(null), undefined);
  assert.equal(firstNextEdit({ items: [] }), undefined);
  assert.equal(firstNextEdit({ items: [{ id: "a", edit: { newText: "x" } }] }), undefined);
  assert.equal(firstNextEdit({ items: [{ ...good, edit: { ...good.edit, range: { start: { line: -1, character: 0 }, end: good.edit.range.end } } }] }), undefined);
});

test("a replacement strikes the old text and shows the new after it; Tab jumps when the cursor is elsewhere", () => {
  const replace = item({ start: { line: 5, character: 8 }, end: { line: 5, character: 13 } }, "amount");
  const away = planNextEdit(replace, { line: 0, character: 3 });
  assert.deepEqual(away.deleted, replace.edit.range);
  assert.deepEqual(away.insertAt, { line: 5, character: 13 });
  assert.deepEqual(away.insertedLines, ["amount"]);
  assert.equal(away.awayFromCursor, true);
  assert.equal(planNextEdit(replace, { line: 5, character: 0 }).awayFromCursor, false);
});

test("a pure insertion has nothing to strike; a deletion nothing to show; lines split on any break", () => {
  const insert = planNextEdit(item({ start: { line: 1, character: 0 }, end: { line: 1, character: 0 } }, "a\nb\r\nc"), {
    line: 1,
    character: 0,
  });
  assert.equal(insert.deleted, undefined);
  assert.deepEqual(insert.insertedLines, ["a", "b", "c"]);
  const remove = planNextEdit(item({ start: { line: 1, character: 0 }, end: { line: 2, character: 0 } }, ""), {
    line: 9,
    character: 0,
  });
  assert.deepEqual(remove.insertedLines, []);
});

test("an answer about another version of the document is stale", () => {
  const edit = item({ start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, "x", 7);
  assert.equal(isCurrent(edit, 7), true);
  assert.equal(isCurrent(edit, 8), false);
  assert.equal(isCurrent(item(edit.edit.range, "x", null), 8), true);
});

test("the status bar says the state, the last latency and where the next edit is", () => {
  assert.equal(statusText("ready", 41.6, undefined).text, "$(sparkle) Redraft 42 ms");
  assert.equal(statusText("ready", undefined, 9).text, "$(sparkle) Redraft · next edit: line 10 (Tab)");
  assert.match(statusText("no-model", undefined, undefined).text, /no model/);
  // the spinner icon is not text: "starting" must be readable without it
  assert.match(statusText("starting", undefined, undefined).text.replace(/\$\([^)]*\)/g, ""), /starting/);
  assert.match(statusText("stopped", undefined, undefined).tooltip, /Restart/);
});

test("the debouncer runs once, after the last schedule", async () => {
  let runs = 0;
  const debouncer = new Debouncer(() => {
    runs += 1;
  });
  debouncer.schedule(30);
  debouncer.schedule(30);
  assert.equal(debouncer.pending, true);
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.equal(runs, 1);
  debouncer.schedule(30);
  debouncer.cancel();
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(runs, 1);
  assert.equal(debouncer.pending, false);
});

test("a caret that comes to rest away from typing is announced, in a served language, when enabled", () => {
  const move = { enabled: true, carets: 1, empty: true, msSinceChange: 5_000, languageId: "python", languages: ["python"] };
  assert.equal(announcesCursor(move), true);
  assert.equal(announcesCursor({ ...move, enabled: false }), false);
  assert.equal(announcesCursor({ ...move, carets: 2 }), false); // several cursors: no one place
  assert.equal(announcesCursor({ ...move, empty: false }), false); // a selection, not a caret
  assert.equal(announcesCursor({ ...move, msSinceChange: 100 }), false); // moved by typing
  assert.equal(announcesCursor({ ...move, languageId: "markdown" }), false);
});

// Compiled to out/test/, run from the extension's folder or not.
const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));

test("by default the server is started for Python, JavaScript and TypeScript, as package.json says", () => {
  assert.deepEqual(DEFAULT_LANGUAGES, ["python", "javascript", "javascriptreact", "typescript", "typescriptreact"]);
  assert.deepEqual(manifest.contributes.configuration.properties["redraft.languages"].default, DEFAULT_LANGUAGES);
});

test("opening a file of any default language activates the extension", () => {
  for (const language of DEFAULT_LANGUAGES) {
    assert.ok(manifest.activationEvents.includes(`onLanguage:${language}`), language);
  }
});

test("with the default languages a caret resting in a .ts or .js file is announced; a narrowed list leaves them out", () => {
  const move = { enabled: true, carets: 1, empty: true, msSinceChange: 5_000, languages: [...DEFAULT_LANGUAGES] };
  for (const languageId of ["typescript", "typescriptreact", "javascript", "javascriptreact"]) {
    assert.equal(announcesCursor({ ...move, languageId }), true, languageId);
    assert.equal(announcesCursor({ ...move, languageId, languages: ["python"] }), false, languageId);
  }
});

test("only a change to the document whose cursor moves makes the move look typed", () => {
  const clock = new ChangeClock();
  assert.equal(clock.msSinceChange("file:///a.py", 1_000), Number.POSITIVE_INFINITY); // never changed
  clock.changed("file:///a.py", 1_000);
  assert.equal(clock.msSinceChange("file:///a.py", 1_200), 200);
  clock.changed("output:Redraft", 1_300); // the log growing in a visible Output panel
  assert.equal(clock.msSinceChange("file:///a.py", 1_400), 400);
  assert.equal(clock.msSinceChange("output:Redraft", 1_400), 100);
  assert.equal(clock.msSinceChange("file:///b.py", 1_400), Number.POSITIVE_INFINITY);
  for (let i = 0; i < ChangeClock.CAPACITY; i++) {
    clock.changed(`file:///other${i}.py`, 2_000);
  }
  assert.equal(clock.msSinceChange("file:///a.py", 2_000), Number.POSITIVE_INFINITY); // forgotten, bounded
  assert.equal(clock.msSinceChange("file:///other0.py", 2_100), 100);
});

test("methods beyond LSP are offered only where the initialize result names them", () => {
  const experimental = {
    redraft: {
      requests: ["redraft/nextEdit"],
      notifications: ["redraft/cursor", "redraft/feedback"],
      acceptedCommand: "redraft.accepted",
    },
  };
  assert.equal(serverOffers(experimental, "requests", "redraft/nextEdit"), true);
  assert.equal(serverOffers(experimental, "notifications", "redraft/cursor"), true);
  assert.equal(serverOffers(experimental, "notifications", "redraft/nextEdit"), false); // a request, not a notification
  assert.equal(serverOffers(experimental, "requests", "redraft/other"), false);
  for (const other of [undefined, null, 3, {}, { redraft: null }, { redraft: { requests: "redraft/nextEdit" } }]) {
    assert.equal(serverOffers(other, "requests", "redraft/nextEdit"), false, JSON.stringify(other));
  }
});
