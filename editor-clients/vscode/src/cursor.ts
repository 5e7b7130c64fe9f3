// Where the cursor comes to rest after a click or the arrow keys, the server hears of it
// (`redraft/cursor`): it answers that place at once, so the context there is encoded before
// the first keystroke, which then costs what typing on costs.

import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";

import { announcesCursor, CURSOR_REST_MS, Debouncer } from "./logic";
import { readSettings } from "./settings";

export const CURSOR = "redraft/cursor";

export class CursorAnnouncer implements vscode.Disposable {
  private lastChangeMs = 0;
  private editor: vscode.TextEditor | undefined;
  private readonly debounce = new Debouncer(() => this.announce());

  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  onDocumentChanged(event: vscode.TextDocumentChangeEvent): void {
    if (event.contentChanges.length > 0) {
      this.lastChangeMs = Date.now();
    }
  }

  onSelectionChanged(event: vscode.TextEditorSelectionChangeEvent): void {
    this.debounce.cancel();
    const settings = readSettings();
    const move = {
      enabled: settings.announceCursor,
      carets: event.selections.length,
      empty: event.selections.every((selection) => selection.isEmpty),
      msSinceChange: Date.now() - this.lastChangeMs,
      languageId: event.textEditor.document.languageId,
      languages: settings.languages,
    };
    if (announcesCursor(move)) {
      this.editor = event.textEditor;
      this.debounce.schedule(CURSOR_REST_MS);
    }
  }

  private announce(): void {
    const client = this.client();
    const editor = this.editor;
    if (client === undefined || !client.isRunning() || editor === undefined ||
        vscode.window.activeTextEditor !== editor || Date.now() - this.lastChangeMs < CURSOR_REST_MS) {
      return;
    }
    const converter = client.code2ProtocolConverter;
    const position = editor.selection.active;
    client
      .sendNotification(CURSOR, {
        textDocument: converter.asTextDocumentIdentifier(editor.document),
        position: converter.asPosition(position),
      })
      .then(
        () => this.log.info(`${CURSOR}: Ln ${position.line + 1}, Col ${position.character + 1}`),
        (error: unknown) => this.log.warn(`${CURSOR} failed: ${String(error)}`),
      );
  }

  dispose(): void {
    this.debounce.cancel();
  }
}
