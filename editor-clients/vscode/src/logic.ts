// The extension's decisions that need no VS Code: which server to run, what to send it,
// how to read and draw its next-edit answers, what the status bar says. Tested with
// `node --test` (test/logic.test.ts).

import * as fs from "node:fs";
import * as path from "node:path";

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface NextEditItem {
  id: string;
  textDocument: { uri: string; version: number | null };
  edit: { range: Range; newText: string };
  confidence: number;
}

/** The language ids the server answers for: `redraft.languages`' default (package.json says
 * the same, and a test holds the two together). */
export const DEFAULT_LANGUAGES: readonly string[] = [
  "python",
  "javascript",
  "javascriptreact",
  "typescript",
  "typescriptreact",
];

/** The settings the extension reads (`redraft.*`), already defaulted by VS Code. */
export interface Settings {
  serverPath: string;
  confidenceThreshold: number;
  nextEditConfidenceThreshold: number;
  requestTimeoutMs: number;
  serverOptions: Record<string, unknown>;
}

/** Server options (`initializationOptions`, and `settings.redraft` on change). */
export function serverOptions(settings: Settings): Record<string, unknown> {
  return {
    ...settings.serverOptions,
    confidenceThreshold: settings.confidenceThreshold,
    nextEditConfidenceThreshold: settings.nextEditConfidenceThreshold,
    requestTimeoutMs: settings.requestTimeoutMs,
  };
}

/**
 * Where to look for `redraft`, in order: the setting; the venv of each workspace folder, then
 * of the folders above it (a subfolder of the repository is open); PATH.
 */
export function serverCandidates(configured: string, workspaceFolders: string[], pathVariable: string): string[] {
  if (configured.trim() !== "") {
    return [configured.trim()];
  }
  const found: string[] = [];
  const ancestors = (folder: string): string[] => {
    const parent = path.dirname(folder);
    return parent === folder ? [folder] : [folder, ...ancestors(parent)];
  };
  for (const folder of workspaceFolders) {
    for (const dir of ancestors(path.resolve(folder))) {
      for (const venv of [".venv", "venv"]) {
        found.push(path.join(dir, venv, "bin", "redraft"));
      }
    }
  }
  for (const dir of pathVariable.split(path.delimiter).filter((d) => d !== "")) {
    found.push(path.join(dir, "redraft"));
  }
  return found;
}

/** The first candidate that is an executable file, or undefined. */
export function findServer(candidates: string[], isExecutable = executableFile): string | undefined {
  return candidates.find((candidate) => isExecutable(candidate));
}

function executableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The top item of a `redraft/nextEdit` answer if it is well formed, else undefined. */
export function firstNextEdit(result: unknown): NextEditItem | undefined {
  if (typeof result !== "object" || result === null) {
    return undefined;
  }
  const items = (result as { items?: unknown }).items;
  if (!Array.isArray(items) || items.length === 0) {
    return undefined;
  }
  const item = items[0] as Partial<NextEditItem>;
  const range = item.edit?.range;
  const valid =
    typeof item.id === "string" &&
    typeof item.edit?.newText === "string" &&
    isPosition(range?.start) &&
    isPosition(range?.end);
  return valid ? (item as NextEditItem) : undefined;
}

function isPosition(value: unknown): value is Position {
  const p = value as Position | undefined;
  return (
    typeof p === "object" && p !== null && Number.isInteger(p.line) && Number.isInteger(p.character) && p.line >= 0
  );
}

/** How a proposal is drawn: what to strike through, what to show as ghost text and where. */
export interface NextEditPlan {
  deleted: Range | undefined; // undefined for a pure insertion
  insertAt: Position; // inserted text goes after the deleted text
  insertedLines: string[]; // [] when nothing is inserted
  awayFromCursor: boolean; // the cursor is not on the edit's lines: Tab jumps first
}

export function planNextEdit(item: NextEditItem, cursor: Position): NextEditPlan {
  const { start, end } = item.edit.range;
  const empty = start.line === end.line && start.character === end.character;
  const inserted = item.edit.newText === "" ? [] : item.edit.newText.split(/\r\n|\r|\n/);
  return {
    deleted: empty ? undefined : { start, end },
    insertAt: end,
    insertedLines: inserted,
    awayFromCursor: cursor.line < start.line || cursor.line > end.line,
  };
}

/** Is an answer still about the document as it is now? */
export function isCurrent(item: NextEditItem, documentVersion: number): boolean {
  const version = item.textDocument?.version;
  return version === null || version === undefined || version === documentVersion;
}

/** Where a server names what it offers beyond LSP, in its `initialize` result's `capabilities.experimental`. */
export type ExtensionKind = "requests" | "notifications";

/**
 * Whether the server names `method` among its `kind` (`capabilities.experimental.redraft`).
 * Methods beyond LSP go only to a server that names them: another server, or an older
 * Redraft, would answer a request with an error and drop a notification unread.
 */
export function serverOffers(experimental: unknown, kind: ExtensionKind, method: string): boolean {
  const redraft = typeof experimental === "object" && experimental !== null
    ? (experimental as Record<string, unknown>).redraft
    : undefined;
  const listed = typeof redraft === "object" && redraft !== null ? (redraft as Record<string, unknown>)[kind] : undefined;
  return Array.isArray(listed) && listed.includes(method);
}

export type ServerState = "starting" | "ready" | "no-model" | "stopped" | "disabled";

/** The status bar's text and tooltip. */
export function statusText(
  state: ServerState,
  lastLatencyMs: number | undefined,
  nextEditLine: number | undefined,
): { text: string; tooltip: string } {
  const latency = lastLatencyMs === undefined ? "" : ` ${Math.round(lastLatencyMs)} ms`;
  const labels: Record<ServerState, string> = {
    starting: "$(sync~spin) Redraft: starting",
    ready: `$(sparkle) Redraft${latency}`,
    "no-model": "$(warning) Redraft: no model",
    stopped: "$(error) Redraft: stopped",
    disabled: "$(circle-slash) Redraft: off",
  };
  let text = labels[state];
  if (state === "ready" && nextEditLine !== undefined) {
    text += ` · next edit: line ${nextEditLine + 1} (Tab)`;
  }
  const tooltips: Record<ServerState, string> = {
    starting: "Redraft: starting the server",
    ready: "Redraft: local suggestions on" + (latency ? ` — last answer in${latency}` : ""),
    "no-model": "Redraft: the server runs but its model could not be loaded (see the log)",
    stopped: "Redraft: the server stopped — run 'Redraft: Restart the server'",
    disabled: "Redraft: suggestions are turned off",
  };
  return { text, tooltip: tooltips[state] };
}

/** Calls `run` once `delayMs` have passed without another `schedule`. */
export class Debouncer {
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly run: () => void) {}

  schedule(delayMs: number): void {
    this.cancel();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run();
    }, delayMs);
  }

  cancel(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  get pending(): boolean {
    return this.timer !== undefined;
  }
}

/** A move within this long of a change to the document came from typing or an edit. */
export const TYPED_MOVE_MS = 500;

/** When each recently edited document last changed. Only the document whose cursor moves
 * counts: VS Code also reports changes to other documents (a visible Output panel as the
 * server logs, git's index copies), which say nothing about where this cursor came from. */
export class ChangeClock {
  static readonly CAPACITY = 16; // documents remembered; older ones changed long ago
  private readonly lastMs = new Map<string, number>();

  changed(uri: string, nowMs: number): void {
    this.lastMs.delete(uri); // re-inserted last: the map stays in order of change
    this.lastMs.set(uri, nowMs);
    if (this.lastMs.size > ChangeClock.CAPACITY) {
      this.lastMs.delete(this.lastMs.keys().next().value as string);
    }
  }

  msSinceChange(uri: string, nowMs: number): number {
    const last = this.lastMs.get(uri);
    return last === undefined ? Number.POSITIVE_INFINITY : nowMs - last;
  }
}

/** How long the cursor stays put before the server hears where (`redraft/cursor`). */
export const CURSOR_REST_MS = 150;

/** Whether a cursor move is one the server should hear of once the cursor rests: a single
 * empty selection (a caret, not a selection), not right after a change (typing moves the
 * cursor too, and a request for that place is on its way), in a language the server serves. */
export function announcesCursor(move: {
  enabled: boolean;
  carets: number;
  empty: boolean;
  msSinceChange: number;
  languageId: string;
  languages: string[];
}): boolean {
  return move.enabled && move.carets === 1 && move.empty && move.msSinceChange >= TYPED_MOVE_MS &&
    move.languages.includes(move.languageId);
}
